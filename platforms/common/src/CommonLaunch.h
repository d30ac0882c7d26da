#ifndef HESSFIT_COMMON_LAUNCH_H_
#define HESSFIT_COMMON_LAUNCH_H_
/* A compiled kernel whose arguments are added on its first launch and replaced on later ones
 * (CommonLaunch), and the call chain that sets them in order (CommonArguments):
 *     CommonArguments{launch}(n)(array)(value); launch.kernel->execute(n); */
#include "openmm/common/ArrayInterface.h"
#include "openmm/common/ComputeKernel.h"
#include <type_traits>

namespace HessFit {

struct CommonLaunch {
    OpenMM::ComputeKernel kernel;
    bool bound = false;
};

class CommonArguments {
public:
    explicit CommonArguments(CommonLaunch& launch) : kernel(*launch.kernel), add(!launch.bound) {
        launch.bound = true;
    }
    CommonArguments& operator()(OpenMM::ArrayInterface& array) {
        if (add)
            kernel.addArg(array);
        else
            kernel.setArg(index, array);
        index++;
        return *this;
    }
    template <class T, class = typename std::enable_if<std::is_arithmetic<T>::value>::type>
    CommonArguments& operator()(T value) {
        if (add)
            kernel.addArg(value);
        else
            kernel.setArg(index, value);
        index++;
        return *this;
    }
private:
    OpenMM::ComputeKernelImpl& kernel;
    bool add;
    int index = 0;
};

} // namespace HessFit

#endif
