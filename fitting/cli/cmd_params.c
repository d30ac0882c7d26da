/*
 * `hessfit params`: every bonded term of the training structures with the force-field parameter it
 * matched and the rule that matched it (hessfit_typing.h), then a summary per parameter (how many
 * terms use it, in which structures), the rule counts, what each no-term and prefer pattern
 * covered, and the bonded parameters no term uses. A structure whose terms cannot all be matched
 * (a term without a parameter, or an ambiguous one: equally good candidates with different values)
 * is listed as failed with the library's message, also on stderr, and the others are still listed.
 * Exit 0 on success, 1 on any failure (a structure that failed, a file that cannot be read), 2 on
 * a usage error.
 */
#include "hessfit_forcefield.h"
#include "hessfit_mm3.h"
#include "hessfit_molecule.h"
#include "hessfit_typing.h"
#include "hessfit_path.h"
#include "hf_commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void usage(FILE *out)
{
    fprintf(out,
            "usage: hessfit params --ff FILE.fld|FILE.frcmod --structures FILE [--structures FILE]...\n"
            "                      [--no-term PATTERN]... [--prefer LINE]... [--bond-tolerance X]\n"
            "                      [--ts-bond-tolerance X] [--perceive-bonds] [--mm3] [--help]\n"
            "\n"
            "Lists every bond, angle, torsion and improper of each structure with the parameter it matched:\n"
            "  structure  kind  atoms (1-based)  types  ->  line kind types values  rule  detail\n"
            "then how many terms use each parameter and in which structures, and the parameters no term uses.\n"
            "\n"
            "Rules, first that applies: ff-line (the .fld line MacroModel reported in the .mmo), types (exact\n"
            "atom types, either direction), equivalence (after the force field's atom-type equivalences),\n"
            "wildcard (the most specific parameter with wildcard types). Substructure parameters are reached\n"
            "only through ff-line. For an MM3 .fld, a candidate's bond marks must fit the molecule's bond\n"
            "orders (- single, aromatic or without order; = double or aromatic; %% triple; . without order;\n"
            "* any) and its environment descriptor ('O200 0000': atom 1 bears an O2) must hold; a satisfied\n"
            "condition beats none, and a descriptor hessfit cannot evaluate (with continuation lines) ranks\n"
            "below none. Equally good candidates with equal values: the first line; with different values\n"
            "the term is ambiguous, an error unless --prefer names one of them. A term nothing matches is an\n"
            "error, unless a --no-term pattern covers it. A structure that fails is listed as failed.\n"
            "\n"
            "  --ff FILE               MM3* .fld or AMBER .frcmod (.gz accepted)\n"
            "  --structures FILE       .mmo (MacroModel report: parameters by ff line), .mol2 (by atom types), or\n"
            "                          any structure file hessfit reads (QM files, .xyz: typed by element symbol);\n"
            "                          repeatable\n"
            "  --no-term PATTERN       declare terms without a parameter: 'bond RH H1', 'torsion * C2 N2 *'\n"
            "                          (kind, then atom types, * any; impropers name the centre first); repeatable\n"
            "  --prefer LINE           settle ties of different values among equally good candidates: the\n"
            "                          parameter on force-field line LINE wins when it is one of them; repeatable\n"
            "  --bond-tolerance X      bond when r <= X (r_cov(i) + r_cov(j)), Cordero 2008 radii (default 1.3);\n"
            "                          used for structures without connectivity or with --perceive-bonds\n"
            "  --ts-bond-tolerance X   a looser tolerance applied instead of --bond-tolerance (transition states)\n"
            "  --perceive-bonds        ignore the files' connectivity and perceive bonds from the radii\n"
            "  --mm3                   (an .fld) also list each structure's MM3* model as MacroModel builds it\n"
            "                          (docs/mm3.md): every stretch, bend, stretch-bend, bend-bend, torsion,\n"
            "                          torsion-stretch and out-of-plane term, the reduced hydrogens, each atom's\n"
            "                          charge and van der Waals line, the pairs' count and the hydrogen bonds,\n"
            "                          each constant with its .fld line or the rule that derives it\n"
            "\n"
            "Units of the values: bond k kcal/mol/A^2, r0 A (.fld: mu D, the bond moment); angle k kcal/mol/rad^2,\n"
            "theta0 deg; torsion (k kcal/mol, phase deg, n) per Fourier term; improper k kcal/mol/rad^2 (harmonic)\n"
            "or Fourier terms; stretch-bend k mdyn/rad (MacroModel's: E = 601.99392 k (dr1 + dr2) dtheta kJ/mol).\n"
            "Energies E = k (x - x0)^2, no factor 1/2.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return hf_cli_usage_error("params", usage, fmt, arg);
}


static int parse_tolerance(const char *text, double *value)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v <= 0.0 || v > 3.0)
        return 0;
    *value = v;
    return 1;
}

