/*
 * `hessfit seminario`: bond and angle force constants from QM Hessians (hessfit_seminario.h).
 *
 * One structure: every bond (the file's connectivity, or perceived from covalent radii) and angle
 * of the molecule with its estimate, then the mean per element combination ("C-H", "H-C-H").
 * With --ff and --structures (a MacroModel .mmo and one Hessian per structure, in order): the
 * estimates of every bond and angle the .mmo assigns to a force-field line, averaged per line
 * (q2mm's Seminario start), next to the line's current values; --out writes the .fld with those
 * lines' constants and equilibria replaced (only the parameters of OPT substructures, as q2mm,
 * unless --all-lines). Exit 0 on success, 1 on a failure reported on stderr, 2 on a usage error.
 */
#include "hessfit_elements.h"
#include "hessfit_forcefield.h"
#include "hessfit_molecule.h"
#include "hessfit_seminario.h"
#include "hessfit_typing.h"
#include "hessfit_path.h"
#include "hf_commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static void usage(FILE *out)
{
    fprintf(out,
            "usage: hessfit seminario --hessian FILE [--xyz FILE] [--method original|modified]\n"
            "                         [--ts keep|replace|abs] [--scaling S] [--q2mm-units] [--bond-tolerance X]\n"
            "       hessfit seminario --ff FILE.fld --structures FILE.mmo --hessian FILE [--hessian FILE]...\n"
            "                         [--out FILE.fld] [--all-lines] [options above]\n"
            "\n"
            "Seminario force constants from Cartesian QM Hessians (Hartree/Bohr^2): for each bond the mean of\n"
            "the two directional projections of its 3x3 Hessian blocks, for each angle two in-plane springs\n"
            "in series (Seminario 1996, as q2mm); --method modified divides each angle projection by Allen,\n"
            "Payne and Cole's (2018) factor for the other angles sharing the bond.\n"
            "\n"
            "  --hessian FILE      QM Hessian: Gaussian .fchk/.log, Jaguar .in, ORCA .hess, or a .npy matrix\n"
            "                      (then --xyz gives the geometry); .gz accepted. With --structures: one per\n"
            "                      structure, in the order of the .mmo\n"
            "  --xyz FILE          geometry for a .npy Hessian (or to replace the Hessian file's geometry)\n"
            "  --ff FILE.fld       MM3* force field whose lines the .mmo names\n"
            "  --structures FILE   MacroModel .mmo: the structures, their coordinates (used for the\n"
            "                      projections, as q2mm does) and the force-field line of every term\n"
            "  --out FILE.fld      write the force field with the estimated lines replaced (atomic write)\n"
            "  --all-lines         replace every line with estimates, not only those of OPT substructures\n"
            "  --method M          original (default) or modified\n"
            "  --ts T              keep (default: the Hessian as is; transition-state bonds come out negative),\n"
            "                      replace (q2mm/Lime-Norrby: the most negative Hessian eigenvalue becomes\n"
            "                      1 Hartree/Bohr^2, other negative ones 0), abs (|eigenvalues| of each block)\n"
            "  --scaling S         factor on every force constant (default 0.963, q2mm's DFT scaling)\n"
            "  --q2mm-units        q2mm's rounded unit factors (15.569141 mdyn/A, 4.3598 mdyn*A/rad^2 per\n"
            "                      Hartree) to reproduce its numbers; default CODATA 2018\n"
            "  --bond-tolerance X  bonds of a structure without connectivity: r <= X (r_cov(i) + r_cov(j))\n"
            "                      (default 1.3)\n"
            "\n"
            "Output: k in kcal/mol/A^2 or kcal/mol/rad^2 for E = k (x - x0)^2 (half the spring constant),\n"
            "k_mdyn the spring constant in mdyn/A or mdyn*A/rad^2 (the MM3 .fld unit), k_au in Hartree/Bohr^2\n"
            "or Hartree/rad^2. With --structures, a line whose estimates are all <= 0 keeps its constant and\n"
            "equilibria are the mean geometry of the structures (with --q2mm-units, of the lengths and angles the\n"
            ".mmo printed, as q2mm does). Atoms are numbered from 1.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return hf_cli_usage_error("seminario", usage, fmt, arg);
}

static int fail(void)
{
    fprintf(stderr, "hessfit seminario: %s\n", hessfit_last_error());
    return 1;
}


static int parse_positive(const char *text, double max, double *value)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || !(v > 0.0) || v > max)
        return 0;
    *value = v;
    return 1;
}

