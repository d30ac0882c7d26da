/* Unit conversions, derived constants and element data of the fitting layer (the status texts: tests/core/test_status.c).
 * Reference numbers were computed independently (40-digit decimal arithmetic from the CODATA
 * 2018 values), not with the library's own formulas. */
#include "hessfit_fitting.h"
#include "test_util.h"

#include <string.h>

#define REL 1e-13 /* relative tolerance for conversions that are exact products of the inputs */

static void check_round_trip(double forward, double backward, const char *what)
{
    const double xs[] = {1.0, -3.25, 1e-7, 6.02e23, 123456.789};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        CHECK_CLOSE(xs[i] * forward * backward, xs[i], 4e-16, xs[i], what);
}

static void test_length_energy_angle(void)
{
    CHECK(HESSFIT_NM_TO_ANGSTROM == 10.0, "nm -> A");
    CHECK(HESSFIT_ANGSTROM_TO_NM == 0.1, "A -> nm");
    CHECK(HESSFIT_KCAL_TO_KJ == 4.184, "thermochemical calorie");
    CHECK_CLOSE(HESSFIT_BOHR_TO_ANGSTROM, 0.529177210903, 1e-15, 1.0, "Bohr -> A");
    CHECK_CLOSE(HESSFIT_BOHR_TO_NM, 0.0529177210903, 1e-15, 0.1, "Bohr -> nm");
    CHECK_CLOSE(HESSFIT_CODATA_BOHR_M * 1e10, HESSFIT_BOHR_TO_ANGSTROM, REL, 1.0, "Bohr macro vs CODATA a_0");
    CHECK_CLOSE(HESSFIT_ANGSTROM_TO_BOHR, 1.8897261246257702, REL, 1.9, "A -> Bohr");
    CHECK_CLOSE(HESSFIT_HARTREE_TO_KJ_PER_MOL, 2625.4996394799, 1e-15, 2625.0, "Hartree -> kJ/mol");
    CHECK_CLOSE(hessfit_hartree_to_kj_per_mol_codata(), 2625.4996394798254, REL, 2625.0, "E_h N_A from CODATA");
    CHECK_CLOSE(HESSFIT_HARTREE_TO_KCAL_PER_MOL, 627.50947406307361, REL, 627.5, "Hartree -> kcal/mol");
    CHECK_CLOSE(180.0 * HESSFIT_DEG_TO_RAD, 3.14159265358979323846, 1e-16, 3.2, "180 deg");
    CHECK_CLOSE(HESSFIT_RAD_TO_DEG, 57.295779513082321, REL, 57.3, "1 rad");
    CHECK_CLOSE(109.5 * HESSFIT_DEG_TO_RAD, 1.9111355309337909, REL, 1.9, "109.5 deg");

    check_round_trip(HESSFIT_NM_TO_ANGSTROM, HESSFIT_ANGSTROM_TO_NM, "nm <-> A");
    check_round_trip(HESSFIT_BOHR_TO_ANGSTROM, HESSFIT_ANGSTROM_TO_BOHR, "Bohr <-> A");
    check_round_trip(HESSFIT_BOHR_TO_NM, HESSFIT_NM_TO_BOHR, "Bohr <-> nm");
    check_round_trip(HESSFIT_KCAL_TO_KJ, HESSFIT_KJ_TO_KCAL, "kcal <-> kJ");
    check_round_trip(HESSFIT_HARTREE_TO_KJ_PER_MOL, HESSFIT_KJ_PER_MOL_TO_HARTREE, "Hartree <-> kJ/mol");
    check_round_trip(HESSFIT_DEG_TO_RAD, HESSFIT_RAD_TO_DEG, "deg <-> rad");
}

