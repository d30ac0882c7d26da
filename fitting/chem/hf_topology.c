/*
 * Topology of one molecule: bonds (from the file's connectivity or perceived from covalent radii),
 * angles, proper torsions, impropers and 1-4 pairs, every list sorted so that the output does not
 * depend on the order of the input.
 *
 * Cost: bond perception sorts the atoms along x and sweeps (each atom is compared only with atoms
 * whose x lies within the largest possible bond length), O(N log N + N k) for k atoms in such a
 * slab -- O(N^2) only for pathological geometries. Angles, torsions and 1-4 pairs walk the
 * neighbour lists: O(sum_j deg(j)^2) angles, O(sum_bonds deg(j) deg(k)) torsions, i.e.
 * O(N * neighbours^2) and never a loop over all atom pairs.
 *
 * Bonds from the file are every bond it lists, whatever the order (MacroModel's zero-order metal
 * bonds and mol2 "nc" bonds included: MacroModel puts stretch, bend and torsion terms across
 * them). The TS tolerance replaces the ordinary one for every pair; on the rh-enamide transition
 * states the forming C-H bond needs 1.63 x (r_C + r_H), where geminal C-C-C pairs (1.59 x) bond
 * too, so file connectivity remains the way to type a transition state (tests/fitting/chem/test_topology.c).
 */
#include "hessfit_radii.h"
#include "hessfit_typing.h"
#include "hf_lines.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Atoms closer than this are a broken geometry, not a bond (Angstrom). */
#define HF_TOPOLOGY_MIN_DISTANCE 0.3
/* A tolerance is a factor on r_cov(i) + r_cov(j): 1.3 is usual, a TS needs a bit more. */
#define HF_TOPOLOGY_MAX_TOLERANCE 3.0
/* Atoms per molecule (the arrays below are int-indexed). */
#define HF_TOPOLOGY_MAX_ATOMS 10000000

hessfit_topology_options hessfit_topology_default_options(void)
{
    hessfit_topology_options o;
    o.use_file_bonds = 1;
    o.bond_tolerance = 1.3;
    o.ts_bond_tolerance = 0.0;
    return o;
}

void hessfit_topology_free(hessfit_topology *topo)
{
    if (topo == NULL)
        return;
    free(topo->bonds);
    free(topo->angles);
    free(topo->torsions);
    free(topo->impropers);
    free(topo->pairs14);
    memset(topo, 0, sizeof *topo);
}

/* ---- growable tuple lists ------------------------------------------------------------------- */

typedef struct {
    int *v;      /* width ints per tuple */
    int width;
    size_t n;    /* tuples */
    size_t cap;  /* ints */
} tuple_list;