/* One QM structure with its Hessian, by file extension. */
static hessfit_status read_hessian(const char *path, const char *xyz, hessfit_molecule *mol)
{
    hessfit_status st;
    if (hessfit_path_has_extension(path, ".npy")) {
        if (xyz == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: a .npy Hessian needs --xyz for the geometry", path);
        return hessfit_npy_xyz_read(xyz, path, mol);
    }
    st = hessfit_molecule_read(path, NULL, mol);
    if (st != HESSFIT_SUCCESS)
        return st;
    if (mol->hessian == NULL) {
        hessfit_molecule_free(mol);
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s: holds no Hessian", path);
    }
    if (xyz != NULL) { /* the geometry of another file, same atoms */
        hessfit_molecule g;
        if ((st = hessfit_xyz_molecule_read(xyz, &g)) != HESSFIT_SUCCESS) {
            hessfit_molecule_free(mol);
            return st;
        }
        if (g.n_atoms != mol->n_atoms) {
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s: %d atoms, but the Hessian file %s has %d", xyz, g.n_atoms, path,
                          mol->n_atoms);
        } else {
            for (int a = 0; a < g.n_atoms && st == HESSFIT_SUCCESS; a++)
                if (g.atomic_numbers[a] != mol->atomic_numbers[a])
                    st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: atom %d is %s, but %s in %s", xyz, a + 1,
                                  hessfit_element_symbol(g.atomic_numbers[a]), hessfit_element_symbol(mol->atomic_numbers[a]),
                                  path);
        }
        if (st == HESSFIT_SUCCESS)
            memcpy(mol->coords, g.coords, 3 * (size_t)g.n_atoms * sizeof *g.coords);
        hessfit_molecule_free(&g);
        if (st != HESSFIT_SUCCESS)
            hessfit_molecule_free(mol);
    }
    return st;
}

static const char *symbol(const hessfit_molecule *m, int a)
{
    const char *s = m->atomic_numbers != NULL ? hessfit_element_symbol(m->atomic_numbers[a]) : NULL;
    return s != NULL ? s : "?";
}

static void print_options(const hessfit_seminario_options *o, const char *what)
{
    printf("# hessfit seminario: %s; method %s, ts %s, scaling %g, %s units\n", what,
           o->method == HESSFIT_SEMINARIO_MODIFIED ? "modified" : "original",
           o->ts == HESSFIT_SEMINARIO_TS_REPLACE     ? "replace"
           : o->ts == HESSFIT_SEMINARIO_TS_BLOCK_ABS ? "abs"
                                                : "keep",
           o->scaling, o->q2mm_units ? "q2mm" : "CODATA");
    printf("# k: kcal/mol/A^2 or kcal/mol/rad^2 (E = k (x - x0)^2); k_mdyn: mdyn/A or mdyn*A/rad^2 (spring);\n"
           "# k_au: Hartree/Bohr^2 or Hartree/rad^2 (spring); values A or degrees\n");
}

static void print_estimate_row(const char *prefix, const hessfit_molecule *m, const hessfit_seminario_estimate *e)
{
    char atoms[40], elements[24];
    if (e->kind == HESSFIT_TERM_BOND) {
        snprintf(atoms, sizeof atoms, "%d-%d", e->atoms[0] + 1, e->atoms[1] + 1);
        snprintf(elements, sizeof elements, "%s-%s", symbol(m, e->atoms[0]), symbol(m, e->atoms[1]));
    } else {
        snprintf(atoms, sizeof atoms, "%d-%d-%d", e->atoms[0] + 1, e->atoms[1] + 1, e->atoms[2] + 1);
        snprintf(elements, sizeof elements, "%s-%s-%s", symbol(m, e->atoms[0]), symbol(m, e->atoms[1]),
                 symbol(m, e->atoms[2]));
    }
    printf("%s%-6s %-14s %-10s %11.5f %13.4f %11.5f %12.7f%s\n", prefix, hessfit_term_kind_name(e->kind), atoms, elements,
           e->value, e->k, e->k_mdyn, e->k_au, e->linear ? "  (linear)" : "");
}

