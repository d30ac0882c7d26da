/* chooseBatchedEigensolver (CommonBatchedEigensolver.h). */
#include "CommonBatchedEigensolver.h"
#include "CommonHostEigensolver.h"
#include "HessianForceException.h"
#include <cstdlib>
#include <string>

using namespace HessFit;
using namespace OpenMM;

CommonBatchedEigensolver* HessFit::chooseBatchedEigensolver(ComputeContext& cc, int numMatrices,
                                                            CommonBatchedEigensolverFactory makeLibrary) {
    const char* value = std::getenv("HESSFIT_GPU_EIGENSOLVER");
    const std::string choice = value != nullptr && value[0] != '\0' ? value : "auto";
    if (choice == "jacobi")
        return nullptr;
    if (choice == "host")
        return new CommonHostEigensolver(cc);
    if (choice == "library") {
        if (makeLibrary == nullptr)
            throw HessianForceException(HessianForceException::Unsupported,
                                        "HessianForce: HESSFIT_GPU_EIGENSOLVER = library, but this platform has no "
                                        "library eigensolver (use auto, host or jacobi)");
        return makeLibrary(cc);
    }
    if (choice == "auto")
        return makeLibrary != nullptr && numMatrices > HostEigensolverMaxMatrices ? makeLibrary(cc)
                                                                                 : new CommonHostEigensolver(cc);
    throw HessianForceException(HessianForceException::Unsupported,
                                "HessianForce: HESSFIT_GPU_EIGENSOLVER = '" + choice +
                                    "': use auto (the default), host, jacobi or library");
}
