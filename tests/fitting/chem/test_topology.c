/* Topology perception (hessfit_topology_build): ethane and small rings with hand-counted terms, every
 * topology cross-checked against brute-force enumerations (all atom tuples, graph distances),
 * bonds from covalent radii against the connectivity of the nine rh-enamide structures (.mmo),
 * the TS tolerance, determinism, and bad input. */
#define _POSIX_C_SOURCE 200809L
#include "hessfit_molecule.h"
#include "hessfit_radii.h"
#include "hessfit_typing.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- independent brute-force checks ------------------------------------------------------------ */

/* Adjacency matrix from the topology's bonds (n <= 64 here). */
#define MAXN 64
static unsigned char adj[MAXN][MAXN];

static void fill_adjacency(const hessfit_topology *t)
{
    CHECK(t->n_atoms <= MAXN, "test molecules have at most %d atoms", MAXN);
    memset(adj, 0, sizeof adj);
    for (int b = 0; b < t->n_bonds; b++) {
        int i = t->bonds[2 * b], j = t->bonds[2 * b + 1];
        CHECK(i < j, "bond %d not i < j: %d %d", b, i, j);
        CHECK(b == 0 || t->bonds[2 * b - 2] < i || (t->bonds[2 * b - 2] == i && t->bonds[2 * b - 1] < j),
              "bonds not strictly sorted at %d", b);
        adj[i][j] = adj[j][i] = 1;
    }
}