/* ---- one structure ------------------------------------------------------------------------- */

/* Element key of a term ("C-H", "H-C-H": outer atoms in alphabetical order). */
static void element_key(const hessfit_molecule *m, hessfit_term_kind kind, const int *atoms, char *key, size_t size)
{
    const char *a = symbol(m, atoms[0]), *b = symbol(m, atoms[1]);
    if (kind == HESSFIT_TERM_BOND) {
        if (strcmp(a, b) > 0) {
            const char *t = a;
            a = b;
            b = t;
        }
        snprintf(key, size, "%s-%s", a, b);
    } else {
        const char *c = symbol(m, atoms[2]);
        if (strcmp(a, c) > 0) {
            const char *t = a;
            a = c;
            c = t;
        }
        snprintf(key, size, "%s-%s-%s", a, b, c);
    }
}

static int run_single(const char *hessian, const char *xyz, const hessfit_seminario_options *opt, double tolerance)
{
    hessfit_molecule mol;
    hessfit_topology topo;
    hessfit_topology_options topt = hessfit_topology_default_options();
    hessfit_seminario *s = NULL;
    hessfit_seminario_instance *inst = NULL;
    hessfit_seminario_estimate *est = NULL;
    hessfit_seminario_group *groups = NULL;
    char (*keys)[24] = NULL;
    int n_inst, n_keys = 0, n_groups = 0, rc = 1, perceived;

    memset(&topo, 0, sizeof topo);
    if (read_hessian(hessian, xyz, &mol) != HESSFIT_SUCCESS)
        return fail();
    topt.bond_tolerance = tolerance;
    if (hessfit_topology_build(&mol, &topt, &topo) != HESSFIT_SUCCESS)
        goto done;
    if ((perceived = !mol.bonds_known)) { /* the modified method takes the neighbours from the molecule */
        free(mol.bonds);
        mol.bonds = malloc(2 * (size_t)topo.n_bonds * sizeof *mol.bonds + 1);
        if (mol.bonds == NULL) {
            hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d bonds", topo.n_bonds);
            goto done;
        }
        memcpy(mol.bonds, topo.bonds, 2 * (size_t)topo.n_bonds * sizeof *mol.bonds);
        mol.n_bonds = topo.n_bonds;
        mol.bonds_known = 1;
    }
    if (hessfit_seminario_create(&mol, opt, &s) != HESSFIT_SUCCESS)
        goto done;
    n_inst = topo.n_bonds + topo.n_angles;
    inst = calloc((size_t)n_inst + 1, sizeof *inst);
    est = calloc((size_t)n_inst + 1, sizeof *est);
    keys = calloc((size_t)n_inst + 1, sizeof *keys);
    if (inst == NULL || est == NULL || keys == NULL) {
        hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d terms", n_inst);
        goto done;
    }
    for (int t = 0; t < n_inst; t++) {
        char key[24];
        int g;
        inst[t].molecule = 0;
        inst[t].kind = t < topo.n_bonds ? HESSFIT_TERM_BOND : HESSFIT_TERM_ANGLE;
        inst[t].atoms[2] = -1;
        if (t < topo.n_bonds)
            memcpy(inst[t].atoms, topo.bonds + 2 * t, 2 * sizeof(int));
        else
            memcpy(inst[t].atoms, topo.angles + 3 * (t - topo.n_bonds), 3 * sizeof(int));
        inst[t].value = NAN;
        element_key(&mol, inst[t].kind, inst[t].atoms, key, sizeof key);
        for (g = 0; g < n_keys && strcmp(keys[g], key) != 0; g++)
            ;
        if (g == n_keys)
            snprintf(keys[n_keys++], sizeof keys[0], "%s", key);
        inst[t].group = g;
    }
    if (hessfit_seminario_average(&s, 1, inst, n_inst, est, &groups, &n_groups) != HESSFIT_SUCCESS)
        goto done;

    print_options(opt, hessian);
    printf("# %d atoms, %d bonds%s, %d angles\n", mol.n_atoms, topo.n_bonds,
           perceived ? " (perceived)" : "", topo.n_angles);
    printf("%-6s %-14s %-10s %11s %13s %11s %12s\n", "kind", "atoms", "elements", "value", "k", "k_mdyn", "k_au");
    for (int t = 0; t < n_inst; t++)
        print_estimate_row("", &mol, &est[t]);
    printf("\n# per element combination: mean over its terms (k over the k > 0 ones)\n");
    printf("%-10s %-6s %4s %5s %11s %13s %11s %12s\n", "elements", "kind", "n", "used", "value", "k", "k_mdyn",
           "k_au");
    for (int g = 0; g < n_groups; g++) {
        printf("%-10s %-6s %4d %5d %11.5f", keys[groups[g].group], hessfit_term_kind_name(groups[g].kind),
               groups[g].n_instances, groups[g].n_used, groups[g].value);
        if (groups[g].n_used > 0)
            printf(" %13.4f %11.5f %12.7f\n", groups[g].k, groups[g].k_mdyn, groups[g].k_au);
        else
            printf(" %13s %11s %12s  (all estimates <= 0)\n", "-", "-", "-");
    }
    rc = 0;
done:
    if (rc != 0)
        fail();
    free(inst);
    free(est);
    free(keys);
    free(groups);
    hessfit_seminario_free(s);
    hessfit_topology_free(&topo);
    hessfit_molecule_free(&mol);
    return rc;
}

