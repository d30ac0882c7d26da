#ifndef HESSFIT_UNITS_H_
#define HESSFIT_UNITS_H_
/*
 * Every unit conversion of hessfit, in one place.
 *
 * Naming: HF_<FROM>_TO_<TO> multiplies a value in unit FROM to give it in unit TO, e.g.
 *     k_kj_per_mol_per_nm2 = k_kcal_per_mol_per_a2 * HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2;
 * A = Angstrom, NM = nanometre, BOHR = Bohr radius, KJ/KCAL are per mole where the name says
 * PER_MOL (the bare HESSFIT_KCAL_TO_KJ is the thermochemical calorie, 4.184, for any quantity).
 *
 * Units of the project: OpenMM's (nm, rad, kJ/mol, amu; Hessians kJ/mol/nm^2) inside the plugin;
 * QM Hessians arrive in Hartree/Bohr^2; q2mm's canonical parameter units are kcal/mol, Angstrom,
 * degrees with E = k (x - x0)^2 (no 1/2, the same convention as HessianForce), so only the
 * energy and length units change between q2mm and hessfit, never a factor 2.
 *
 * Fundamental constants are CODATA 2018 (exact where the SI fixes them). Factors that follow
 * from them (the frequency factors, the full mdyn conversions) are functions that compute them
 * from those constants, so the derivation is in the code.
 */
#ifdef __cplusplus
extern "C" {
#endif

/* ---- CODATA 2018 ------------------------------------------------------------------------ */
#define HESSFIT_CODATA_HARTREE_J       4.3597447222071e-18 /* Hartree energy E_h, J */
#define HESSFIT_CODATA_BOHR_M          5.29177210903e-11   /* Bohr radius a_0, m */
#define HESSFIT_CODATA_AMU_KG          1.66053906660e-27   /* atomic mass constant m_u, kg */
#define HESSFIT_CODATA_C_M_PER_S       299792458.0         /* speed of light, m/s (exact) */
#define HESSFIT_CODATA_AVOGADRO        6.02214076e23       /* N_A, 1/mol (exact) */
#define HESSFIT_PI                     3.14159265358979323846

/* ---- length ------------------------------------------------------------------------------ */
#define HESSFIT_NM_TO_ANGSTROM         10.0
#define HESSFIT_ANGSTROM_TO_NM         0.1
#define HESSFIT_BOHR_TO_ANGSTROM       0.529177210903
#define HESSFIT_ANGSTROM_TO_BOHR       (1.0 / HESSFIT_BOHR_TO_ANGSTROM)
#define HESSFIT_BOHR_TO_NM             0.0529177210903
#define HESSFIT_NM_TO_BOHR             (1.0 / HESSFIT_BOHR_TO_NM)

/* ---- energy ------------------------------------------------------------------------------ */
#define HESSFIT_KCAL_TO_KJ             4.184                /* thermochemical calorie, exact */
#define HESSFIT_KJ_TO_KCAL             (1.0 / HESSFIT_KCAL_TO_KJ)
#define HESSFIT_HARTREE_TO_KJ_PER_MOL  2625.4996394799      /* E_h * N_A / 1000 */
#define HESSFIT_KJ_PER_MOL_TO_HARTREE  (1.0 / HESSFIT_HARTREE_TO_KJ_PER_MOL)
#define HESSFIT_HARTREE_TO_KCAL_PER_MOL (HESSFIT_HARTREE_TO_KJ_PER_MOL / HESSFIT_KCAL_TO_KJ)

/* ---- angle ------------------------------------------------------------------------------- */
#define HESSFIT_DEG_TO_RAD             (HESSFIT_PI / 180.0)
#define HESSFIT_RAD_TO_DEG             (180.0 / HESSFIT_PI)

/* ---- force constants and Hessians --------------------------------------------------------- */
/* Hartree/Bohr^2 <-> kJ/mol/nm^2 (QM Hessian -> OpenMM Hessian): about 937582.9 */
#define HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2 \
    (HESSFIT_HARTREE_TO_KJ_PER_MOL / (HESSFIT_BOHR_TO_NM * HESSFIT_BOHR_TO_NM))
#define HESSFIT_KJ_PER_MOL_PER_NM2_TO_HARTREE_PER_BOHR2 \
    (1.0 / HESSFIT_HARTREE_PER_BOHR2_TO_KJ_PER_MOL_PER_NM2)
/* Hartree/Bohr^2 -> kcal/mol/A^2 (about 2240.877) */
#define HESSFIT_HARTREE_PER_BOHR2_TO_KCAL_PER_MOL_PER_A2 \
    (HESSFIT_HARTREE_TO_KCAL_PER_MOL / (HESSFIT_BOHR_TO_ANGSTROM * HESSFIT_BOHR_TO_ANGSTROM))
/* q2mm bond constants (kcal/mol/A^2) <-> HessianForce bond constants (kJ/mol/nm^2): 418.4 */
#define HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2 (HESSFIT_KCAL_TO_KJ * 100.0)
#define HESSFIT_KJ_PER_MOL_PER_NM2_TO_KCAL_PER_MOL_PER_A2 (1.0 / HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2)
/* Coulomb's constant of HessianForce's charge terms, kJ nm / (mol e^2): OpenMM's ONE_4PI_EPS0 (the
 * plugin's HF_ONE_4PI_EPS0, the same expression), 138.935457... */
#define HESSFIT_ONE_4PI_EPS0 \
    (1.0 / (4.0 * HESSFIT_PI * (1e-6 * 8.8541878128e-12 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23))))
