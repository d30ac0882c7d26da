#ifndef HESSFIT_RADII_H_
#define HESSFIT_RADII_H_
/*
 * Single-bond covalent radii for bond perception (hessfit_topology_build): two atoms are bonded when
 * r <= tolerance * (r_cov(i) + r_cov(j)).
 *
 * Source: B. Cordero, V. Gomez, A. E. Platero-Prats, M. Reves, J. Echeverria, E. Cremades,
 * F. Barragan, S. Alvarez, "Covalent radii revisited", Dalton Trans. 2008, 2832-2838,
 * doi:10.1039/b801115j (Table 2: H..Cm, Z = 1..96). Where the paper gives several values the
 * table holds C sp3 (0.76; sp2 0.73, sp 0.69) and the low-spin values of Mn, Fe, Co (1.39, 1.32,
 * 1.26; high-spin 1.61, 1.52, 1.50).
 */
#ifdef __cplusplus
extern "C" {
#endif

#define HESSFIT_COVALENT_RADII_MAX_Z 96

/** Covalent radius in Angstrom of the element with that atomic number; 0.0 outside 1..96. */
double hessfit_covalent_radius(int atomic_number);

#ifdef __cplusplus
}
#endif
#endif