/* ---- structures + force field ------------------------------------------------------------------ */

static void param_types(const hessfit_ff_param *p, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int t = 0; t < p->n_types && n + 1 < size; t++) {
        int w = snprintf(out + n, size - n, "%s%s", t ? "-" : "", p->types[t]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static int run_forcefield(const char *ff_path, const char *mmo_path, const char *const *hessians, int n_hessians,
                          const char *out_path, int all_lines, const hessfit_seminario_options *opt)
{
    hessfit_molecule_list list;
    hessfit_forcefield ff, old;
    hessfit_seminario **est = NULL;
    hessfit_seminario_instance *inst = NULL;
    hessfit_seminario_group *groups = NULL;
    int n_inst = 0, cap = 0, n_groups = 0, n_changed = 0, n_skipped = 0, rc = 1;

    memset(&list, 0, sizeof list);
    memset(&ff, 0, sizeof ff);
    memset(&old, 0, sizeof old);
    if (hessfit_fld_read(ff_path, &ff) != HESSFIT_SUCCESS || hessfit_fld_read(ff_path, &old) != HESSFIT_SUCCESS ||
        hessfit_mmo_read(mmo_path, &list) != HESSFIT_SUCCESS)
        goto done;
    if (list.n != n_hessians) {
        hessfit_error(HESSFIT_ERROR_COUNT, "%s holds %d structures, but %d Hessian files were given (one per structure, in "
                 "order)", mmo_path, list.n, n_hessians);
        goto done;
    }
    est = calloc((size_t)list.n, sizeof *est);
    if (est == NULL) {
        hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory");
        goto done;
    }
    for (int m = 0; m < list.n; m++) {
        hessfit_molecule *sm = &list.items[m], q;
        hessfit_status st;
        if (read_hessian(hessians[m], NULL, &q) != HESSFIT_SUCCESS)
            goto done;
        st = HESSFIT_SUCCESS;
        if (q.n_atoms != sm->n_atoms)
            st = hessfit_error(HESSFIT_ERROR_COUNT, "%s: %d atoms, but structure %d of %s ('%s') has %d", hessians[m], q.n_atoms,
                          m + 1, mmo_path, sm->name, sm->n_atoms);
        for (int a = 0; a < q.n_atoms && st == HESSFIT_SUCCESS; a++)
            if (q.atomic_numbers[a] != sm->atomic_numbers[a])
                st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: atom %d is %s, but %s in structure %d of %s",
                              hessians[m], a + 1, symbol(&q, a), symbol(sm, a), m + 1, mmo_path);
        if (st == HESSFIT_SUCCESS) {
            /* q2mm projects with the .mmo coordinates; the Hessian file's own geometry is not used */
            sm->hessian = q.hessian;
            q.hessian = NULL;
        }
        hessfit_molecule_free(&q);
        if (st != HESSFIT_SUCCESS || hessfit_seminario_create(sm, opt, &est[m]) != HESSFIT_SUCCESS)
            goto done;
        for (int t = 0; t < sm->n_reported_terms; t++) {
            const hessfit_reported_term *rt = &sm->reported_terms[t];
            if ((rt->kind != HESSFIT_TERM_BOND && rt->kind != HESSFIT_TERM_ANGLE) || rt->ff_line <= 0)
                continue;
            if (n_inst == cap) {
                hessfit_seminario_instance *grown;
                cap = cap ? 2 * cap : 256;
                grown = realloc(inst, (size_t)cap * sizeof *inst);
                if (grown == NULL) {
                    hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %d terms", cap);
                    goto done;
                }
                inst = grown;
            }
            inst[n_inst].molecule = m;
            inst[n_inst].kind = rt->kind;
            memcpy(inst[n_inst].atoms, rt->atoms, sizeof inst[n_inst].atoms);
            inst[n_inst].group = rt->ff_line;
            /* q2mm averages the geometry MacroModel printed; otherwise the structure's own (NAN) */
            inst[n_inst].value = opt->q2mm_units ? rt->actual : NAN;
            n_inst++;
        }
    }
    if (hessfit_seminario_average(est, list.n, inst, n_inst, NULL, &groups, &n_groups) != HESSFIT_SUCCESS)
        goto done;
    if (hessfit_seminario_apply(&ff, groups, n_groups, all_lines ? 0u : HESSFIT_SEMINARIO_APPLY_OPT_ONLY, &n_changed,
                           &n_skipped) != HESSFIT_SUCCESS)
        goto done;

    print_options(opt, ff_path);
    printf("# %d structures from %s, %d bond and angle terms on %d force-field lines\n", list.n, mmo_path, n_inst,
           n_groups);
    printf("%-6s %-6s %-16s %4s %5s %11s %13s %11s %12s   %11s %13s  %s\n", "line", "kind", "types", "n", "used",
           "value", "k", "k_mdyn", "k_au", "old value", "old k", "note");
    for (int g = 0; g < n_groups; g++) {
        const hessfit_seminario_group *gr = &groups[g];
        int pi = hessfit_forcefield_param_at_line(&old, gr->group);
        char types[48] = "";
        const char *note = "";
        if (pi < 0)
            note = "no parameter on this line";
        else if (!all_lines && !hessfit_seminario_param_marked_opt(&old, &old.params[pi]))
            note = "not in an OPT substructure: unchanged";
        else if (gr->n_used == 0)
            note = "all estimates <= 0: constant kept";
        if (pi >= 0)
            param_types(&old.params[pi], types, sizeof types);
        printf("%-6d %-6s %-16s %4d %5d %11.5f", gr->group, hessfit_term_kind_name(gr->kind), types, gr->n_instances,
               gr->n_used, gr->value);
        if (gr->n_used > 0)
            printf(" %13.4f %11.5f %12.7f", gr->k, gr->k_mdyn, gr->k_au);
        else
            printf(" %13s %11s %12s", "-", "-", "-");
        if (pi >= 0)
            printf("   %11.5f %13.4f", old.params[pi].values[1], old.params[pi].values[0]);
        else
            printf("   %11s %13s", "-", "-");
        printf("  %s\n", note);
    }
    printf("# %d parameters changed, %d lines left alone\n", n_changed, n_skipped);
    if (out_path != NULL) {
        if (hessfit_fld_write(&ff, out_path) != HESSFIT_SUCCESS)
            goto done;
        printf("# wrote %s\n", out_path);
    }
    rc = 0;
done:
    if (rc != 0)
        fail();
    if (est != NULL)
        for (int m = 0; m < list.n; m++)
            hessfit_seminario_free(est[m]);
    free(est);
    free(inst);
    free(groups);
    hessfit_molecule_list_free(&list);
    hessfit_forcefield_free(&ff);
    hessfit_forcefield_free(&old);
    return rc;
}

/* The command with hessians[] room for every argument (each --hessian takes one). */
static int seminario(int argc, char **argv, const char **hessians)
{
    const char *xyz = NULL, *ff = NULL, *mmo = NULL, *out = NULL;
    int n_hessians = 0, all_lines = 0;
    double tolerance = 1.3;
    hessfit_seminario_options opt = hessfit_seminario_default_options();
    static const struct option options[] = {
        {"hessian", required_argument, NULL, 'H'},   {"xyz", required_argument, NULL, 'x'},
        {"ff", required_argument, NULL, 'f'},        {"structures", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},       {"method", required_argument, NULL, 'm'},
        {"ts", required_argument, NULL, 't'},        {"scaling", required_argument, NULL, 'c'},
        {"bond-tolerance", required_argument, NULL, 'b'}, {"q2mm-units", no_argument, NULL, 'q'},
        {"all-lines", no_argument, NULL, 'a'},       {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};

    for (int o; (o = hf_cli_getopt(argc, argv, options, "seminario", usage)) != -1;) {
        const char *v = optarg;
        switch (o) {
        case HF_CLI_HELP: return 0;
        case HF_CLI_USAGE_ERROR: return 2;
        case 'q': opt.q2mm_units = 1; break;
        case 'a': all_lines = 1; break;
        case 'H': hessians[n_hessians++] = v; break;
        case 'x': xyz = v; break;
        case 'f': ff = v; break;
        case 's': mmo = v; break;
        case 'o': out = v; break;
        case 'm':
            if (strcmp(v, "original") == 0)
                opt.method = HESSFIT_SEMINARIO_ORIGINAL;
            else if (strcmp(v, "modified") == 0)
                opt.method = HESSFIT_SEMINARIO_MODIFIED;
            else
                return usage_error("--method is original or modified, not '%s'", v);
            break;
        case 't':
            if (strcmp(v, "keep") == 0)
                opt.ts = HESSFIT_SEMINARIO_TS_KEEP;
            else if (strcmp(v, "replace") == 0)
                opt.ts = HESSFIT_SEMINARIO_TS_REPLACE;
            else if (strcmp(v, "abs") == 0)
                opt.ts = HESSFIT_SEMINARIO_TS_BLOCK_ABS;
            else
                return usage_error("--ts is keep, replace or abs, not '%s'", v);
            break;
        case 'c':
            if (!parse_positive(v, 10.0, &opt.scaling))
                return usage_error("--scaling needs a number in (0, 10], not '%s'", v);
            break;
        default: /* 'b' */
            if (!parse_positive(v, 3.0, &tolerance))
                return usage_error("--bond-tolerance needs a number in (0, 3], not '%s'", v);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (n_hessians == 0)
        return usage_error("%s", "--hessian FILE is required");
    if ((ff == NULL) != (mmo == NULL))
        return usage_error("%s", "--ff and --structures go together");
    if (ff != NULL) {
        if (xyz != NULL)
            return usage_error("%s", "--xyz is for a single structure; with --structures the .mmo gives the geometry");
        if (!hessfit_path_has_extension(ff, ".fld"))
            return usage_error("--ff must be an MM3* .fld file, not '%s'", ff);
        if (!hessfit_path_has_extension(mmo, ".mmo"))
            return usage_error("--structures must be a MacroModel .mmo file, not '%s'", mmo);
        return run_forcefield(ff, mmo, hessians, n_hessians, out, all_lines, &opt);
    }
    if (out != NULL)
        return usage_error("%s", "--out needs --ff and --structures");
    if (all_lines)
        return usage_error("%s", "--all-lines needs --ff and --structures");
    if (n_hessians > 1)
        return usage_error("%s", "several --hessian files need --ff and --structures");
    return run_single(hessians[0], xyz, &opt, tolerance);
}

int hf_cmd_seminario(int argc, char **argv)
{
    const char **hessians = malloc((size_t)argc * sizeof *hessians);
    if (hessians == NULL) {
        fprintf(stderr, "hessfit seminario: out of memory\n");
        return 1;
    }
    int rc = seminario(argc, argv, hessians);
    free(hessians);
    return rc;
}
