#include "hessfit_units.h"

#include <math.h>

double hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2(void)
{
    /* 1 mdyn/A = 1e-8 N / 1e-10 m = 100 J/m^2 per molecule = 100e-20 J/A^2 per molecule */
    const double joule_per_a2 = 1e-8 / 1e-10 * 1e-20;
    return joule_per_a2 * HESSFIT_CODATA_AVOGADRO / (HESSFIT_KCAL_TO_KJ * 1000.0);
}

double hessfit_hartree_to_kj_per_mol_codata(void)
{
    return HESSFIT_CODATA_HARTREE_J * HESSFIT_CODATA_AVOGADRO / 1000.0;
}

double hessfit_frequency_factor_cm1(double energy_unit_j, double length_unit_m, double mass_unit_kg)
{
    /* omega = sqrt(l E / (L^2 M)) rad/s; nu~ = omega / (2 pi c), c in cm/s */
    const double c_cm_per_s = HESSFIT_CODATA_C_M_PER_S * 100.0;
    if (!(energy_unit_j > 0.0) || !(length_unit_m > 0.0) || !(mass_unit_kg > 0.0))
        return NAN;
    return sqrt(energy_unit_j / (length_unit_m * length_unit_m * mass_unit_kg)) / (2.0 * HESSFIT_PI * c_cm_per_s);
}

double hessfit_frequency_factor_hartree_bohr2_amu(void)
{
    return hessfit_frequency_factor_cm1(HESSFIT_CODATA_HARTREE_J, HESSFIT_CODATA_BOHR_M, HESSFIT_CODATA_AMU_KG);
}

double hessfit_frequency_factor_kj_mol_nm2_amu(void)
{
    return hessfit_frequency_factor_cm1(1000.0 / HESSFIT_CODATA_AVOGADRO, 1e-9, HESSFIT_CODATA_AMU_KG);
}

double hessfit_eigenvalue_to_cm1(double eigenvalue, double factor)
{
    double f = factor * sqrt(fabs(eigenvalue));
    return eigenvalue < 0.0 ? -f : f;
}

double hessfit_cm1_to_eigenvalue(double frequency_cm1, double factor)
{
    double r = frequency_cm1 / factor;
    return frequency_cm1 < 0.0 ? -r * r : r * r;
}
