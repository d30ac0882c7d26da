/* Covalent radii of Cordero et al., Dalton Trans. 2008, 2832 (see hessfit_radii.h). */
#include "hessfit_radii.h"

/* Angstrom, indexed by atomic number (index 0 unused). */
static const double cordero_2008[HESSFIT_COVALENT_RADII_MAX_Z + 1] = {
    0.0,
    /* H  He */ 0.31, 0.28,
    /* Li Be B C N O F Ne */ 1.28, 0.96, 0.84, 0.76, 0.71, 0.66, 0.57, 0.58,
    /* Na Mg Al Si P S Cl Ar */ 1.66, 1.41, 1.21, 1.11, 1.07, 1.05, 1.02, 1.06,
    /* K Ca */ 2.03, 1.76,
    /* Sc Ti V Cr Mn Fe Co Ni Cu Zn */ 1.70, 1.60, 1.53, 1.39, 1.39, 1.32, 1.26, 1.24, 1.32, 1.22,
    /* Ga Ge As Se Br Kr */ 1.22, 1.20, 1.19, 1.20, 1.20, 1.16,
    /* Rb Sr */ 2.20, 1.95,
    /* Y Zr Nb Mo Tc Ru Rh Pd Ag Cd */ 1.90, 1.75, 1.64, 1.54, 1.47, 1.46, 1.42, 1.39, 1.45, 1.44,
    /* In Sn Sb Te I Xe */ 1.42, 1.39, 1.39, 1.38, 1.39, 1.40,
    /* Cs Ba */ 2.44, 2.15,
    /* La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu */
    2.07, 2.04, 2.03, 2.01, 1.99, 1.98, 1.98, 1.96, 1.94, 1.92, 1.92, 1.89, 1.90, 1.87, 1.87,
    /* Hf Ta W Re Os Ir Pt Au Hg */ 1.75, 1.70, 1.62, 1.51, 1.44, 1.41, 1.36, 1.36, 1.32,
    /* Tl Pb Bi Po At Rn */ 1.45, 1.46, 1.48, 1.40, 1.50, 1.50,
    /* Fr Ra */ 2.60, 2.21,
    /* Ac Th Pa U Np Pu Am Cm */ 2.15, 2.06, 2.00, 1.96, 1.90, 1.87, 1.80, 1.69,
};

double hessfit_covalent_radius(int atomic_number)
{
    if (atomic_number < 1 || atomic_number > HESSFIT_COVALENT_RADII_MAX_Z)
        return 0.0;
    return cordero_2008[atomic_number];
}
