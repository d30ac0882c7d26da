/* MacroModel atom-type labels and their elements. */
#include "hf_macromodel_types.h"

#include <stddef.h>
#include <string.h>

typedef struct macromodel_type {
    const char *label; /* column 4 of atom.typ: the two-character type name */
    int z;             /* column 2: atomic number (united atoms: that of the heavy atom) */
} macromodel_type;

/*
 * From MacroModel's atom-type table atom.typ (Schrodinger; the copy distributed with q2mm,
 * github ericchansen/q2mm example_data/atom.typ, "version 6.51"): type number in the comment,
 * label and atomic number (columns 4 and 2). Types whose atomic number is not an element are left
 * out on purpose: 61 Du (dummy, -2), 62 Z0 ('!'), 63 Lp (lone pair, -1), 64 00 (the force-field
 * wildcard, '!'), 150-173 PI/G* and 301+ coarse-grained sites ('!').
 * The Q2MM additions 201-206 and 250-254 are those of examples/data/rh-enamide/atom.typ; its type
 * 250 "RH" (Rh of the Rh-catalysed enamide hydrogenation, +1) has '!' as atomic number and
 * 102.90550 amu as mass, i.e. rhodium; q2mm's example_data/atom.typ names the same type "R2" and
 * adds 207 Fe.
 */