static hessfit_status tuple_push(tuple_list *t, const int *tuple, const char *what)
{
    if (t->n >= (size_t)INT_MAX)
        return hessfit_error(HESSFIT_ERROR_OVERFLOW, "topology: more than %d %s", INT_MAX, what);
    hessfit_status st = hf_grow((void **)&t->v, &t->cap, (t->n + 1) * (size_t)t->width, sizeof(int), what);
    if (st != HESSFIT_SUCCESS)
        return st;
    memcpy(t->v + t->n * (size_t)t->width, tuple, (size_t)t->width * sizeof(int));
    t->n++;
    return HESSFIT_SUCCESS;
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int i = 0; i < 2; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int cmp_triple(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static int cmp_quad(const void *a, const void *b)
{
    const int *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

static void tuple_sort(tuple_list *t)
{
    int (*cmp)(const void *, const void *) = t->width == 2 ? cmp_pair : t->width == 3 ? cmp_triple : cmp_quad;
    if (t->n > 1)
        qsort(t->v, t->n, (size_t)t->width * sizeof(int), cmp);
}

/* Sort and drop repeated tuples. */
static void tuple_sort_unique(tuple_list *t)
{
    size_t w = (size_t)t->width, out = 0;
    tuple_sort(t);
    for (size_t i = 0; i < t->n; i++) {
        if (out > 0 && memcmp(t->v + (out - 1) * w, t->v + i * w, w * sizeof(int)) == 0)
            continue;
        if (out != i)
            memmove(t->v + out * w, t->v + i * w, w * sizeof(int));
        out++;
    }
    t->n = out;
}

/* ---- bonds ---------------------------------------------------------------------------------- */

static const char *mol_label(const hessfit_molecule *mol)
{
    if (mol->source != NULL && mol->source[0] != '\0')
        return mol->source;
    if (mol->name != NULL && mol->name[0] != '\0')
        return mol->name;
    return "molecule";
}

/* The file's bonds, checked (indices in range, no self bond, no repeat) and sorted, i < j. */
static hessfit_status bonds_from_file(const hessfit_molecule *mol, tuple_list *bonds)
{
    if (mol->n_bonds < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: negative bond count %d", mol_label(mol), mol->n_bonds);
    if (mol->n_bonds > 0 && mol->bonds == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: %d bonds but no bond array", mol_label(mol), mol->n_bonds);
    for (int b = 0; b < mol->n_bonds; b++) {
        int i = mol->bonds[2 * b], j = mol->bonds[2 * b + 1];
        if (i < 0 || i >= mol->n_atoms || j < 0 || j >= mol->n_atoms)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond %d joins atoms %d and %d, outside 1..%d",
                            mol_label(mol), b + 1, i + 1, j + 1, mol->n_atoms);
        if (i == j)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond %d joins atom %d to itself", mol_label(mol), b + 1,
                            i + 1);
        int pair[2] = {i < j ? i : j, i < j ? j : i};
        hessfit_status st = tuple_push(bonds, pair, "bonds");
        if (st != HESSFIT_SUCCESS)
            return st;
    }
    tuple_sort(bonds);
    for (size_t b = 1; b < bonds->n; b++)
        if (bonds->v[2 * b] == bonds->v[2 * b - 2] && bonds->v[2 * b + 1] == bonds->v[2 * b - 1])
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond %d-%d is listed twice", mol_label(mol),
                            bonds->v[2 * b] + 1, bonds->v[2 * b + 1] + 1);
    return HESSFIT_SUCCESS;
}

typedef struct {
    double x;
    int atom;
} x_key;

static int cmp_x_key(const void *a, const void *b)
{
    const x_key *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->atom - q->atom;
}

/* Bonds from covalent radii: r_ij <= tolerance * (r_cov(i) + r_cov(j)), found by sorting atoms
 * along x and comparing each atom only with the following atoms within the largest bond length. */
static hessfit_status bonds_from_radii(const hessfit_molecule *mol, double tolerance, tuple_list *bonds)
{
    const int n = mol->n_atoms;
    const double *xyz = mol->coords;
    double max_radius = 0.0;
    hessfit_status st = HESSFIT_SUCCESS;

    if (xyz == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: no coordinates to perceive bonds from", mol_label(mol));
    if (mol->atomic_numbers == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "%s: no elements to perceive bonds from", mol_label(mol));
    for (int a = 0; a < n; a++) {
        double r = hessfit_covalent_radius(mol->atomic_numbers[a]);
        if (r <= 0.0)
            return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s: atom %d (atomic number %d) has no covalent radius",
                            mol_label(mol), a + 1, mol->atomic_numbers[a]);
        for (int c = 0; c < 3; c++)
            if (!isfinite(xyz[3 * a + c]))
                return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s: atom %d has a non-finite coordinate", mol_label(mol), a + 1);
        if (r > max_radius)
            max_radius = r;
    }
    x_key *order = malloc((size_t)n * sizeof *order);
    if (order == NULL)
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "%s: bond perception for %d atoms", mol_label(mol), n);
    for (int a = 0; a < n; a++) {
        order[a].x = xyz[3 * a];
        order[a].atom = a;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_x_key);
    const double reach = tolerance * 2.0 * max_radius;
    for (int p = 0; p < n && st == HESSFIT_SUCCESS; p++) {
        const int i = order[p].atom;
        const double ri = hessfit_covalent_radius(mol->atomic_numbers[i]);
        for (int q = p + 1; q < n && order[q].x - order[p].x <= reach; q++) {
            const int j = order[q].atom;
            const double dx = xyz[3 * j] - xyz[3 * i], dy = xyz[3 * j + 1] - xyz[3 * i + 1],
                         dz = xyz[3 * j + 2] - xyz[3 * i + 2];
            const double r = sqrt(dx * dx + dy * dy + dz * dz);
            if (r < HF_TOPOLOGY_MIN_DISTANCE) {
                st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: atoms %d and %d are %.4f A apart (coincident atoms)",
                              mol_label(mol), (i < j ? i : j) + 1, (i < j ? j : i) + 1, r);
                break;
            }
            if (r <= tolerance * (ri + hessfit_covalent_radius(mol->atomic_numbers[j]))) {
                int pair[2] = {i < j ? i : j, i < j ? j : i};
                st = tuple_push(bonds, pair, "bonds");
                if (st != HESSFIT_SUCCESS)
                    break;
            }
        }
    }
    free(order);
    if (st == HESSFIT_SUCCESS)
        tuple_sort(bonds);
    return st;
}