/* Fourier triples (k, phase, n). */
static void print_fourier(FILE *out, const hessfit_ff_param *p)
{
    for (int v = 0; v + 2 < p->n_values; v += 3)
        fprintf(out, "%s(%.4f,%g,%g)", v ? " " : "", p->values[v], p->values[v + 1], p->values[v + 2]);
}

static void print_values(FILE *out, const hessfit_ff_param *p)
{
    switch (p->kind) {
    case HESSFIT_PARAM_BOND:
        fprintf(out, "k=%.4f r0=%.4f", p->n_values > 0 ? p->values[0] : NAN, p->n_values > 1 ? p->values[1] : NAN);
        if (p->n_values > 2) /* an .fld's bond moment */
            fprintf(out, " mu=%.4f", p->values[2]);
        break;
    case HESSFIT_PARAM_STRETCH_BEND:
        fprintf(out, "k=%.4f", p->n_values > 0 ? p->values[0] : NAN);
        break;
    case HESSFIT_PARAM_ANGLE:
        fprintf(out, "k=%.4f theta0=%.4f", p->n_values > 0 ? p->values[0] : NAN, p->n_values > 1 ? p->values[1] : NAN);
        break;
    case HESSFIT_PARAM_IMPROPER:
        if (p->improper_form == HESSFIT_IMPROPER_HARMONIC)
            fprintf(out, "k=%.4f", p->n_values > 0 ? p->values[0] : NAN);
        else
            print_fourier(out, p);
        break;
    case HESSFIT_PARAM_TORSION:
        print_fourier(out, p);
        break;
    default:
        for (int v = 0; v < p->n_values; v++)
            fprintf(out, "%s%.4f", v ? " " : "", p->values[v]);
        break;
    }
}

static void print_param(FILE *out, const hessfit_forcefield *ff, int index)
{
    const hessfit_ff_param *p = &ff->params[index];
    fprintf(out, "line %d %s", p->line, hessfit_param_kind_name(p->kind));
    for (int a = 0; a < p->n_types && a < 4; a++)
        fprintf(out, "%s%s", a ? "-" : " ", p->types[a]);
    if (p->substructure >= 0)
        fprintf(out, " [substructure %d]", p->substructure + 1);
    fprintf(out, " ");
    print_values(out, p);
}

/* Structures that use one parameter: each structure once, in order. */
typedef struct {
    int n_terms;
    int n_structures;
    int cap;
    int *structures;
} param_use;

static int note_use(param_use *u, int structure)
{
    u->n_terms++;
    if (u->n_structures > 0 && u->structures[u->n_structures - 1] == structure)
        return 1;
    if (u->n_structures == u->cap) {
        int cap = u->cap ? 2 * u->cap : 4;
        int *s = realloc(u->structures, (size_t)cap * sizeof *s);
        if (s == NULL)
            return 0;
        u->structures = s;
        u->cap = cap;
    }
    u->structures[u->n_structures++] = structure;
    return 1;
}