static void test_force_constants(void)
{
    CHECK_CLOSE(HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2, 937582.94134668687, REL, 937582.9,
                "Hartree/Bohr^2 -> kJ/mol/nm^2");
    CHECK_CLOSE(HESSFIT_HARTREE_PER_BOHR2_TO_KCAL_PER_MOL_PER_A2, 2240.8770108668424, REL, 2240.9,
                "Hartree/Bohr^2 -> kcal/mol/A^2");
    CHECK_CLOSE(HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2, 418.4, REL, 418.4, "kcal/mol/A^2 -> kJ/mol/nm^2");
    CHECK_CLOSE(HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2, 4.184, REL, 4.184, "kcal/mol/rad^2 -> kJ/mol/rad^2");
    CHECK_CLOSE(HESSFIT_KJ_PER_MOL_PER_NM_TO_KCAL_PER_MOL_PER_A, 1.0 / 41.84, REL, 0.024, "kJ/mol/nm -> kcal/mol/A");
    /* OpenMM 8's ONE_4PI_EPS0 (SimTKOpenMMRealType.h), as it prints with %.17g */
    CHECK_CLOSE(HESSFIT_ONE_4PI_EPS0, 138.93545764438198, 1e-15, 138.9, "ONE_4PI_EPS0");
    check_round_trip(HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2, HESSFIT_KJ_PER_MOL_PER_NM2_TO_HARTREE_PER_BOHR2,
                     "Hartree/Bohr^2 <-> kJ/mol/nm^2");
    check_round_trip(HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2, HESSFIT_KJ_PER_MOL_PER_NM2_TO_KCAL_PER_MOL_PER_A2,
                     "kcal/mol/A^2 <-> kJ/mol/nm^2");
    check_round_trip(HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2, HESSFIT_KJ_PER_MOL_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2,
                     "kcal/mol/rad^2 <-> kJ/mol/rad^2");
    /* a q2mm C-F bond constant: 270.609 kcal/mol/A^2 = 113222.8 kJ/mol/nm^2 */
    CHECK_CLOSE(270.60918930118333 * HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2, 113222.8848036151, REL, 1e5,
                "q2mm C-F constant in kJ/mol/nm^2");

    /* 1 mdyn/A = 100 N/m -> 143.9326 kcal/mol/A^2; MM3's factors are half of it (E = k/2 x^2 in MM3) */
    CHECK_CLOSE(hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2(), 143.93261854684512, REL, 143.9, "mdyn/A");
    CHECK_CLOSE(HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, 71.96631, 0.0, 72.0, "MM3 stretch factor");
    CHECK_CLOSE(HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2, 0.5 * hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2(), 1e-7,
                72.0, "MM3 stretch factor is half the mdyn/A conversion");
    CHECK_CLOSE(HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, 71.94, 0.0, 72.0, "MM3 bend factor");
    CHECK_CLOSE(HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2, 0.5 * hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2(),
                4e-4, 72.0, "MM3 bend factor (historical 71.94) within 0.04% of the exact half conversion");
}

static void test_frequency_factors(void)
{
    const double k_au = hessfit_frequency_factor_hartree_bohr2_amu();
    const double k_kj = hessfit_frequency_factor_kj_mol_nm2_amu();
    CHECK_CLOSE(k_au, 5140.4871437158268, REL, 5140.0, "Hartree/Bohr^2/amu frequency factor (CODATA 2018)");
    CHECK(fabs(k_au - HESSFIT_Q2MM_FREQUENCY_FACTOR) < 5e-5, "factor %.10f does not round to q2mm's 5140.4871", k_au);
    printf("frequency factor Hartree/Bohr^2/amu: %.10f (q2mm: 5140.4871)\n", k_au);
    CHECK_CLOSE(k_kj, 5.3088374597934549, REL, 5.3, "kJ/mol/nm^2/amu frequency factor");
    printf("frequency factor kJ/mol/nm^2/amu:    %.12f\n", k_kj);
    /* both describe the same physics: converting the Hessian first must not change a frequency */
    CHECK_CLOSE(k_au, k_kj * sqrt(HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2), 1e-12, 5140.0,
                "factors consistent with the Hessian conversion");
    /* a textbook number: a 1 mdyn/A spring on a reduced mass of 1 amu vibrates at 1302.79 cm^-1;
     * 1 mdyn/A = 100 N/m = 60221.4076 kJ/mol/nm^2 */
    CHECK_CLOSE(hessfit_eigenvalue_to_cm1(60221.4076 / 1.0, k_kj), 1302.7913908460358, 1e-12, 1302.8,
                "1 mdyn/A on 1 amu");
    CHECK_CLOSE(hessfit_frequency_factor_cm1(1.0, 1.0, 1.0), 1.0 / (2.0 * HESSFIT_PI * 2.99792458e10), REL, 5.3e-12,
                "SI factor");
    CHECK(isnan(hessfit_frequency_factor_cm1(-1.0, 1.0, 1.0)), "negative unit gives NaN");

    /* sign convention: negative eigenvalues give negative ("imaginary") frequencies */
    CHECK(hessfit_eigenvalue_to_cm1(-4.0, 2.0) == -4.0, "negative eigenvalue");
    CHECK(hessfit_eigenvalue_to_cm1(9.0, 2.0) == 6.0, "positive eigenvalue");
    CHECK(hessfit_eigenvalue_to_cm1(0.0, 2.0) == 0.0, "zero eigenvalue");
    {
        const double fs[] = {-461.7175680732779597, 3145.087926775190226, 1.5e-3, -20.3};
        for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
            CHECK_CLOSE(hessfit_eigenvalue_to_cm1(hessfit_cm1_to_eigenvalue(fs[i], k_au), k_au), fs[i], 1e-14, fs[i],
                        "frequency <-> eigenvalue round trip");
    }
}