static int lex_less(const int *a, const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

/* Every list of t against enumerations over all atom tuples; returns nothing, CHECKs fail. */
static void check_brute_force(const hessfit_topology *t, const char *what)
{
    const int n = t->n_atoms;
    int count;
    fill_adjacency(t);

    /* angles: all (i, j, k), i < k, both bonded to j */
    count = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            for (int k = i + 1; k < n; k++)
                count += adj[i][j] && adj[j][k];
    CHECK(count == t->n_angles, "%s: %d angles, brute force %d", what, t->n_angles, count);
    for (int a = 0; a < t->n_angles; a++) {
        const int *v = t->angles + 3 * a;
        CHECK(v[0] < v[2] && adj[v[0]][v[1]] && adj[v[1]][v[2]], "%s: angle %d invalid", what, a);
        CHECK(a == 0 || lex_less(v - 3, v, 3), "%s: angles not strictly sorted at %d", what, a);
    }

    /* torsions: all (i, j, k, l) distinct, i-j, j-k, k-l bonded, j < k */
    count = 0;
    for (int j = 0; j < n; j++)
        for (int k = j + 1; k < n; k++) {
            if (!adj[j][k])
                continue;
            for (int i = 0; i < n; i++)
                for (int l = 0; l < n; l++)
                    count += i != j && i != k && l != j && l != k && i != l && adj[i][j] && adj[k][l];
        }
    CHECK(count == t->n_torsions, "%s: %d torsions, brute force %d", what, t->n_torsions, count);
    for (int a = 0; a < t->n_torsions; a++) {
        const int *v = t->torsions + 4 * a;
        CHECK(v[1] < v[2] && v[0] != v[3] && adj[v[0]][v[1]] && adj[v[1]][v[2]] && adj[v[2]][v[3]],
              "%s: torsion %d invalid", what, a);
        CHECK(a == 0 || lex_less(v - 4, v, 4), "%s: torsions not strictly sorted at %d", what, a);
    }

    /* impropers: exactly the atoms of degree 3, neighbours ascending then the centre */
    count = 0;
    for (int c = 0; c < n; c++) {
        int deg = 0;
        for (int i = 0; i < n; i++)
            deg += adj[c][i];
        count += deg == 3;
    }
    CHECK(count == t->n_impropers, "%s: %d impropers, brute force %d", what, t->n_impropers, count);
    for (int a = 0; a < t->n_impropers; a++) {
        const int *v = t->impropers + 4 * a;
        CHECK(v[0] < v[1] && v[1] < v[2] && adj[v[3]][v[0]] && adj[v[3]][v[1]] && adj[v[3]][v[2]],
              "%s: improper %d invalid", what, a);
    }

    /* 1-4 pairs: exactly the pairs at graph distance 3 (BFS from every atom) */
    static int dist[MAXN][MAXN];
    for (int s = 0; s < n; s++) {
        int queue[MAXN], head = 0, tail = 0;
        for (int i = 0; i < n; i++)
            dist[s][i] = -1;
        dist[s][s] = 0;
        queue[tail++] = s;
        while (head < tail) {
            int u = queue[head++];
            for (int v = 0; v < n; v++)
                if (adj[u][v] && dist[s][v] < 0) {
                    dist[s][v] = dist[s][u] + 1;
                    queue[tail++] = v;
                }
        }
    }
    count = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            count += dist[i][j] == 3;
    CHECK(count == t->n_pairs14, "%s: %d 1-4 pairs, %d pairs at graph distance 3", what, t->n_pairs14, count);
    for (int a = 0; a < t->n_pairs14; a++) {
        const int *v = t->pairs14 + 2 * a;
        CHECK(v[0] < v[1] && dist[v[0]][v[1]] == 3, "%s: 1-4 pair %d-%d at distance %d", what, v[0] + 1, v[1] + 1,
              dist[v[0]][v[1]]);
        CHECK(a == 0 || lex_less(v - 2, v, 2), "%s: 1-4 pairs not strictly sorted at %d", what, a);
    }
}

static void check_counts(const hessfit_topology *t, const char *what, int bonds, int angles, int torsions, int impropers,
                         int pairs)
{
    printf("  %-26s bonds %3d angles %3d torsions %3d impropers %2d 1-4 pairs %3d\n", what, t->n_bonds, t->n_angles,
           t->n_torsions, t->n_impropers, t->n_pairs14);
    CHECK(t->n_bonds == bonds, "%s: %d bonds, expected %d", what, t->n_bonds, bonds);
    CHECK(t->n_angles == angles, "%s: %d angles, expected %d", what, t->n_angles, angles);
    CHECK(t->n_torsions == torsions, "%s: %d torsions, expected %d", what, t->n_torsions, torsions);
    CHECK(t->n_impropers == impropers, "%s: %d impropers, expected %d", what, t->n_impropers, impropers);
    CHECK(t->n_pairs14 == pairs, "%s: %d 1-4 pairs, expected %d", what, t->n_pairs14, pairs);
    check_brute_force(t, what);
}

/* memcmp of two int arrays of n tuples of width w (NULL allowed when n == 0) */
static int same_ints(const int *a, const int *b, int n, int w)
{
    return n == 0 || (a != NULL && b != NULL && memcmp(a, b, sizeof(int) * (size_t)n * (size_t)w) == 0);
}

static int same_topology(const hessfit_topology *a, const hessfit_topology *b)
{
    return a->n_atoms == b->n_atoms && a->n_bonds == b->n_bonds && a->n_angles == b->n_angles &&
           a->n_torsions == b->n_torsions && a->n_impropers == b->n_impropers && a->n_pairs14 == b->n_pairs14 &&
           same_ints(a->bonds, b->bonds, a->n_bonds, 2) && same_ints(a->angles, b->angles, a->n_angles, 3) &&
           same_ints(a->torsions, b->torsions, a->n_torsions, 4) &&
           same_ints(a->impropers, b->impropers, a->n_impropers, 4) &&
           same_ints(a->pairs14, b->pairs14, a->n_pairs14, 2);
}

/* ---- ethane ----------------------------------------------------------------------------------- */

/* tests/data/ethane/GS.mol2: H C H C H H H H, Angstrom, and its seven bonds (1-based). */
static const int ethane_z[8] = {1, 6, 1, 6, 1, 1, 1, 1};
static double ethane_xyz[24] = {0.0179,  0.0310,  -0.0055, -0.0001, -0.0002, 1.0901, 1.0388,  0.0310,
                                1.4383,  -0.7216, -1.2499, 1.6003,  -0.4926, 0.9151, 1.4383,  -0.2291,
                                -2.1652, 1.2520,  -1.7605, -1.2810, 1.2520,  -0.7396, -1.2810, 2.6958};
static int ethane_file_bonds[14] = {1, 2, 2, 3, 2, 5, 2, 4, 6, 4, 7, 4, 4, 8};

static hessfit_molecule make_molecule(int n, const int *z, double *xyz, int n_bonds, int *bonds_1based)
{
    hessfit_molecule m;
    memset(&m, 0, sizeof m);
    m.name = (char *)"test";
    m.n_atoms = n;
    m.atomic_numbers = (int *)z;
    m.coords = xyz;
    if (bonds_1based != NULL) {
        m.bonds_known = 1;
        m.n_bonds = n_bonds;
        m.bonds = malloc(2 * sizeof(int) * (size_t)(n_bonds ? n_bonds : 1));
        CHECK(m.bonds != NULL, "out of memory");
        for (int i = 0; i < 2 * n_bonds; i++)
            m.bonds[i] = bonds_1based[i] - 1;
    }
    return m;
}

static void test_ethane(void)
{
    hessfit_molecule from_file = make_molecule(8, ethane_z, ethane_xyz, 7, ethane_file_bonds);
    hessfit_molecule bare = make_molecule(8, ethane_z, ethane_xyz, 0, NULL);
    hessfit_topology_options opt = hessfit_topology_default_options();
    hessfit_topology t1, t2, t3;

    CHECK(opt.use_file_bonds == 1 && opt.bond_tolerance == 1.3 && opt.ts_bond_tolerance == 0.0, "defaults");
    HF_CALL(hessfit_topology_build(&from_file, NULL, &t1));
    check_counts(&t1, "ethane (file bonds)", 7, 12, 9, 0, 9);
    HF_CALL(hessfit_topology_build(&bare, &opt, &t2));
    check_counts(&t2, "ethane (radii)", 7, 12, 9, 0, 9);
    CHECK(same_topology(&t1, &t2), "ethane: radii and file connectivity give different topologies");
    /* file bonds ignored on request: the same again */
    opt.use_file_bonds = 0;
    HF_CALL(hessfit_topology_build(&from_file, &opt, &t3));
    CHECK(same_topology(&t1, &t3), "ethane: use_file_bonds = 0 differs");

    static const int bonds[14] = {0, 1, 1, 2, 1, 3, 1, 4, 3, 5, 3, 6, 3, 7};
    CHECK(memcmp(t1.bonds, bonds, sizeof bonds) == 0, "ethane bond list");
    /* 1-4 pairs are the nine H(C2)-H(C4) pairs */
    for (int p = 0; p < t1.n_pairs14; p++) {
        int i = t1.pairs14[2 * p], j = t1.pairs14[2 * p + 1];
        CHECK((i == 0 || i == 2 || i == 4) && (j >= 5 && j <= 7), "ethane 1-4 pair %d-%d", i + 1, j + 1);
    }
    /* torsions all run over the C-C bond (atoms 2 and 4) */
    for (int k = 0; k < t1.n_torsions; k++)
        CHECK(t1.torsions[4 * k + 1] == 1 && t1.torsions[4 * k + 2] == 3, "ethane torsion %d centre", k);
    hessfit_topology_free(&t1);
    hessfit_topology_free(&t2);
    hessfit_topology_free(&t3);
    hessfit_topology_free(&t3); /* twice is safe */
    free(from_file.bonds);
}

/* ---- rings ------------------------------------------------------------------------------------ */

/* CnH2n as connectivity: carbons 1..n in a ring, hydrogens n+1.. two per carbon. */
static hessfit_molecule ring_alkane(int n_ring, int *z, double *xyz, int *bonds)
{
    int nb = 0, n = 3 * n_ring;
    for (int c = 0; c < n_ring; c++) {
        z[c] = 6;
        bonds[2 * nb] = c + 1;
        bonds[2 * nb + 1] = (c + 1) % n_ring + 1;
        nb++;
        for (int h = 0; h < 2; h++) {
            z[n_ring + 2 * c + h] = 1;
            bonds[2 * nb] = c + 1;
            bonds[2 * nb + 1] = n_ring + 2 * c + h + 1;
            nb++;
        }
    }
    memset(xyz, 0, 3 * sizeof(double) * (size_t)n);
    return make_molecule(n, z, xyz, nb, bonds);
}

static void test_rings(void)
{
    /* Hand counts. Torsions: (deg-1)^2 = 9 per C-C bond minus, in the 3-ring, i == l (the third
     * carbon) once per bond. 1-4 pairs (graph distance exactly 3): H-H across each C-C bond (4 per
     * bond) except in the 3-ring where they are... still 4 per bond; H-C across two bonds where C is
     * not also 1-3 the other way round the ring; C-C across three ring bonds only in the 6-ring
     * (3 pairs, each reached through two torsions: the duplicates must be removed). */
    static const struct {
        int n_ring, bonds, angles, torsions, pairs;
    } rings[] = {{3, 9, 18, 24, 12}, {4, 12, 24, 36, 24}, {5, 15, 30, 45, 40}, {6, 18, 36, 54, 51}};
    for (size_t r = 0; r < sizeof rings / sizeof rings[0]; r++) {
        int z[18], bonds[36];
        double xyz[54];
        char what[64];
        hessfit_molecule m = ring_alkane(rings[r].n_ring, z, xyz, bonds);
        hessfit_topology t;
        snprintf(what, sizeof what, "C%dH%d ring", rings[r].n_ring, 2 * rings[r].n_ring);
        HF_CALL(hessfit_topology_build(&m, NULL, &t));
        check_counts(&t, what, rings[r].bonds, rings[r].angles, rings[r].torsions, 0, rings[r].pairs);
        /* ring carbons: C-C 1-4 pairs only in the 6-ring, and those are the three para pairs */
        int cc = 0;
        for (int p = 0; p < t.n_pairs14; p++)
            if (t.pairs14[2 * p + 1] < rings[r].n_ring) {
                cc++;
                CHECK(rings[r].n_ring == 6 && t.pairs14[2 * p + 1] - t.pairs14[2 * p] == 3, "%s: C-C 1-4 pair %d-%d",
                      what, t.pairs14[2 * p] + 1, t.pairs14[2 * p + 1] + 1);
            }
        CHECK(cc == (rings[r].n_ring == 6 ? 3 : 0), "%s: %d C-C 1-4 pairs", what, cc);
        /* no torsion repeats an atom (3-ring) */
        for (int k = 0; k < t.n_torsions; k++)
            CHECK(t.torsions[4 * k] != t.torsions[4 * k + 3], "%s: torsion %d repeats an atom", what, k);
        hessfit_topology_free(&t);
        free(m.bonds);
    }
}

/* Formaldehyde H2C=O and ammonia-like N: one improper per 3-connected atom. */
static void test_impropers(void)
{
    static const int z[4] = {8, 6, 1, 1};
    static double xyz[12] = {0, 0, 1.21, 0, 0, 0, 0.94, 0, -0.54, -0.94, 0, -0.54};
    hessfit_molecule m = make_molecule(4, z, xyz, 0, NULL);
    hessfit_topology t;
    HF_CALL(hessfit_topology_build(&m, NULL, &t));
    check_counts(&t, "formaldehyde (radii)", 3, 3, 0, 1, 0);
    CHECK(t.impropers[0] == 0 && t.impropers[1] == 2 && t.impropers[2] == 3 && t.impropers[3] == 1,
          "improper order: neighbours ascending then centre, got %d %d %d %d", t.impropers[0], t.impropers[1],
          t.impropers[2], t.impropers[3]);
    hessfit_topology_free(&t);
}

/* The same molecule with bonds listed in another order and direction gives the same topology. */
static void test_determinism(void)
{
    int z[18], bonds[36], shuffled[36];
    double xyz[54];
    hessfit_molecule m = ring_alkane(6, z, xyz, bonds);
    hessfit_topology a, b;
    HF_CALL(hessfit_topology_build(&m, NULL, &a));
    int nb = m.n_bonds;
    for (int k = 0; k < nb; k++) { /* reverse order, swap ends */
        shuffled[2 * k] = m.bonds[2 * (nb - 1 - k) + 1];
        shuffled[2 * k + 1] = m.bonds[2 * (nb - 1 - k)];
    }
    memcpy(m.bonds, shuffled, 2 * sizeof(int) * (size_t)nb);
    HF_CALL(hessfit_topology_build(&m, NULL, &b));
    CHECK(same_topology(&a, &b), "topology depends on the order of the file's bonds");
    hessfit_topology_free(&a);
    hessfit_topology_free(&b);
    free(m.bonds);
}

/* ---- the rh-enamide training set -------------------------------------------------------------- */

static double distance(const hessfit_molecule *m, int i, int j)
{
    double d2 = 0;
    for (int c = 0; c < 3; c++) {
        double d = m->coords[3 * i + c] - m->coords[3 * j + c];
        d2 += d * d;
    }
    return sqrt(d2);
}

static int has_bond(const hessfit_topology *t, int i, int j)
{
    for (int b = 0; b < t->n_bonds; b++)
        if (t->bonds[2 * b] == (i < j ? i : j) && t->bonds[2 * b + 1] == (i < j ? j : i))
            return 1;
    return 0;
}

static void test_rh_enamide(void)
{
    hessfit_molecule_list list;
    const char *path = test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz");
    static const int atoms[9] = {36, 38, 38, 62, 62, 58, 58, 58, 58};
    int total_bonds = 0, total_angles = 0, total_torsions = 0, total_pairs = 0, total_impropers = 0;
    int ts_extra = 0;
    double min_ch = 1e9, max_ch = 0, min_rhc = 1e9, max_rhc = 0;

    HF_CALL(hessfit_mmo_read(path, &list));
    CHECK(list.n == 9, "%d structures", list.n);
    printf("  rh-enamide: bonds from radii (tolerance 1.3) vs the .mmo connectivity:\n");
    for (int s = 0; s < list.n; s++) {
        hessfit_molecule *m = &list.items[s];
        hessfit_topology file, radii, ts;
        hessfit_topology_options opt = hessfit_topology_default_options();
        char what[64];
        CHECK(m->n_atoms == atoms[s] && m->bonds_known, "structure %d: %d atoms", s + 1, m->n_atoms);
        HF_CALL(hessfit_topology_build(m, &opt, &file));
        snprintf(what, sizeof what, "rh-enamide %d (file)", s + 1);
        check_brute_force(&file, what);
        opt.use_file_bonds = 0;
        HF_CALL(hessfit_topology_build(m, &opt, &radii));
        snprintf(what, sizeof what, "rh-enamide %d (radii)", s + 1);
        check_brute_force(&radii, what);
        total_bonds += file.n_bonds;
        total_angles += file.n_angles;
        total_torsions += file.n_torsions;
        total_impropers += file.n_impropers;
        total_pairs += file.n_pairs14;

        /* Differences: exactly the forming C6-H18 bond of the TS (file only: 1.69-1.74 A, 1.58-1.63
         * times r_cov(C) + r_cov(H)) and Rh1-C6 (radii only: the alkene carbon MacroModel does not
         * bond to Rh, 2.29-2.31 A = 1.05-1.06 times the radii sum). Atoms are numbered alike in all
         * nine structures. */
        int file_only = 0, radii_only = 0;
        for (int b = 0; b < file.n_bonds; b++) {
            int i = file.bonds[2 * b], j = file.bonds[2 * b + 1];
            if (!has_bond(&radii, i, j)) {
                file_only++;
                printf("    structure %d: file only  %s(%d)-%s(%d) %.4f A\n", s + 1, m->atom_types[i], i + 1,
                       m->atom_types[j], j + 1, distance(m, i, j));
                CHECK(i == 5 && j == 17, "structure %d: unexpected file-only bond %d-%d", s + 1, i + 1, j + 1);
            }
        }
        for (int b = 0; b < radii.n_bonds; b++) {
            int i = radii.bonds[2 * b], j = radii.bonds[2 * b + 1];
            if (!has_bond(&file, i, j)) {
                radii_only++;
                printf("    structure %d: radii only %s(%d)-%s(%d) %.4f A\n", s + 1, m->atom_types[i], i + 1,
                       m->atom_types[j], j + 1, distance(m, i, j));
                CHECK(i == 0 && j == 5, "structure %d: unexpected radii-only bond %d-%d", s + 1, i + 1, j + 1);
            }
        }
        CHECK(file_only == 1 && radii_only == 1, "structure %d: %d file-only, %d radii-only bonds", s + 1, file_only,
              radii_only);
        double ch = distance(m, 5, 17), rhc = distance(m, 0, 5);
        min_ch = fmin(min_ch, ch), max_ch = fmax(max_ch, ch);
        min_rhc = fmin(min_rhc, rhc), max_rhc = fmax(max_rhc, rhc);
        CHECK(ch > 1.3 * (hessfit_covalent_radius(6) + hessfit_covalent_radius(1)), "C6-H18 inside the normal tolerance");

        /* The TS tolerance (applied to every pair, instead of 1.3) picks up the forming bond; at 1.65 it
         * also bonds geminal 1-3 pairs (C-C-C at 1.59 times the radii sum), which is why file
         * connectivity is the default for transition states. */
        opt.ts_bond_tolerance = 1.65;
        HF_CALL(hessfit_topology_build(m, &opt, &ts));
        CHECK(has_bond(&ts, 5, 17), "structure %d: TS tolerance 1.65 misses C6-H18", s + 1);
        CHECK(!has_bond(&radii, 5, 17), "structure %d: tolerance 1.3 bonds C6-H18", s + 1);
        for (int b = 0; b < file.n_bonds; b++)
            CHECK(has_bond(&ts, file.bonds[2 * b], file.bonds[2 * b + 1]), "TS tolerance loses a file bond");
        ts_extra += ts.n_bonds - file.n_bonds;
        hessfit_topology_free(&file);
        hessfit_topology_free(&radii);
        hessfit_topology_free(&ts);
    }
    printf("  C6-H18 %.4f-%.4f A, Rh1-C6 %.4f-%.4f A; TS tolerance 1.65 adds %d bonds beyond the files'\n", min_ch,
           max_ch, min_rhc, max_rhc, ts_extra);
    printf("  file topologies, nine structures: %d bonds %d angles %d torsions %d impropers %d 1-4 pairs\n",
           total_bonds, total_angles, total_torsions, total_impropers, total_pairs);
    CHECK(total_bonds == 500, "%d bonds (the .mmo announces 38+40+40+67+67+62*4 = 500)", total_bonds);
    /* measured, each structure cross-checked by brute force above */
    CHECK(total_angles == 1050 && total_torsions == 1852 && total_impropers == 32 && total_pairs == 1588,
          "term totals changed");
    CHECK(min_ch > 1.68 && max_ch < 1.75 && min_rhc > 2.28 && max_rhc < 2.32, "distances");
    hessfit_molecule_list_free(&list);
}

/* ---- bad input -------------------------------------------------------------------------------- */

static void expect_error(hessfit_status got, hessfit_status want, const char *part, const char *what)
{
    CHECK(got == want, "%s: got %s, expected %s (%s)", what, hessfit_status_string(got), hessfit_status_string(want),
          hessfit_last_error());
    CHECK(strstr(hessfit_last_error(), part) != NULL, "%s: message lacks '%s': %s", what, part, hessfit_last_error());
    printf("  %-28s -> %s\n", what, hessfit_last_error());
}

static void test_bad_input(void)
{
    hessfit_topology t;
    hessfit_topology_options opt = hessfit_topology_default_options();
    int z[8];
    double xyz[24];
    memcpy(z, ethane_z, sizeof z);
    memcpy(xyz, ethane_xyz, sizeof xyz);
    hessfit_molecule m = make_molecule(8, z, xyz, 7, ethane_file_bonds);

    expect_error(hessfit_topology_build(NULL, NULL, &t), HESSFIT_ERROR_NULL_ARGUMENT, "mol", "NULL molecule");
    expect_error(hessfit_topology_build(&m, NULL, NULL), HESSFIT_ERROR_NULL_ARGUMENT, "topo", "NULL topology");
    m.n_atoms = 0;
    expect_error(hessfit_topology_build(&m, NULL, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "0 atoms", "no atoms");
    CHECK(t.n_bonds == 0 && t.bonds == NULL, "failed build leaves a zeroed topology");
    m.n_atoms = 8;
    m.bonds[3] = 8; /* 0-based 8 = atom 9 */
    expect_error(hessfit_topology_build(&m, NULL, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "atoms 2 and 9", "bond out of range");
    m.bonds[3] = 1;
    expect_error(hessfit_topology_build(&m, NULL, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "atom 2 to itself", "self bond");
    m.bonds[2] = 3, m.bonds[3] = 1; /* bond 2: 4-2, the same as bond 4 (2-4) */
    expect_error(hessfit_topology_build(&m, NULL, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "2-4 is listed twice", "repeated bond");
    m.bonds[2] = 1, m.bonds[3] = 2;
    m.n_bonds = -1;
    expect_error(hessfit_topology_build(&m, NULL, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "bond count", "negative bond count");
    m.n_bonds = 7;
    HF_CALL(hessfit_topology_build(&m, NULL, &t)); /* restored */
    hessfit_topology_free(&t);

    opt.use_file_bonds = 0;
    opt.bond_tolerance = 0.0;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "tolerance 0", "zero tolerance");
    opt.bond_tolerance = NAN;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "tolerance", "NaN tolerance");
    opt.bond_tolerance = 5.0;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "tolerance 5", "huge tolerance");
    opt.bond_tolerance = 1.3;
    opt.ts_bond_tolerance = -1.0;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "TS bond tolerance", "negative TS");
    opt.ts_bond_tolerance = NAN;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "TS bond tolerance", "NaN TS");
    opt.ts_bond_tolerance = 0.0;
    xyz[4] = NAN;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_NONFINITE, "atom 2", "NaN coordinate");
    xyz[4] = xyz[1] + 0.1; /* atom 2 within 0.1 A of atom 1 */
    xyz[3] = xyz[0], xyz[5] = xyz[2];
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_INVALID_ARGUMENT, "atoms 1 and 2", "coincident atoms");
    memcpy(xyz, ethane_xyz, sizeof xyz);
    z[5] = 0;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_UNKNOWN_ELEMENT, "atom 6", "atomic number 0");
    z[5] = 119;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_UNKNOWN_ELEMENT, "atomic number 119", "atomic number 119");
    z[5] = 1;
    m.coords = NULL;
    expect_error(hessfit_topology_build(&m, &opt, &t), HESSFIT_ERROR_NULL_ARGUMENT, "coordinates", "no coordinates");
    m.coords = xyz;
    HF_CALL(hessfit_topology_build(&m, &opt, &t));
    CHECK(t.n_bonds == 7, "restored molecule");
    hessfit_topology_free(&t);
    free(m.bonds);

    /* the radii table: spot values of Cordero et al. 2008 and its bounds */
    CHECK(hessfit_covalent_radius(1) == 0.31 && hessfit_covalent_radius(6) == 0.76 && hessfit_covalent_radius(15) == 1.07 &&
              hessfit_covalent_radius(45) == 1.42 && hessfit_covalent_radius(96) == 1.69,
          "covalent radii H C P Rh Cm");
    CHECK(hessfit_covalent_radius(0) == 0.0 && hessfit_covalent_radius(97) == 0.0 && hessfit_covalent_radius(-3) == 0.0,
          "radii outside 1..96");
}

int main(void)
{
    test_ethane();
    test_rings();
    test_impropers();
    test_determinism();
    test_rh_enamide();
    test_bad_input();
    printf("test_topology: all checks passed\n");
    return 0;
}