/* " line 437" / " line 1150 x 0.5 (rule)" / " derived: rule" for one MM3* constant's source. */
static void print_mm3_source(const hessfit_mm3_source *src)
{
    if (src->origin == HESSFIT_MM3_DERIVED)
        printf(" [%s]", src->rule != NULL && src->rule[0] ? src->rule : "derived");
    else if (src->scale != 1.0 && src->origin == HESSFIT_MM3_FROM_PARAM && src->rule != NULL && src->rule[0])
        printf(" [line %d, %s]", src->line, src->rule);
    else
        printf(" [line %d%s%s]", src->line, src->rule != NULL && src->rule[0] ? ", " : "", src->rule != NULL ? src->rule : "");
}

static void print_atoms(const int *atoms, int n)
{
    char text[64];
    size_t k = 0;
    for (int i = 0; i < n && k < sizeof text; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%d", i ? "-" : "", atoms[i] + 1);
    printf(" %-15s", text);
}

/* The MM3* model of structure id (hessfit_mm3_build), each constant with its source. */
static hessfit_status print_mm3(const hessfit_molecule *m, const hessfit_typed_molecule *typed, const hessfit_forcefield *ff,
                                int id)
{
    hessfit_mm3_model x;
    hessfit_status st = hessfit_mm3_build(m, typed, ff, &x);
    if (st != HESSFIT_SUCCESS)
        return st;
    printf("\n# structure %d: MM3* model (MacroModel's units: A, deg, mdyn/A, mdyn A/rad^2, kcal/mol, D, e; "
           "[source])\n", id);
    for (int i = 0; i < x.n_stretches; i++) {
        const hessfit_mm3_stretch *e = &x.stretches[i];
        printf("%d mm3-stretch", id);
        print_atoms(e->atoms, 2);
        printf(" r0 %.4f k %.4f", e->r0, e->k);
        print_mm3_source(&e->src_k);
        printf(" mu %.4f", e->mu);
        print_mm3_source(&e->src_mu);
        if (e->f != 1.0)
            printf(" r_eff = r'/%.3f", e->f);
        printf("\n");
    }
    for (int i = 0; i < x.n_bends; i++) {
        const hessfit_mm3_bend *e = &x.bends[i];
        printf("%d mm3-bend", id);
        print_atoms(e->atoms, 3);
        printf(" theta0 %.3f k %.4f", e->theta0, e->k);
        print_mm3_source(&e->src_k);
        printf("\n");
    }
    for (int i = 0; i < x.n_stretch_bends; i++) {
        const hessfit_mm3_stretch_bend *e = &x.stretch_bends[i];
        printf("%d stretch-bend", id);
        print_atoms(e->atoms, 3);
        printf(" k_sb %.4f", e->k_sb);
        print_mm3_source(&e->src_k_sb);
        printf("\n");
    }
    for (int i = 0; i < x.n_bend_bends; i++) {
        const hessfit_mm3_bend_bend *e = &x.bend_bends[i];
        printf("%d bend-bend", id);
        print_atoms(e->atoms, 5);
        for (int k = 0; k < 2; k++) {
            printf(" k_bb%d %.4f theta0 %.3f", k + 1, e->k_bb[k], e->theta0[k]);
            print_mm3_source(&e->src_k_bb[k]);
        }
        printf("\n");
    }
    for (int i = 0; i < x.n_torsions; i++) {
        const hessfit_mm3_torsion *e = &x.torsions[i];
        printf("%d mm3-torsion", id);
        print_atoms(e->atoms, 4);
        printf(" V1 %.4f V2 %.4f V3 %.4f", e->v[0], e->v[1], e->v[2]);
        print_mm3_source(&e->src_v[0]);
        printf("\n");
    }
    for (int i = 0; i < x.n_torsion_stretches; i++) {
        const hessfit_mm3_torsion_stretch *e = &x.torsion_stretches[i];
        if (e->k_ts == 0.0)
            continue;
        printf("%d torsion-stretch", id);
        print_atoms(e->atoms, 4);
        printf(" K_ts %.4f", e->k_ts);
        print_mm3_source(&e->src_k_ts);
        printf("\n");
    }
    for (int i = 0; i < x.n_out_of_plane; i++) {
        const hessfit_mm3_out_of_plane *e = &x.out_of_plane[i];
        printf("%d out-of-plane", id);
        print_atoms(e->atoms, 4);
        printf(" k %.4f", e->k);
        print_mm3_source(&e->src_k);
        printf("\n");
    }
    for (int i = 0; i < x.n_reduced; i++)
        printf("%d reduced-H %d -> %d f %.3f [line %d]\n", id, x.reduced[i].atom + 1, x.reduced[i].partner + 1,
               x.reduced[i].f, x.reduced[i].src_offset.line);
    for (int a = 0; a < x.n_atoms; a++) {
        const hessfit_mm3_atom *e = &x.atoms[a];
        printf("%d atom %d charge %+.5f (formal %+.0f) R* %.4f eps %.4f", id, a + 1, e->charge, e->formal_charge, e->r_star,
               e->eps);
        print_mm3_source(&e->src_r_star);
        printf("\n");
    }
    int special = 0, n14 = 0;
    for (int i = 0; i < x.n_pairs; i++) {
        n14 += x.pairs[i].is14;
        if (x.pairs[i].src_r.origin != HESSFIT_MM3_DERIVED)
            special++;
    }
    printf("%d pairs %d (1-4: %d, unscaled; from a special-pair line: %d): R = R*_i + R*_j, eps = sqrt(eps_i eps_j), "
           "qq = q_i q_j\n", id, x.n_pairs, n14, special);
    for (int i = 0; i < x.n_hbonds; i++) {
        const hessfit_mm3_hbond *e = &x.hbonds[i];
        if (!e->listed)
            continue;
        printf("%d hydrogen-bond", id);
        print_atoms(e->atoms, 2);
        printf(" C/100 %.4f D/100 %.4f", e->c, e->d);
        print_mm3_source(&e->src_c);
        printf("\n");
    }
    printf("%d hydrogen-bonds %d of %d candidates (types of a 2-atom code-7 line; listed: 1-5 or farther, < %g A at "
           "this geometry; E = F_HBD (C/100 / r^12 - D/100 / r^10))\n",
           id, x.n_hbonds_listed, x.n_hbond_candidates, HESSFIT_MM3_HBOND_CUTOFF);
    hessfit_mm3_model_free(&x);
    return HESSFIT_SUCCESS;
}

/* The arguments; the lists have room for one entry per command-line argument. */
typedef struct {
    const char *ff_path;
    const char **structures;
    int n_structures;
    const char **no_term; /* the patterns for hessfit_typing_options: no-term and "prefer LINE" */
    int n_no_term;
    char *prefer_text;    /* "prefer LINE" of every --prefer, each at most PREFER_TEXT_SIZE bytes */
    hessfit_topology_options topo;
    int mm3; /* --mm3 */
} params_args;

/* "prefer " and a line number of at most 9 digits (parse_line_number), with its NUL. */
#define PREFER_TEXT_SIZE 17

static void params_args_free(params_args *a)
{
    free(a->structures);
    free(a->no_term);
    free(a->prefer_text);
}

/* A positive line number of at most 9 digits in *line. */
static int parse_line_number(const char *text, long *line)
{
    char *end;
    errno = 0;
    *line = strtol(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && *line >= 1 && *line <= 100000000L;
}

/* 0 ok, 2 usage error (reported), -1 --help printed */
static int parse_args(int argc, char **argv, params_args *a)
{
    static const struct option options[] = {
        {"ff", required_argument, NULL, 'f'},     {"structures", required_argument, NULL, 's'},
        {"no-term", required_argument, NULL, 'n'}, {"prefer", required_argument, NULL, 'p'},
        {"bond-tolerance", required_argument, NULL, 'b'}, {"ts-bond-tolerance", required_argument, NULL, 't'},
        {"perceive-bonds", no_argument, NULL, 'P'}, {"mm3", no_argument, NULL, 'M'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(a, 0, sizeof *a);
    a->topo = hessfit_topology_default_options();
    a->structures = malloc((size_t)argc * sizeof *a->structures);
    a->no_term = malloc((size_t)argc * sizeof *a->no_term);
    a->prefer_text = malloc((size_t)argc * PREFER_TEXT_SIZE);
    if (a->structures == NULL || a->no_term == NULL || a->prefer_text == NULL) {
        fprintf(stderr, "hessfit params: out of memory\n");
        return 1;
    }
    for (int o; (o = hf_cli_getopt(argc, argv, options, "params", usage)) != -1;) {
        const char *value = optarg;
        switch (o) {
        case HF_CLI_HELP: return -1;
        case HF_CLI_USAGE_ERROR: return 2;
        case 'P': a->topo.use_file_bonds = 0; break;
        case 'M': a->mm3 = 1; break;
        case 'f':
            if (a->ff_path != NULL)
                return usage_error("--ff given twice ('%s')", value);
            a->ff_path = value;
            break;
        case 's': a->structures[a->n_structures++] = value; break;
        case 'n': a->no_term[a->n_no_term++] = value; break;
        case 'p': {
            long line;
            if (!parse_line_number(value, &line))
                return usage_error("--prefer '%s' is not a force-field line number", value);
            char *text = a->prefer_text + (size_t)a->n_no_term * PREFER_TEXT_SIZE;
            snprintf(text, PREFER_TEXT_SIZE, "prefer %ld", line);
            a->no_term[a->n_no_term++] = text;
            break;
        }
        case 'b':
            if (!parse_tolerance(value, &a->topo.bond_tolerance))
                return usage_error("--bond-tolerance '%s' is not a number in (0, 3]", value);
            break;
        default: /* 't' */
            if (!parse_tolerance(value, &a->topo.ts_bond_tolerance))
                return usage_error("--ts-bond-tolerance '%s' is not a number in (0, 3]", value);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (a->ff_path == NULL)
        return usage_error("%s", "--ff FILE is required");
    if (a->n_structures == 0)
        return usage_error("%s", "--structures FILE is required");
    if (!hessfit_path_has_extension(a->ff_path, ".fld") && !hessfit_path_has_extension(a->ff_path, ".frcmod"))
        return usage_error("--ff '%s': the force field must be a .fld or .frcmod file", a->ff_path);
    return 0;
}

/* The structures of one file (the extension chooses the reader; .gz is transparent). Structures
 * without atom types (QM files, xyz) are typed by element symbol. */
static hessfit_status read_structures(const char *path, hessfit_molecule_list *list)
{
    hessfit_status st = hessfit_molecules_read(path, NULL, list);
    for (int m = 0; m < list->n && st == HESSFIT_SUCCESS; m++)
        if (list->items[m].atom_types == NULL)
            st = hessfit_molecule_set_element_types(&list->items[m]);
    if (st != HESSFIT_SUCCESS)
        hessfit_molecule_list_free(list);
    return st;
}

static const char *type_of(const hessfit_molecule *m, int atom)
{
    return m->atom_types != NULL && m->atom_types[atom] != NULL ? m->atom_types[atom] : "?";
}

static int failed(const char *what)
{
    fprintf(stderr, "hessfit params: %s%s%s\n", what ? what : "", what ? ": " : "", hessfit_last_error());
    return 1;
}

int hf_cmd_params(int argc, char **argv)
{
    params_args a;
    hessfit_forcefield ff;
    param_use *uses = NULL;
    int status = 1, n_structures = 0, n_failed = 0;
    int rule_counts[HESSFIT_NUM_MATCH_RULES][HESSFIT_NUM_TERM_KINDS];
    int *pattern_terms = NULL;
    long total_terms = 0;

    int parsed = parse_args(argc, argv, &a);
    if (parsed != 0) {
        params_args_free(&a);
        return parsed < 0 ? 0 : parsed;
    }
    memset(&ff, 0, sizeof ff);
    memset(rule_counts, 0, sizeof rule_counts);

    hessfit_status st = hessfit_forcefield_read(a.ff_path, &ff);
    if (st != HESSFIT_SUCCESS)
        return failed(NULL);
    uses = calloc((size_t)(ff.n_params ? ff.n_params : 1), sizeof *uses);
    pattern_terms = calloc((size_t)(a.n_no_term ? a.n_no_term : 1), sizeof *pattern_terms);
    if (uses == NULL || pattern_terms == NULL) {
        fprintf(stderr, "hessfit params: out of memory\n");
        goto done;
    }
    printf("# hessfit params: force field %s (%d parameters, %d substructures, %d equivalences)\n", a.ff_path,
           ff.n_params, ff.n_substructures, ff.n_equivalences);
    printf("# columns: structure kind atoms types -> parameter (line kind types values) | rule | detail\n");

    hessfit_typing_options topt = {a.n_no_term, a.no_term};
    for (int f = 0; f < a.n_structures; f++) {
        hessfit_molecule_list list = {0, NULL};
        if (read_structures(a.structures[f], &list) != HESSFIT_SUCCESS) {
            failed(NULL);
            goto done;
        }
        for (int s = 0; s < list.n; s++) {
            hessfit_molecule *m = &list.items[s];
            hessfit_topology topo;
            hessfit_typed_molecule typed;
            const int id = ++n_structures;
            if (hessfit_topology_build(m, &a.topo, &topo) != HESSFIT_SUCCESS) {
                failed(NULL);
                hessfit_molecule_list_free(&list);
                goto done;
            }
            if (hessfit_assign_parameters(m, &topo, &ff, &topt, &typed) != HESSFIT_SUCCESS) {
                /* A failure of this structure (a message that names it: a term without a parameter, an
                 * ambiguous term) is listed and the others go on; anything else (a bad pattern) stops. */
                const char *label = m->source != NULL && m->source[0] ? m->source
                                    : m->name != NULL && m->name[0] ? m->name
                                                                    : "molecule";
                const int own = strncmp(hessfit_last_error(), label, strlen(label)) == 0;
                if (own) {
                    printf("\n# structure %d: '%s' (%s): FAILED: %s\n", id, m->name ? m->name : "",
                           m->source ? m->source : a.structures[f], hessfit_last_error());
                    fprintf(stderr, "hessfit params: structure %d: %s\n", id, hessfit_last_error());
                    n_failed++;
                }
                hessfit_topology_free(&topo);
                if (own)
                    continue;
                failed(NULL);
                hessfit_molecule_list_free(&list);
                goto done;
            }
            const int file_bonds = a.topo.use_file_bonds && m->bonds_known;
            printf("\n# structure %d: '%s' (%s): %d atoms, bonds from %s; %d bonds %d angles %d torsions %d impropers, "
                   "%d terms\n",
                   id, m->name ? m->name : "", m->source ? m->source : a.structures[f], m->n_atoms,
                   file_bonds ? "the file" : "covalent radii", topo.n_bonds, topo.n_angles, topo.n_torsions,
                   topo.n_impropers, typed.n_terms);
            for (int i = 0; i < typed.n_terms; i++) {
                const hessfit_typed_term *t = &typed.terms[i];
                const int n = hessfit_term_kind_atoms(t->kind);
                char atoms[64] = "", types[64] = "";
                size_t pa = 0, pt = 0;
                for (int k = 0; k < n; k++) {
                    pa += (size_t)snprintf(atoms + pa, sizeof atoms - pa, "%s%d", k ? "-" : "", t->atoms[k] + 1);
                    pt += (size_t)snprintf(types + pt, sizeof types - pt, "%s%s", k ? "-" : "", type_of(m, t->atoms[k]));
                    if (pa >= sizeof atoms || pt >= sizeof types)
                        break;
                }
                printf("%d %-8s %-15s %-19s -> ", id, hessfit_term_kind_name(t->kind), atoms, types);
                if (t->param >= 0) {
                    print_param(stdout, &ff, t->param);
                    if (!note_use(&uses[t->param], id)) {
                        fprintf(stderr, "hessfit params: out of memory\n");
                        hessfit_typed_molecule_free(&typed);
                        hessfit_topology_free(&topo);
                        hessfit_molecule_list_free(&list);
                        goto done;
                    }
                } else {
                    printf("none");
                }
                printf(" | %s | %s\n", hessfit_match_rule_name(t->rule), t->detail);
                if ((unsigned)t->rule < HESSFIT_NUM_MATCH_RULES && (unsigned)t->kind < HESSFIT_NUM_TERM_KINDS)
                    rule_counts[t->rule][t->kind]++;
                /* "no-term pattern 2 '...'", "...; 952/978 differ: pattern 7 prefers 952" */
                const char *which = strstr(t->detail, "pattern ");
                int pattern;
                if (which != NULL && sscanf(which, "pattern %d", &pattern) == 1 && pattern >= 1 &&
                    pattern <= a.n_no_term)
                    pattern_terms[pattern - 1]++;
                total_terms++;
            }
            if (a.mm3 && print_mm3(m, &typed, &ff, id) != HESSFIT_SUCCESS) {
                printf("\n# structure %d: MM3* model FAILED: %s\n", id, hessfit_last_error());
                fprintf(stderr, "hessfit params: structure %d: %s\n", id, hessfit_last_error());
                n_failed++;
            }
            hessfit_typed_molecule_free(&typed);
            hessfit_topology_free(&topo);
        }
        hessfit_molecule_list_free(&list);
    }

    /* ---- summary ---- */
    if (n_failed > 0)
        printf("\n# summary: %d structures, %ld terms; %d structures FAILED (listed above)\n", n_structures,
               total_terms, n_failed);
    else
        printf("\n# summary: %d structures, %ld terms\n", n_structures, total_terms);
    printf("# rule         bond angle torsion improper\n");
    for (int r = 0; r < HESSFIT_NUM_MATCH_RULES; r++)
        printf("# %-11s %5d %5d %7d %8d\n", hessfit_match_rule_name((hessfit_match_rule)r), rule_counts[r][0], rule_counts[r][1],
               rule_counts[r][2], rule_counts[r][3]);
    for (int p = 0; p < a.n_no_term; p++) {
        const int prefer = strncmp(a.no_term[p], "prefer ", 7) == 0;
        printf("# %s pattern %d '%s': %d terms\n", prefer ? "prefer" : "no-term", p + 1, a.no_term[p],
               pattern_terms[p]);
        if (pattern_terms[p] == 0 && n_failed == 0) /* unused patterns mean something only when all typed */
            fprintf(stderr, "hessfit params: warning: %s pattern '%s' %s\n", prefer ? "prefer" : "no-term",
                    a.no_term[p], prefer ? "settles no tie" : "covers no term without a parameter");
    }
    int n_used = 0, n_unused = 0;
    for (int i = 0; i < ff.n_params; i++)
        n_used += uses[i].n_terms > 0;
    printf("\n# parameters used: %d (terms, structures)\n", n_used);
    for (int i = 0; i < ff.n_params; i++) {
        if (uses[i].n_terms == 0)
            continue;
        print_param(stdout, &ff, i);
        printf(" | %d terms in %d structures:", uses[i].n_terms, uses[i].n_structures);
        for (int s = 0; s < uses[i].n_structures; s++)
            printf("%s%d", s ? "," : " ", uses[i].structures[s]);
        printf("\n");
    }
    for (int i = 0; i < ff.n_params; i++)
        n_unused += uses[i].n_terms == 0 && (int)ff.params[i].kind < HESSFIT_NUM_TERM_KINDS;
    printf("\n# bonded parameters used by no term: %d (vdW, charge and stretch-bend parameters are not typed terms)\n",
           n_unused);
    for (int i = 0; i < ff.n_params; i++)
        if (uses[i].n_terms == 0 && (int)ff.params[i].kind < HESSFIT_NUM_TERM_KINDS) {
            print_param(stdout, &ff, i);
            printf("\n");
        }
    status = fflush(stdout) == 0 ? 0 : 1;
    if (status != 0)
        fprintf(stderr, "hessfit params: cannot write the listing: %s\n", strerror(errno));
    if (n_failed > 0) {
        fprintf(stderr, "hessfit params: %d of %d structures failed\n", n_failed, n_structures);
        status = 1;
    }
done:
    if (uses != NULL)
        for (int i = 0; i < ff.n_params; i++)
            free(uses[i].structures);
    free(uses);
    free(pattern_terms);
    hessfit_forcefield_free(&ff);
    params_args_free(&a);
    return status;
}