static void test_elements(void)
{
    struct { const char *symbol; int z; double mono, average; } known[] = {
        {"H", 1, 1.00782503223, 1.008},      {"C", 6, 12.0, 12.011},
        {"N", 7, 14.00307400443, 14.007},    {"O", 8, 15.99491461957, 15.999},
        {"F", 9, 18.99840316273, 18.998403163}, {"P", 15, 30.97376199842, 30.973761998},
        {"S", 16, 31.9720711744, 32.06},     {"Cl", 17, 34.968852682, 35.45},
        {"Br", 35, 78.9183376, 79.904},      {"Kr", 36, 83.9114977282, 83.798},
        {"Ru", 44, 101.9043441, 101.07},     {"Rh", 45, 102.905498, 102.90550},
        {"Pd", 46, 105.9034804, 106.42},     {"I", 53, 126.9044719, 126.90447},
        {"Ir", 77, 192.9629216, 192.217},    {"Pt", 78, 194.9647917, 195.084},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        CHECK(hessfit_element_atomic_number(known[i].symbol) == known[i].z, "Z of %s", known[i].symbol);
        CHECK(strcmp(hessfit_element_symbol(known[i].z), known[i].symbol) == 0, "symbol of %d", known[i].z);
        CHECK(hessfit_element_monoisotopic_mass(known[i].z) == known[i].mono, "monoisotopic mass of %s", known[i].symbol);
        CHECK(hessfit_element_average_mass(known[i].z) == known[i].average, "average mass of %s", known[i].symbol);
    }
    /* every element H..Kr has data, consistent symbols and masses within 1.5 amu of each other */
    for (int z = 1; z <= 36; z++) {
        const char *s = hessfit_element_symbol(z);
        double mono = hessfit_element_mass(z, HESSFIT_MASS_MONOISOTOPIC), avg = hessfit_element_mass(z, HESSFIT_MASS_AVERAGE);
        CHECK(s != NULL, "element %d has no symbol", z);
        CHECK(hessfit_element_atomic_number(s) == z, "round trip of %s", s);
        CHECK(mono > z && avg > z && fabs(mono - avg) < 1.5, "masses of %s: %g %g", s, mono, avg);
    }
    CHECK(hessfit_element_atomic_number("CL") == 17 && hessfit_element_atomic_number("cl") == 17, "case-insensitive");
    CHECK(hessfit_element_atomic_number("Xx") == 0 && hessfit_element_atomic_number("") == 0 &&
          hessfit_element_atomic_number("C1") == 0 && hessfit_element_atomic_number(NULL) == 0, "unknown symbols");
    CHECK(hessfit_element_symbol(0) == NULL && hessfit_element_symbol(43) == NULL && hessfit_element_symbol(119) == NULL,
          "no data for Z = 0, 43 (Tc), 119");
    CHECK(hessfit_element_monoisotopic_mass(0) == 0.0, "mass of Z = 0");
    {
        int z = -1;
        CHECK(hessfit_element_lookup("Xx", &z) == HESSFIT_ERROR_UNKNOWN_ELEMENT && z == -1, "lookup of Xx");
        CHECK(strstr(hessfit_last_error(), "'Xx'") != NULL, "message names the symbol: %s", hessfit_last_error());
        CHECK(hessfit_element_lookup("Rh", &z) == HESSFIT_SUCCESS && z == 45, "lookup of Rh");
    }
    {
        const int zs[] = {6, 9, 1, 0};
        double m[4];
        CHECK(hessfit_element_masses(zs, 3, HESSFIT_MASS_MONOISOTOPIC, m) == HESSFIT_SUCCESS && m[1] == 18.99840316273, "masses");
        CHECK(hessfit_element_masses(zs, 4, HESSFIT_MASS_AVERAGE, m) == HESSFIT_ERROR_UNKNOWN_ELEMENT, "masses with Z = 0");
        CHECK(strstr(hessfit_last_error(), "atom 3") != NULL, "message names the atom: %s", hessfit_last_error());
    }
}

int main(void)
{
    test_length_energy_angle();
    test_force_constants();
    test_frequency_factors();
    test_elements();
    printf("test_units: all checks passed\n");
    return 0;
}
