#ifndef HESSFIT_ELEMENTS_H_
#define HESSFIT_ELEMENTS_H_
/*
 * Element data: symbols, atomic numbers and masses (amu) for H..Xe (without Tc), Cs, Ba and
 * Hf..Hg.
 *
 * Monoisotopic mass = the mass of the most abundant isotope (NIST "Atomic Weights and Isotopic
 * Compositions", AME-based values), which is what QM programs (Psi4, Gaussian, Jaguar) use for
 * frequencies; average mass = IUPAC/CIAAW conventional standard atomic weight (2013). QM
 * frequencies are reproduced only with monoisotopic masses (average masses shift them by about
 * 1 cm^-1 for organic molecules).
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hessfit_mass_kind { HESSFIT_MASS_MONOISOTOPIC = 0, HESSFIT_MASS_AVERAGE = 1 } hessfit_mass_kind;

#define HESSFIT_MAX_ATOMIC_NUMBER 118

/** Atomic number of a symbol ("C", "Cl", case-insensitive: "CL" and "cl" too); 0 if the symbol is
 * not one with data here. */
int hessfit_element_atomic_number(const char *symbol);
/** The same, reporting HESSFIT_ERROR_UNKNOWN_ELEMENT (message names the symbol) or HESSFIT_ERROR_NULL_ARGUMENT. */
hessfit_status hessfit_element_lookup(const char *symbol, int *atomic_number);
/** Canonical symbol ("Cl") for an atomic number with data here; NULL otherwise. */
const char *hessfit_element_symbol(int atomic_number);
/** Mass in amu; 0.0 for an atomic number without data. */
double hessfit_element_monoisotopic_mass(int atomic_number);
double hessfit_element_average_mass(int atomic_number);
double hessfit_element_mass(int atomic_number, hessfit_mass_kind kind);
/** masses[i] = mass of atomic_numbers[i]; HESSFIT_ERROR_UNKNOWN_ELEMENT names the first bad item. */
hessfit_status hessfit_element_masses(const int *atomic_numbers, int n, hessfit_mass_kind kind, double *masses);

#ifdef __cplusplus
}
#endif
#endif
