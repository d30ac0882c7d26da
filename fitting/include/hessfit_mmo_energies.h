#ifndef HESSFIT_MMO_ENERGIES_H_
#define HESSFIT_MMO_ENERGIES_H_
/*
 * What MacroModel printed in an .mmo besides the structures (hessfit_mmo_read reads those): every
 * per-interaction row with its atoms, printed constants and energies, and the energy breakdown of
 * each structure. Units as printed: kJ/mol, Angstrom, degrees.
 */
#include "hessfit_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The tables of an .mmo structure. */
typedef enum hessfit_mmo_table {
    HESSFIT_MMO_STRETCH = 0,  /**< atoms i j; e[0] E; c = {k, r0, r} */
    HESSFIT_MMO_BEND,         /**< atoms i centre k; e = {EBnd, ESBnd}; c = {KBnd, KSBnd, theta0, theta} */
    HESSFIT_MMO_BEND_BEND,    /**< atoms centre, ends of angle 1, ends of angle 2; e[0] EBBnd;
                                   c = {KBBnd, Ideal1, Actual1, Ideal2} */
    HESSFIT_MMO_TORSION,      /**< atoms i j k l; e[0] E; c = {V1, V2, V3, phi} */
    HESSFIT_MMO_IMPROPER,     /**< atoms as printed (centre second); e[0] E; c = {V1, V2, V3, phi} */
    HESSFIT_MMO_TORSION_CROSS,/**< atoms i j k l; e[0] the torsion-stretch energy; c = {K(t-s), K(t-b), K(t-t), phi} */
    HESSFIT_MMO_NONBONDED,    /**< atoms i j; e = {EVDW, ECHARGE}; c = {CONST1, CONST2, CHARGE*, DISTANCE} */
    HESSFIT_MMO_NUM_TABLES
} hessfit_mmo_table;

typedef struct hessfit_mmo_row {
    hessfit_mmo_table table;
    int atoms[5];     /**< 0-based, unused -1 */
    double e[2];      /**< energies, kJ/mol (e[1] 0 where the table has one) */
    double c[4];      /**< printed constants and geometry, above */
    int line;         /**< line of the .mmo */
} hessfit_mmo_row;

/** The energy breakdown, in MacroModel's order. */
typedef enum hessfit_mmo_total {
    HESSFIT_MMO_TOTAL_STRETCH = 0,
    HESSFIT_MMO_TOTAL_BEND,
    HESSFIT_MMO_TOTAL_TORSION,
    HESSFIT_MMO_TOTAL_OUT_OF_PLANE,
    HESSFIT_MMO_TOTAL_STRETCH_BEND,
    HESSFIT_MMO_TOTAL_BEND_BEND,
    HESSFIT_MMO_TOTAL_TORSION_STRETCH,
    HESSFIT_MMO_TOTAL_VDW,
    HESSFIT_MMO_TOTAL_ELECTROSTATIC,
    HESSFIT_MMO_TOTAL_HBOND,
    HESSFIT_MMO_TOTAL_ENERGY, /**< "Total energy" */
    HESSFIT_MMO_NUM_TOTALS
} hessfit_mmo_total;

/** One structure's printed energies. */
typedef struct hessfit_mmo_energies {
    int n_rows;
    hessfit_mmo_row *rows;                  /**< in file order */
    double totals[HESSFIT_MMO_NUM_TOTALS];  /**< kJ/mol */
    int line;                               /**< line where the structure's output starts */
} hessfit_mmo_energies;

typedef struct hessfit_mmo_energies_list {
    int n;
    hessfit_mmo_energies *items;            /**< in the order of hessfit_mmo_read's structures */
} hessfit_mmo_energies_list;

/** The breakdown label as MacroModel prints it ("Stretch", ..., "Total energy"). */
const char *hessfit_mmo_total_name(hessfit_mmo_total total);

/** Every structure's printed rows and breakdown (plain or gzip). Each announced row count must be
 * met (the cross-term table lists only its nonzero rows: at most the count), every breakdown line
 * present; errors name file:line. On failure *list is empty. */
hessfit_status hessfit_mmo_energies_read(const char *path, hessfit_mmo_energies_list *list);
void hessfit_mmo_energies_list_free(hessfit_mmo_energies_list *list);

#ifdef __cplusplus
}
#endif
#endif