static const macromodel_type macromodel_types[] = {
    /* carbon */
    {"C1", 6}, /* 1 sp */
    {"C2", 6}, /* 2 sp2 */
    {"C3", 6}, /* 3 sp3 */
    {"CA", 6}, /* 4 united CH sp3 */
    {"CB", 6}, /* 5 united CH2 sp3 */
    {"CC", 6}, /* 6 united CH3 sp3 */
    {"CD", 6}, /* 7 united CH sp2 */
    {"CE", 6}, /* 8 united CH2 sp2 */
    {"CF", 6}, /* 9 united CH sp */
    {"CM", 6}, /* 10 carbanion */
    {"CP", 6}, /* 11 carbocation */
    {"CR", 6}, /* 12 carbon radical */
    {"C0", 6}, /* 14 any carbon */
    /* oxygen */
    {"O2", 8}, /* 15 double bond */
    {"O3", 8}, /* 16 single bonds */
    {"OA", 8}, /* 17 united OH */
    {"OM", 8}, /* 18 O- */
    {"OW", 8}, /* 19 united water */
    {"OP", 8}, /* 20 oxonium sp2 */
    {"OQ", 8}, /* 21 oxonium sp3 */
    {"O0", 8}, /* 23 any oxygen */
    {"Om", 8}, /* 115 oxide O2- */
    /* nitrogen */
    {"N1", 7}, /* 24 sp */
    {"N2", 7}, /* 25 sp2 */
    {"N3", 7}, /* 26 sp3 */
    {"NA", 7}, /* 27 united NH sp3 */
    {"NB", 7}, /* 28 united NH2 sp3 */
    {"NC", 7}, /* 29 united NH sp2 */
    {"ND", 7}, /* 30 united NH2 sp2 */
    {"N4", 7}, /* 31 N+ sp2 */
    {"N5", 7}, /* 32 N+ sp3 */
    {"NE", 7}, /* 33 united NH+ sp3 */
    {"NF", 7}, /* 34 united NH2+ sp3 */
    {"NG", 7}, /* 35 united NH3+ sp3 */
    {"NH", 7}, /* 36 united NH+ sp2 */
    {"NI", 7}, /* 37 united NH2+ sp2 */
    {"NM", 7}, /* 38 N- sp3 */
    {"NP", 7}, /* 39 N- sp2 */
    {"N0", 7}, /* 40 any nitrogen */
    /* hydrogen */
    {"H1", 1}, /* 41 H on C, S */
    {"H2", 1}, /* 42 H on O */
    {"H3", 1}, /* 43 H on N */
    {"H4", 1}, /* 44 H cation */
    {"H5", 1}, /* 45 H anion */
    {"H0", 1}, /* 48 any hydrogen */
    {"H7", 1}, /* 251 Q2MM Rh enamide: moving hydrogen */
    {"H6", 1}, /* 252 Q2MM Rh enamide: stationary hydrogen */
    /* sulfur */
    {"S1", 16}, /* 49 neutral */
    {"SA", 16}, /* 50 united SH */
    {"SM", 16}, /* 51 thiolate */
    {"S0", 16}, /* 52 any sulfur */
    {"SP", 16}, /* 100 cation */
    {"S2", 16}, /* 101 sp2 (thioketone) */
    {"S4", 16}, /* 109 tetravalent */
    {"S6", 16}, /* 110 hexavalent octahedral */
    {"ST", 16}, /* 113 hexavalent tetrahedral */
    {"Sm", 16}, /* 114 sulfide S2- */
    /* phosphorus */
    {"P3", 15}, /* 53 trivalent */
    {"P5", 15}, /* 107 pentavalent */
    {"P0", 15}, /* 108 any phosphorus */
    {"P4", 15}, /* 111 tetravalent cation */
    {"P2", 15}, /* 253 Q2MM Rh enamide: P trans to O */
    {"P1", 15}, /* 254 Q2MM Rh enamide: P cis to O */
    /* boron, halogens, silicon, arsenic, selenium */
    {"B2", 5},  /* 54 trigonal */
    {"B3", 5},  /* 55 tetrahedral anion */
    {"B0", 5},  /* 103 any boron */
    {"F0", 9},  /* 56 */
    {"Fm", 9},  /* 104 fluoride */
    {"Cl", 17}, /* 57 */
    {"Cm", 17}, /* 102 chloride */
    {"Br", 35}, /* 58 */
    {"Bm", 35}, /* 105 bromide */
    {"I0", 53}, /* 59 */
    {"Im", 53}, /* 106 iodide */
    {"Si", 14}, /* 60 */
    {"As", 33}, /* 95 */
    {"Se", 34}, /* 112 */
    /* alkali and alkaline-earth ions */
    {"Li", 3},  /* 65 Li+ */
    {"L0", 3},  /* 93 Li neutral */
    {"Na", 11}, /* 66 */
    {"K0", 19}, /* 67 */
    {"Rb", 37}, /* 68 */
    {"Cs", 55}, /* 69 */
    {"Ca", 20}, /* 70 */
    {"Ba", 56}, /* 71 */
    {"Mg", 12}, /* 72 Mg2+ */
    {"M0", 12}, /* 94 Mg neutral */
    {"Sr", 38}, /* 92 */
    /* transition metals */
    {"M2", 25}, /* 73 Mn2+ */
    {"M3", 25}, /* 74 Mn3+ */
    {"M4", 25}, /* 75 Mn4+ */
    {"M5", 25}, /* 76 Mn5+ */
    {"M6", 25}, /* 77 Mn6+ */
    {"M7", 25}, /* 78 Mn7+ */
    {"f2", 26}, /* 79 Fe2+ */
    {"f3", 26}, /* 80 Fe3+ */
    {"Fe", 26}, /* 207 Q2MM ferrocene Fe (q2mm example_data) */
    {"o2", 27}, /* 81 Co2+ */
    {"o3", 27}, /* 82 Co3+ */
    {"n2", 28}, /* 83 Ni2+ */
    {"n3", 28}, /* 84 Ni3+ */
    {"c1", 29}, /* 85 Cu+ */
    {"c2", 29}, /* 86 Cu2+ */
    {"Zn", 30}, /* 87 Zn2+ */
    {"m3", 42}, /* 88 Mo3+ */
    {"m4", 42}, /* 89 Mo4+ */
    {"m5", 42}, /* 90 Mo5+ */
    {"m6", 42}, /* 91 Mo6+ */
    {"Pd", 46}, /* 201 Q2MM */
    {"Ru", 44}, /* 202 Q2MM */
    {"Rh", 45}, /* 203 Q2MM */
    {"Ir", 77}, /* 204 Q2MM */
    {"Os", 76}, /* 206 Q2MM */
    {"RH", 45}, /* 250 Q2MM Rh-catalysed enamide hydrogenation (this repository's atom.typ) */
    {"R2", 45}, /* 250 the same type in q2mm's example_data/atom.typ */
};

int hf_macromodel_type_atomic_number(const char *type)
{
    if (type == NULL)
        return 0;
    for (size_t k = 0; k < sizeof macromodel_types / sizeof macromodel_types[0]; k++)
        if (strcmp(type, macromodel_types[k].label) == 0)
            return macromodel_types[k].z;
    return 0;
}
