#ifndef HESSFIT_COMMON_REDUCTION_LISTS_H_
#define HESSFIT_COMMON_REDUCTION_LISTS_H_
/*
 * What the GPU kernels of the reduced particles (hessianReductionKernels.cc) see of the map
 * x' = M x (x'_h = x_p + f (x_h - x_p) per reduced particle h with partner p; core/src/hf_reduction.c
 * has the math), built on the host from the flat model. Empty (numReduced = 0) when the force has
 * no reduced particles: the kernels are then never launched.
 */
#include "hf_core.h"
#include <vector>

namespace HessFit {

struct CommonReductionLists {
    int numReduced = 0;
    /* per reduced particle r, grouped by molecule as in the model */
    std::vector<int> particle, partner;         /* System particles */
    std::vector<int> localParticle, localPartner; /* 3 x their index within the molecule */
    std::vector<double> factor;
    std::vector<int> moleculeStart;             /* per molecule (+1): its reduced particles */
    /* per System particle */
    std::vector<int> atomReduced;               /* its r, or -1 */
    std::vector<int> partnerStart, partnerEntries; /* the r whose partner it is (compressed rows) */
    std::vector<int> atomMolecule, atomLocalRow; /* its molecule, 3 x its index within it */
    std::vector<int> atomTouched;               /* 1 if it is a reduced particle or a partner */

    /** Fill everything from the flat model (a validated force). */
    void build(const hf_model& model);
};

} // namespace HessFit

#endif