/* forces: kJ/mol/nm (HessianForce) -> kcal/mol/A */
#define HESSFIT_KJ_PER_MOL_PER_NM_TO_KCAL_PER_MOL_PER_A (HESSFIT_KJ_TO_KCAL * HESSFIT_ANGSTROM_TO_NM)
/* q2mm angle constants (kcal/mol/rad^2) <-> HessianForce angle constants (kJ/mol/rad^2) */
#define HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2 HESSFIT_KCAL_TO_KJ
#define HESSFIT_KJ_PER_MOL_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2 HESSFIT_KJ_TO_KCAL

/* MM3 (MacroModel .fld) force constants -> q2mm/HessianForce convention E = k (x - x0)^2, with
 * the MM3 program's own constants. An MM3 constant is a spring constant of E = k/2 (x - x0)^2,
 * so each factor is half the full unit conversion (see hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2):
 * 71.96631 for stretches (half of 143.9326) and MM3's historical 71.94 for bends. */
#define HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2          71.96631
#define HESSFIT_MM3_MDYN_A_PER_RAD2_TO_KCAL_PER_MOL_PER_RAD2   71.94
/* An MM3 stretch-bend constant (E = F_SB k_sb (dr_1 + dr_2) dtheta, k_sb in mdyn/rad, no 1/2) in
 * kcal/mol/A/rad (q2mm's unit for it): 1 mdyn A = 143.93262 kcal/mol (the stretch's 71.96631,
 * doubled). hessfit keeps k_sb in mdyn/rad (hessfit_forcefield.h); q2mm's bounds convert. */
#define HESSFIT_MM3_MDYN_PER_RAD_TO_KCAL_PER_MOL_PER_A_PER_RAD (2.0 * HESSFIT_MM3_MDYN_PER_A_TO_KCAL_PER_MOL_PER_A2)

/** The full conversion 1 mdyn/A = 100 N/m -> kcal/mol/A^2 (and, the same number, 1 mdyn*A/rad^2
 * -> kcal/mol/rad^2), from N_A: about 143.9325. No factor 1/2 here. */
double hessfit_mdyn_per_angstrom_to_kcal_per_mol_per_a2(void);

/* Hartree/Bohr^2 -> mdyn/A (1 mdyn/A = 100 N/m): about 15.5689310 (q2mm rounds it to 15.569141). */
#define HESSFIT_HARTREE_PER_BOHR2_TO_MDYN_PER_A \
    (HESSFIT_CODATA_HARTREE_J / (HESSFIT_CODATA_BOHR_M * HESSFIT_CODATA_BOHR_M) / 100.0)
/* Hartree -> mdyn*A (1 mdyn*A = 1e-18 J), e.g. Hartree/rad^2 -> mdyn*A/rad^2: about 4.3597447. */
#define HESSFIT_HARTREE_TO_MDYN_A (HESSFIT_CODATA_HARTREE_J * 1.0e18)

/** E_h * N_A / 1000 from the CODATA constants (checks HESSFIT_HARTREE_TO_KJ_PER_MOL). */
double hessfit_hartree_to_kj_per_mol_codata(void);

/* ---- vibrational frequencies -------------------------------------------------------------- */
/**
 * For an eigenvalue l of a mass-weighted Hessian H_ij / sqrt(m_i m_j), the harmonic frequency
 * in wavenumbers is
 *     nu [cm^-1] = sign(l) * F * sqrt(|l|),   F = sqrt(E / (L^2 M)) / (2 pi c [cm/s])
 * where E, L, M are the energy (J per molecule), length (m) and mass (kg) units of H and m;
 * negative eigenvalues give "imaginary" frequencies printed as negative numbers.
 */
double hessfit_frequency_factor_cm1(double energy_unit_j, double length_unit_m, double mass_unit_kg);
/** Hartree/Bohr^2 Hessian, masses in amu: 5140.48714... (q2mm prints 5140.4871) */
double hessfit_frequency_factor_hartree_bohr2_amu(void);
/** kJ/mol/nm^2 Hessian (OpenMM), masses in amu: 5.30883746... */
double hessfit_frequency_factor_kj_mol_nm2_amu(void);
/* The rounded factor q2mm uses, for comparisons only. */
#define HESSFIT_Q2MM_FREQUENCY_FACTOR  5140.4871

/** sign(l) * factor * sqrt(|l|), and its inverse sign(nu) * (nu / factor)^2. */
double hessfit_eigenvalue_to_cm1(double eigenvalue, double factor);
double hessfit_cm1_to_eigenvalue(double frequency_cm1, double factor);

/* ---- van der Waals radii ------------------------------------------------------------------- */
/* 2^(-1/6): a Lennard-Jones pair 4 eps ((sigma/r)^12 - (sigma/r)^6) has its minimum at
 * r_min = 2^(1/6) sigma, so sigma = r_min * HESSFIT_LJ_RMIN_TO_SIGMA. */
#define HESSFIT_LJ_RMIN_TO_SIGMA 0.89089871814033930
/* A vdW radius R* (MM3 .fld and AMBER NONB: half the minimum distance of a like pair, Angstrom)
 * -> the LJ sigma (nm) of one particle: sigma = 2 R* / 2^(1/6), so that Lorentz-Berthelot
 * sigma_ij = (sigma_i + sigma_j) / 2 puts the pair's minimum at R*_i + R*_j. */
#define HESSFIT_RSTAR_A_TO_LJ_SIGMA_NM (2.0 * HESSFIT_LJ_RMIN_TO_SIGMA * HESSFIT_ANGSTROM_TO_NM)

#ifdef __cplusplus
}
#endif
#endif
