#include "CommonHessianProgram.h"
#include "CommonHessFitKernelSources.h"
#include "CommonTermLists.h"
#include "hf_core.h"
#include <cmath>
#include <cstdio>

std::string HessFit::defineText(double value) {
    char text[64];
    snprintf(text, sizeof text, "%.17g", value);
    return text;
}

std::string HessFit::defineText(int value) {
    return value < 0 ? "(" + std::to_string(value) + ")" : std::to_string(value);
}

std::string HessFit::hessianProgramSource() {
    return CommonHessFitKernelSources::hessianTermMath + CommonHessFitKernelSources::hessianCrossTerms +
           CommonHessFitKernelSources::hessianTermKernels + CommonHessFitKernelSources::hessianGatherKernels +
           CommonHessFitKernelSources::hessianReductionKernels;
}

std::map<std::string, std::string> HessFit::hessianProgramDefines(bool mixedPrecision, int reduceBlock) {
    const std::pair<const char*, int> ints[] = {
        {"HF_TERM_BOND", HF_TERM_BOND}, {"HF_TERM_ANGLE", HF_TERM_ANGLE}, {"HF_TERM_PERIODIC", HF_TERM_PERIODIC},
        {"HF_TERM_RB", HF_TERM_RB}, {"HF_TERM_HARMONIC_DIHEDRAL", HF_TERM_HARMONIC_DIHEDRAL},
        {"HF_TERM_PAIR", HF_TERM_PAIR}, {"HF_TERM_PAIR_COMBINED", HF_TERM_PAIR_COMBINED},
        {"HF_TERM_MM3_BOND", HF_TERM_MM3_BOND}, {"HF_TERM_MM3_ANGLE", HF_TERM_MM3_ANGLE},
        {"HF_TERM_MM3_PAIR", HF_TERM_MM3_PAIR}, {"HF_TERM_MM3_STRETCH_BEND", HF_TERM_MM3_STRETCH_BEND},
        {"HF_TERM_MM3_BEND_BEND", HF_TERM_MM3_BEND_BEND}, {"HF_TERM_MM3_TORSION_STRETCH", HF_TERM_MM3_TORSION_STRETCH},
        {"HF_TERM_MM3_PAIR_SWITCHED", HF_TERM_MM3_PAIR_SWITCHED}, {"HF_TERM_HBOND_10_12", HF_TERM_HBOND_10_12},
        {"HF_CROSS_COORDS", HF_MAX_CROSS_COORDS}, {"HF_CROSS_SLOTS", HF_MAX_CROSS_SLOTS},
        {"HF_TERM_PLAIN_PAIR", CommonTermLists::PlainPairKind}, {"HF_NO_SLOT", HF_NO_SLOT},
        {"HF_COMBINE_LORENTZ_BERTHELOT", HF_COMBINE_LORENTZ_BERTHELOT},
        {"HF_ATOMS", CommonTermLists::AtomsPerTerm}, {"HF_SLOTS", CommonTermLists::SlotsPerTerm},
        {"HF_FORCE_STRIDE", CommonTermLists::ForceStride}, {"HF_SCALARS", CommonTermLists::ScalarsPerTerm},
        {"HF_MODE_ENERGY_DERIVATIVES", ModeEnergyDerivatives}, {"HF_MODE_MOLECULE_WEIGHTS", ModeMoleculeWeights},
        {"HF_MODE_HESSIAN_CONTRACTION", ModeHessianContraction},
        {"HF_MODE_GRADIENT_CONTRACTION", ModeGradientContraction}, {"HF_REDUCE_BLOCK", reduceBlock},
        {"HF_BILINEAR_RUN", BilinearRun}};
    std::map<std::string, std::string> defines;
    for (const auto& v : ints)
        defines[v.first] = defineText(v.second);
    // the core's constants, every digit
    defines["HF_ONE_4PI_EPS0"] = defineText(HF_ONE_4PI_EPS0);
    defines["HF_MIN_SINE"] = defineText(HF_MIN_SINE);
    defines["HF_TWO_PI"] = defineText(HF_TWO_PI);
    defines["HF_PI"] = defineText(HF_PI);
    defines["HF_MM3_BOND_CUBIC"] = defineText(HF_MM3_BOND_CUBIC);
    defines["HF_MM3_BOND_QUARTIC"] = defineText(HF_MM3_BOND_QUARTIC);
    defines["HF_MM3_ANGLE_CUBIC"] = defineText(HF_MM3_ANGLE_CUBIC);
    defines["HF_MM3_ANGLE_QUARTIC"] = defineText(HF_MM3_ANGLE_QUARTIC);
    defines["HF_MM3_ANGLE_QUINTIC"] = defineText(HF_MM3_ANGLE_QUINTIC);
    defines["HF_MM3_ANGLE_SEXTIC"] = defineText(HF_MM3_ANGLE_SEXTIC);
    defines["HF_MM3_BUCKINGHAM_A"] = defineText(HF_MM3_BUCKINGHAM_A);
    defines["HF_MM3_BUCKINGHAM_B"] = defineText(HF_MM3_BUCKINGHAM_B);
    defines["HF_MM3_BUCKINGHAM_C"] = defineText(HF_MM3_BUCKINGHAM_C);
    defines["HF_MM3_BUCKINGHAM_WALL"] = defineText(HF_MM3_BUCKINGHAM_WALL);
    defines["HF_MM3_BUCKINGHAM_WALL_M"] = defineText(HF_MM3_BUCKINGHAM_WALL_M);
    defines["HF_MM3_SWITCH_ON"] = defineText(HF_MM3_SWITCH_ON);
    defines["HF_MM3_SWITCH_OFF"] = defineText(HF_MM3_SWITCH_OFF);
    if (mixedPrecision)
        defines["HF_POSITION_CORRECTION"] = "1";
    return defines;
}
