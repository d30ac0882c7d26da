#include "CommonHessianProgram.h"
#include "CommonHessFitKernelSources.h"
#include "hf_core.h"
#include <cstdio>

std::string HessFit::hessianProgramSource() {
    return CommonHessFitKernelSources::hessianTermMath + CommonHessFitKernelSources::hessianTermKernels +
           CommonHessFitKernelSources::hessianGatherKernels;
}

std::map<std::string, std::string> HessFit::hessianProgramDefines(bool mixedPrecision, int reduceBlock) {
    std::map<std::string, std::string> defines;
    char text[64];
    snprintf(text, sizeof text, "%.17g", HF_ONE_4PI_EPS0);  // the Reference platform's constant, every digit
    defines["HF_ONE_4PI_EPS0"] = text;
    snprintf(text, sizeof text, "%d", reduceBlock);
    defines["HF_REDUCE_BLOCK"] = text;
    if (mixedPrecision)
        defines["HF_POSITION_CORRECTION"] = "1";
    return defines;
}
