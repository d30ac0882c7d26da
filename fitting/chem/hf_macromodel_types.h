#ifndef HF_MACROMODEL_TYPES_H_
#define HF_MACROMODEL_TYPES_H_
/*
 * Internal to the fitting layer: the element of a MacroModel atom type label ("C2", "H1", "RH"),
 * shared by the .mmo reader (hf_read_mmo.c) and the .mol2 reader (hf_read_mol2.c, for mol2 files
 * typed with MacroModel labels).
 */

/* Atomic number of a MacroModel atom-type label, matched case-sensitively (MacroModel's labels
 * differ only in case: "C1" sp carbon vs "c1" Cu+, "O2" vs "o2" Co2+, "N2" vs "n2" Ni2+). 0 for a
 * label that is not a type of a real atom: unknown labels, the force-field wildcard "00", lone
 * pair "Lp", dummies "Du"/"D1", the unassigned "Z0", coarse-grained sites. */
int hf_macromodel_type_atomic_number(const char *type);

#endif