/* ---- neighbour lists (CSR, each list ascending) --------------------------------------------- */

typedef struct {
    int *start; /* n + 1 */
    int *list;  /* 2 n_bonds */
} neighbours;

static hessfit_status neighbours_build(int n_atoms, const tuple_list *bonds, neighbours *nb)
{
    int *fill;
    nb->start = calloc((size_t)n_atoms + 1, sizeof(int));
    nb->list = malloc((2 * bonds->n + 1) * sizeof(int));
    fill = calloc((size_t)n_atoms + 1, sizeof(int));
    if (nb->start == NULL || nb->list == NULL || fill == NULL) {
        free(fill);
        return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "topology: neighbour lists of %d atoms", n_atoms);
    }
    for (size_t b = 0; b < bonds->n; b++) {
        nb->start[bonds->v[2 * b] + 1]++;
        nb->start[bonds->v[2 * b + 1] + 1]++;
    }
    for (int a = 0; a < n_atoms; a++)
        nb->start[a + 1] += nb->start[a];
    /* Bonds are sorted by (i, j): filling in bond order gives each list in ascending order for the
     * j > i part, but the i < j part (neighbours below) must come first, so fill in two passes. */
    for (size_t b = 0; b < bonds->n; b++) { /* neighbours below: atom j gets i, ascending in i */
        int i = bonds->v[2 * b], j = bonds->v[2 * b + 1];
        nb->list[nb->start[j] + fill[j]++] = i;
    }
    for (size_t b = 0; b < bonds->n; b++) { /* neighbours above: atom i gets j, ascending in j */
        int i = bonds->v[2 * b], j = bonds->v[2 * b + 1];
        nb->list[nb->start[i] + fill[i]++] = j;
    }
    free(fill);
    return HESSFIT_SUCCESS;
}

static void neighbours_free(neighbours *nb)
{
    free(nb->start);
    free(nb->list);
}

/* 1 if atom b is in a's (ascending) neighbour list. */
static int bonded(const neighbours *nb, int a, int b)
{
    int lo = nb->start[a], hi = nb->start[a + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (nb->list[mid] == b)
            return 1;
        if (nb->list[mid] < b)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

/* 1 if a and b share a neighbour (merge of two ascending lists). */
static int share_neighbour(const neighbours *nb, int a, int b)
{
    int p = nb->start[a], pe = nb->start[a + 1], q = nb->start[b], qe = nb->start[b + 1];
    while (p < pe && q < qe) {
        if (nb->list[p] == nb->list[q])
            return 1;
        if (nb->list[p] < nb->list[q])
            p++;
        else
            q++;
    }
    return 0;
}

/* ---- the topology ---------------------------------------------------------------------------- */

static int *take(tuple_list *t, int *count)
{
    *count = (int)t->n;
    int *v = t->v;
    t->v = NULL;
    return v;
}

hessfit_status hessfit_topology_build(const hessfit_molecule *mol, const hessfit_topology_options *options, hessfit_topology *topo)
{
    hessfit_topology_options opt = options != NULL ? *options : hessfit_topology_default_options();
    tuple_list bonds = {NULL, 2, 0, 0}, angles = {NULL, 3, 0, 0}, torsions = {NULL, 4, 0, 0},
               impropers = {NULL, 4, 0, 0}, pairs = {NULL, 2, 0, 0};
    neighbours nb = {NULL, NULL};
    hessfit_status st = HESSFIT_SUCCESS;

    if (mol == NULL || topo == NULL)
        return hessfit_error(HESSFIT_ERROR_NULL_ARGUMENT, "hessfit_topology_build: %s is NULL", mol == NULL ? "mol" : "topo");
    memset(topo, 0, sizeof *topo);
    if (mol->n_atoms <= 0 || mol->n_atoms > HF_TOPOLOGY_MAX_ATOMS)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %d atoms (1..%d allowed)", mol_label(mol), mol->n_atoms,
                        HF_TOPOLOGY_MAX_ATOMS);
    if (!(opt.ts_bond_tolerance >= 0.0 && opt.ts_bond_tolerance <= HF_TOPOLOGY_MAX_TOLERANCE))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: TS bond tolerance %g outside [0, %g] (0: not used)",
                        mol_label(mol), opt.ts_bond_tolerance, HF_TOPOLOGY_MAX_TOLERANCE);
    const double tolerance = opt.ts_bond_tolerance > 0.0 ? opt.ts_bond_tolerance : opt.bond_tolerance;
    const int from_file = opt.use_file_bonds && mol->bonds_known;
    if (!from_file && !(tolerance > 0.0 && tolerance <= HF_TOPOLOGY_MAX_TOLERANCE))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: bond tolerance %g outside (0, %g]", mol_label(mol), tolerance,
                        HF_TOPOLOGY_MAX_TOLERANCE);

    st = from_file ? bonds_from_file(mol, &bonds) : bonds_from_radii(mol, tolerance, &bonds);
    if (st == HESSFIT_SUCCESS)
        st = neighbours_build(mol->n_atoms, &bonds, &nb);

    /* Angles i-j-k: every pair of neighbours of each centre j, i < k. */
    for (int j = 0; st == HESSFIT_SUCCESS && j < mol->n_atoms; j++)
        for (int p = nb.start[j]; st == HESSFIT_SUCCESS && p < nb.start[j + 1]; p++)
            for (int q = p + 1; st == HESSFIT_SUCCESS && q < nb.start[j + 1]; q++) {
                int t[3] = {nb.list[p], j, nb.list[q]};
                st = tuple_push(&angles, t, "angles");
            }

    /* Proper torsions i-j-k-l over each bond j-k (j < k, so each torsion appears once): i a
     * neighbour of j other than k, l a neighbour of k other than j, i != l (a 3-ring). The 1-4 pair
     * of each is kept unless i and l are also 1-2 (4-ring) or 1-3 (5-ring) partners; rings give
     * the same pair through several torsions, removed by the sort below. */
    for (size_t b = 0; st == HESSFIT_SUCCESS && b < bonds.n; b++) {
        const int j = bonds.v[2 * b], k = bonds.v[2 * b + 1];
        for (int p = nb.start[j]; st == HESSFIT_SUCCESS && p < nb.start[j + 1]; p++) {
            const int i = nb.list[p];
            if (i == k)
                continue;
            for (int q = nb.start[k]; st == HESSFIT_SUCCESS && q < nb.start[k + 1]; q++) {
                const int l = nb.list[q];
                if (l == j || l == i)
                    continue;
                int t[4] = {i, j, k, l};
                st = tuple_push(&torsions, t, "torsions");
                if (st == HESSFIT_SUCCESS && !bonded(&nb, i, l) && !share_neighbour(&nb, i, l)) {
                    int pair[2] = {i < l ? i : l, i < l ? l : i};
                    st = tuple_push(&pairs, pair, "1-4 pairs");
                }
            }
        }
    }

    /* Impropers: each atom with exactly three neighbours, as (n1, n2, n3, centre), n1 < n2 < n3. */
    for (int c = 0; st == HESSFIT_SUCCESS && c < mol->n_atoms; c++)
        if (nb.start[c + 1] - nb.start[c] == 3) {
            int t[4] = {nb.list[nb.start[c]], nb.list[nb.start[c] + 1], nb.list[nb.start[c] + 2], c};
            st = tuple_push(&impropers, t, "impropers");
        }

    if (st == HESSFIT_SUCCESS) {
        tuple_sort(&angles);
        tuple_sort(&torsions);
        tuple_sort(&impropers);
        tuple_sort_unique(&pairs);
        topo->n_atoms = mol->n_atoms;
        topo->bonds = take(&bonds, &topo->n_bonds);
        topo->angles = take(&angles, &topo->n_angles);
        topo->torsions = take(&torsions, &topo->n_torsions);
        topo->impropers = take(&impropers, &topo->n_impropers);
        topo->pairs14 = take(&pairs, &topo->n_pairs14);
    }
    free(bonds.v);
    free(angles.v);
    free(torsions.v);
    free(impropers.v);
    free(pairs.v);
    neighbours_free(&nb);
    return st;
}
