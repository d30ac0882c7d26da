/* The training set of a `hessfit fit` input file, loaded before any work (hf_training_set.h). */
#define _POSIX_C_SOURCE 200809L
#include "hf_training_set.h"

#include "hessfit_elements.h"
#include "hessfit_path.h"
#include "hessfit_seminario.h"
#include "hessfit_units.h"
#include "hf_comm.h"
#include "hf_devices.h"
#include "hf_lines.h"
#include "hf_vec3.h"

#include <cblas.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- messages -------------------------------------------------------------------------------- */

/* The last error's message with a prefix: "<prefix>: <message>". */
static hessfit_status prefixed(hessfit_status st, const char *format, ...)
{
    char prefix[HESSFIT_ERROR_MESSAGE_SIZE];
    va_list ap;
    va_start(ap, format);
    vsnprintf(prefix, sizeof prefix, format, ap);
    va_end(ap);
    return hessfit_error(st, "%s: %s", prefix, hessfit_last_error());
}

static hessfit_status no_memory(const char *what)
{
    return hessfit_error(HESSFIT_ERROR_OUT_OF_MEMORY, "no memory for %s", what);
}

/* ---- plugins --------------------------------------------------------------------------------- */

/* Number of hessfit plugin libraries loaded from dir (-1 when OpenMM reported failures). */
static int load_plugin_dir(const char *dir, char *failure, size_t size)
{
    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    int n_hessfit = 0, n_failed = OpenMM_StringArray_getSize(failures);
    for (int i = 0; i < OpenMM_StringArray_getSize(loaded); i++) {
        const char *name = OpenMM_StringArray_get(loaded, i), *slash = strrchr(name, '/');
        n_hessfit += strstr(slash != NULL ? slash + 1 : name, "HessFit") != NULL;
    }
    if (n_failed > 0)
        snprintf(failure, size, "%s", OpenMM_StringArray_get(failures, 0));
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);
    return n_failed > 0 ? -1 : n_hessfit;
}

hessfit_status hf_cli_load_plugins(void)
{
    static int done;
    char dirs[3][4096], failure[1024] = "";
    int n_dirs = 0;
    if (done)
        return HESSFIT_SUCCESS;
    const char *env = getenv("HESSFIT_PLUGIN_DIR");
    if (env != NULL && env[0] != '\0')
        snprintf(dirs[n_dirs++], sizeof dirs[0], "%s", env);
    else {
        char exe[4096];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n > 0) {
            exe[n] = '\0';
            char *slash = strrchr(exe, '/');
            if (slash != NULL) {
                *slash = '\0';
                if (snprintf(dirs[n_dirs], sizeof dirs[0], "%s/../%s", exe, HESSFIT_APP_PLUGIN_SUBDIR) <
                    (int)sizeof dirs[0])
                    n_dirs++;
            }
        }
        snprintf(dirs[n_dirs++], sizeof dirs[0], "%s", HESSFIT_APP_BUILD_PLUGIN_DIR);
    }
    for (int d = 0; d < n_dirs; d++) {
        int n = load_plugin_dir(dirs[d], failure, sizeof failure);
        if (n < 0)
            return hessfit_error(HESSFIT_ERROR_OPENMM, "loading the hessfit OpenMM plugins from %s: %s", dirs[d], failure);
        if (n > 0) {
            done = 1;
            return HESSFIT_SUCCESS;
        }
    }
    return hessfit_error(HESSFIT_ERROR_OPENMM, "no hessfit OpenMM plugin found in %s%s%s (set HESSFIT_PLUGIN_DIR)", dirs[0],
                    n_dirs > 1 ? " or " : "", n_dirs > 1 ? dirs[n_dirs - 1] : "");
}

/* Whether OpenMM has a platform of that name registered. */
static int have_platform(const char *name)
{
    for (int i = 0; i < OpenMM_Platform_getNumPlatforms(); i++)
        if (strcmp(OpenMM_Platform_getName(OpenMM_Platform_getPlatform(i)), name) == 0)
            return 1;
    return 0;
}

hessfit_status hf_cli_load_platform(const char *platform)
{
    if (have_platform(platform))
        return HESSFIT_SUCCESS;
    const char *dir = getenv("OPENMM_PLUGIN_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = HESSFIT_APP_OPENMM_PLUGIN_DIR;
    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    char why[1024] = "";
    for (int i = 0; i < OpenMM_StringArray_getSize(failures); i++) { /* the platform's own library's failure */
        const char *f = OpenMM_StringArray_get(failures, i);
        char library[64];
        snprintf(library, sizeof library, "libOpenMM%s.so", platform);
        if (strstr(f, library) != NULL)
            snprintf(why, sizeof why, ": %s", f);
    }
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);
    if (!have_platform(platform))
        return hessfit_error(HESSFIT_ERROR_OPENMM, "OpenMM has no %s platform here (its plugins from %s%s)", platform, dir,
                             why[0] != '\0' ? why : ": none for it");
    return HESSFIT_SUCCESS;
}

/* mkdir -p */
hessfit_status hf_cli_make_directory(const char *path)
{
    char buf[4096];
    struct stat sb;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "output directory name too long: %.80s...", path);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            const char saved = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return hessfit_error(HESSFIT_ERROR_IO, "cannot create the output directory %s: %s", buf, strerror(errno));
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return hessfit_error(HESSFIT_ERROR_IO, "the output directory %s is not a directory", path);
    return HESSFIT_SUCCESS;
}

/* ---- parameters in words ----------------------------------------------------------------------- */

static int is_fourier(const hessfit_ff_param *p)
{
    return p->kind == HESSFIT_PARAM_TORSION || (p->kind == HESSFIT_PARAM_IMPROPER && p->improper_form == HESSFIT_IMPROPER_FOURIER);
}

void hf_param_value_name(const hessfit_ff_param *p, int v, char *name, size_t size, const char **unit)
{
    const char *u = "";
    if (is_fourier(p)) {
        static const char *const what[3] = {"k", "phase", "n"};
        static const char *const units[3] = {"kcal/mol", "deg", ""};
        snprintf(name, size, "%s_%d", what[v % 3], v / 3 + 1);
        u = units[v % 3];
    } else {
        const char *n = "value";
        switch (p->kind) {
        case HESSFIT_PARAM_BOND:
            n = v == 0 ? "k" : v == 1 ? "r0" : "mu";
            u = v == 0 ? "kcal/mol/A^2" : v == 1 ? "A" : "D";
            break;
        case HESSFIT_PARAM_ANGLE:
            n = v == 0 ? "k" : "theta0";
            u = v == 0 ? "kcal/mol/rad^2" : "deg";
            break;
        case HESSFIT_PARAM_IMPROPER:
            n = "k";
            u = "kcal/mol/rad^2";
            break;
        case HESSFIT_PARAM_VDW:
            n = v == 0 ? "r*" : "eps";
            u = v == 0 ? "A" : "kcal/mol";
            break;
        case HESSFIT_PARAM_CHARGE:
            n = "q";
            u = "e";
            break;
        case HESSFIT_PARAM_STRETCH_BEND:
            n = "k";
            u = "mdyn/rad";
            break;
        default: break;
        }
        snprintf(name, size, "%s", n);
    }
    if (unit != NULL)
        *unit = u;
}

void hf_param_types_text(const hessfit_ff_param *p, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int t = 0; t < p->n_types && t < 4 && n + 1 < size; t++) {
        int w = snprintf(out + n, size - n, "%s%s", t ? "-" : "", p->types[t]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static void describe_value(const hessfit_forcefield *ff, int param, int value, char *out, size_t size)
{
    const hessfit_ff_param *p = &ff->params[param];
    char types[64], name[32];
    hf_param_types_text(p, types, sizeof types);
    hf_param_value_name(p, value, name, sizeof name, NULL);
    snprintf(out, size, "line %d %s %s %s", p->line, hessfit_param_kind_name(p->kind), types, name);
}

void hf_training_set_describe_free(const hf_training_set *set, int i, char *out, size_t size)
{
    int p, v;
    if (hessfit_model_free_parameter(set->model, i, &p, &v, NULL, NULL) != HESSFIT_SUCCESS) {
        snprintf(out, size, "free value %d", i);
        return;
    }
    describe_value(&set->ff, p, v, out, size);
}

/* ---- settings ---------------------------------------------------------------------------------- */

static int has_key(const hessfit_config *c, const char *key)
{
    return hessfit_config_count(c, key) > 0;
}

/* The whole number `key` in [1, max] (default def) into *v. */
static hessfit_status whole_number(const hessfit_config *c, const char *key, double max, double def, double *v)
{
    hessfit_status st = hessfit_config_number(c, key, 1, max, def, v);
    if (st == HESSFIT_SUCCESS && *v != floor(*v)) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, key, 0);
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: %s = %g is not a whole number", c->path, e ? e->line : 0, key, *v);
    }
    return st;
}

static hessfit_status read_settings(const hessfit_config *c, const hf_training_set_options *opt, hf_fit_settings *s)
{
    hessfit_status st;
    double v;
    const char *value;

    s->objective = hessfit_objective_default_options();
    s->objective_name = hessfit_config_get(c, "objective", "frequencies");
    if (strcmp(s->objective_name, "frequencies-q2mm") == 0)
        s->objective.frequencies = HESSFIT_OBJ_FREQUENCIES_Q2MM;
    else if (strcmp(s->objective_name, "eigenmatrix") == 0) {
        s->objective.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
        s->objective.eigenmatrix = 1;
    } else if (strcmp(s->objective_name, "hessian") == 0) {
        s->objective.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
        s->objective.hessian = 1;
    } else if (strcmp(s->objective_name, "none") == 0) {
        s->objective.frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
    } else if (strcmp(s->objective_name, "frequencies") != 0) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "objective", 0);
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown objective '%s'", c->path, e ? e->line : 0, s->objective_name);
    }
    if (has_key(c, "weight")) { /* the weight of every datum; q2mm's off-diagonal elements keep half of it */
        if ((st = hessfit_config_number(c, "weight", 1e-300, 1e300, 1.0, &v)) != HESSFIT_SUCCESS)
            return st;
        s->objective.frequency_weight = v;
        s->objective.eig_d_low = s->objective.eig_d_high = v;
        s->objective.eig_o = 0.5 * v;
        s->objective.hessian_diagonal_weight = v;
        s->objective.hessian_offdiagonal_weight = 0.5 * v;
    }
    value = hessfit_config_get(c, "ts", "skip");
    s->objective.ts = strcmp(value, "replace") == 0 ? HESSFIT_OBJ_TS_REPLACE
                      : strcmp(value, "keep") == 0  ? HESSFIT_OBJ_TS_KEEP
                                                    : HESSFIT_OBJ_TS_SKIP;
    s->start_seminario = strcmp(hessfit_config_get(c, "start", "forcefield"), "seminario") == 0;
    value = hessfit_config_get(c, "optimizer", "lm"); /* every objective is a sum of squares */
    s->algorithm = strcmp(value, "lbfgs") == 0         ? HESSFIT_OPT_LBFGS
                   : strcmp(value, "slsqp") == 0       ? HESSFIT_OPT_SLSQP
                   : strcmp(value, "nelder-mead") == 0 ? HESSFIT_OPT_NELDER_MEAD
                   : strcmp(value, "sbplx") == 0       ? HESSFIT_OPT_SUBPLEX
                   : strcmp(value, "grad-simp") == 0   ? HESSFIT_OPT_GRAD_SIMP
                   : strcmp(value, "trf") == 0         ? HESSFIT_OPT_TRF
                                                       : HESSFIT_OPT_LM;
    s->bounds = strcmp(hessfit_config_get(c, "bounds", "q2mm"), "none") != 0;
    if ((st = whole_number(c, "max-evaluations", 1e9, 1000, &v)) != HESSFIT_SUCCESS)
        return st;
    s->max_evaluations = (long long)v;
    if ((st = whole_number(c, "blocks", 1e6, 1, &v)) != HESSFIT_SUCCESS)
        return st;
    s->blocks = (int)v;
    s->platform = hessfit_config_get(c, "platform", "Reference");
    s->precision = hessfit_config_get(c, "precision", "double");
    value = hessfit_config_get(c, "device", "auto"); /* the config checked its form */
    s->device = strcmp(value, "auto") == 0 ? -1 : atoi(value);
    if ((st = hessfit_config_number(c, "max-time", 0, 1e9, 0, &s->max_time)) != HESSFIT_SUCCESS ||
        (st = hessfit_config_number(c, "ftol", 0, 1, 1e-8, &s->ftol)) != HESSFIT_SUCCESS)
        return st;

    /* output directory: --output, the input's `output`, or "<stem><suffix>" beside the input */
    if (opt != NULL && opt->output_dir != NULL)
        s->output_dir = strdup(opt->output_dir);
    else if ((value = hessfit_config_get(c, "output", NULL)) != NULL)
        s->output_dir = strdup(value);
    else {
        const char *slash = strrchr(c->path, '/'), *base = slash ? slash + 1 : c->path;
        const char *dot = strrchr(base, '.');
        const char *suffix = opt != NULL && opt->default_output_suffix != NULL ? opt->default_output_suffix : "-out";
        size_t stem = dot != NULL && dot != base ? (size_t)(dot - c->path) : strlen(c->path);
        s->output_dir = malloc(stem + strlen(suffix) + 1);
        if (s->output_dir != NULL) {
            memcpy(s->output_dir, c->path, stem);
            strcpy(s->output_dir + stem, suffix);
        }
    }
    if (s->output_dir == NULL)
        return no_memory("the output directory's name");
    return HESSFIT_SUCCESS;
}

/* ---- structures and Hessians ------------------------------------------------------------------ */

typedef struct {
    const char *path; /* the structures entry's file */
    int line;         /* of the input file */
} origin;

/* Append the structures of one file. */
static hessfit_status read_structures(const hessfit_config *c, const hessfit_config_entry *e, hf_training_set *set, origin **from,
                                 size_t *cap)
{
    hessfit_molecule_list list;
    hessfit_status st = hessfit_molecules_read(e->value, NULL, &list);
    if (st != HESSFIT_SUCCESS)
        return prefixed(st, "%s:%d: structures", c->path, e->line);
    for (int m = 0; m < list.n; m++) {
        if (list.items[m].atom_types == NULL && (st = hessfit_molecule_set_element_types(&list.items[m])) != HESSFIT_SUCCESS) {
            hessfit_molecule_list_free(&list);
            return prefixed(st, "%s:%d: structures", c->path, e->line);
        }
    }
    if ((size_t)set->n_mols + (size_t)list.n > *cap) {
        size_t grown = (*cap ? 2 * *cap : 16) + (size_t)list.n;
        hessfit_molecule *mols = realloc(set->mols, grown * sizeof *mols);
        if (mols != NULL)
            set->mols = mols;
        origin *o = realloc(*from, grown * sizeof *o);
        if (o != NULL)
            *from = o;
        if (mols == NULL || o == NULL) {
            hessfit_molecule_list_free(&list);
            return no_memory("the structures");
        }
        *cap = grown;
    }
    for (int m = 0; m < list.n; m++) { /* the molecules move into the set */
        set->mols[set->n_mols] = list.items[m];
        (*from)[set->n_mols].path = e->value;
        (*from)[set->n_mols].line = e->line;
        set->n_mols++;
    }
    free(list.items);
    return HESSFIT_SUCCESS;
}

/* The QM file q (at path) holds structure mol (label): same atoms, same geometry up to a rigid motion. */
static hessfit_status same_structure(const char *label, const char *hessian_path, const hessfit_molecule *q,
                                const hessfit_molecule *mol)
{
    if (q->n_atoms != mol->n_atoms)
        return hessfit_error(HESSFIT_ERROR_COUNT, "%s has %d atoms, but %s has %d", hessian_path, q->n_atoms, label,
                        mol->n_atoms);
    for (int a = 0; a < q->n_atoms; a++)
        if (q->atomic_numbers[a] != mol->atomic_numbers[a])
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: atom %d is %s, but %s in %s", hessian_path, a + 1,
                            hessfit_element_symbol(q->atomic_numbers[a]), hessfit_element_symbol(mol->atomic_numbers[a]), label);
    for (int a = 0; a < q->n_atoms; a++)
        for (int b = a + 1; b < q->n_atoms; b++) {
            const double dq = hf_atom_distance(q->coords, a, b), dm = hf_atom_distance(mol->coords, a, b);
            if (!(fabs(dq - dm) <= HF_TRAINING_SET_GEOMETRY_A))
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "%s: atoms %d and %d are %.4f A apart, but %.4f A in %s (tolerance %g A): not the "
                                "geometry of that structure (another structure, or another atom order?)",
                                hessian_path, a + 1, b + 1, dq, dm, label, HF_TRAINING_SET_GEOMETRY_A);
        }
    return HESSFIT_SUCCESS;
}

/* The Hessian file q for structure mol: the same structure (same_structure); then the structure
 * takes q's Hessian and coordinates (the QM geometry). */
static hessfit_status take_hessian(const char *label, const char *hessian_path, hessfit_molecule *q, hessfit_molecule *mol)
{
    hessfit_status st;
    if (q->hessian == NULL)
        return hessfit_error(HESSFIT_ERROR_FORMAT, "%s holds no Hessian", hessian_path);
    if ((st = same_structure(label, hessian_path, q, mol)) != HESSFIT_SUCCESS)
        return st;
    memcpy(mol->coords, q->coords, 3 * (size_t)q->n_atoms * sizeof *q->coords);
    mol->hessian = q->hessian;
    q->hessian = NULL;
    return HESSFIT_SUCCESS;
}

static hessfit_status read_hessians(const hessfit_config *c, hf_training_set *set, const origin *from)
{
    int next = 0;
    for (int h = 0; h < hessfit_config_count(c, "hessian"); h++) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "hessian", h);
        hessfit_molecule q;
        hessfit_status st;
        while (next < set->n_mols && set->mols[next].hessian != NULL)
            next++;
        if (next == set->n_mols)
            return hessfit_error(HESSFIT_ERROR_COUNT,
                            "%s:%d: hessian %s: every structure already has a Hessian (%d structures; the hessian "
                            "entries go, in order, to the structures without one)",
                            c->path, e->line, e->value, set->n_mols);
        hessfit_molecule *mol = &set->mols[next];
        if (hessfit_path_has_extension(e->value, ".npy")) {
            if (!hessfit_path_has_extension(from[next].path, ".xyz"))
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "%s:%d: hessian %s goes to %s, which comes from %s: a .npy Hessian needs its structure "
                                "from the .xyz file of its geometry",
                                c->path, e->line, e->value, set->labels[next], from[next].path);
            st = hessfit_npy_xyz_read(from[next].path, e->value, &q);
        } else {
            st = hessfit_molecule_read(e->value, NULL, &q);
        }
        if (st != HESSFIT_SUCCESS)
            return prefixed(st, "%s:%d: hessian for %s", c->path, e->line, set->labels[next]);
        st = take_hessian(set->labels[next], e->value, &q, mol);
        hessfit_molecule_free(&q);
        if (st != HESSFIT_SUCCESS)
            return prefixed(st, "%s:%d: hessian", c->path, e->line);
    }
    return HESSFIT_SUCCESS;
}

/* ---- energies and geometry targets ---------------------------------------------------------- */

/* Up to 8 blank-separated words of an entry's value (the config has checked their form); the
 * words past the count are "". */
static int entry_words(const hessfit_config_entry *e, char *text, size_t size, char **word)
{
    static char empty[1];
    char *save = NULL;
    int n = 0;
    snprintf(text, size, "%s", e->value);
    for (char *t = strtok_r(text, " \t", &save); t != NULL && n < 8; t = strtok_r(NULL, " \t", &save))
        word[n++] = t;
    for (int k = n; k < 8; k++)
        word[k] = empty;
    return n;
}

/* Structure number word (1-based) -> index, checked against the training set. */
static hessfit_status structure_of(const hessfit_config *c, const hessfit_config_entry *e, const hf_training_set *set,
                              const char *word, int *mol)
{
    const long n = strtol(word, NULL, 10);
    if (n < 1 || n > set->n_mols)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: %s = '%s': there is no structure %ld (the training set has "
                        "%d, numbered from 1 in the order of the structures entries)", c->path, e->line, e->key,
                        e->value, n, set->n_mols);
    *mol = (int)n - 1;
    return HESSFIT_SUCCESS;
}

/* The energy entries: groups (numbered in order of appearance), QM energies, then the weights. */
static hessfit_status read_energies(const hessfit_config *c, hf_training_set *set)
{
    const int n = hessfit_config_count(c, "energy");
    hessfit_status st;
    if (n == 0) {
        if (hessfit_config_count(c, "energy-weight") > 0) {
            const hessfit_config_entry *e = hessfit_config_entry_at(c, "energy-weight", 0);
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: energy-weight without any energy entry", c->path,
                            e->line);
        }
        return HESSFIT_SUCCESS;
    }
    set->energies = calloc((size_t)n, sizeof *set->energies);
    set->group_names = calloc((size_t)n, sizeof *set->group_names);
    if (set->energies == NULL || set->group_names == NULL)
        return no_memory("the energies");
    for (int i = 0; i < n; i++) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "energy", i);
        char text[strlen(e->value) + 1], *word[8];
        const int nw = entry_words(e, text, sizeof text, word);
        hessfit_energy_target *t = &set->energies[i];
        if (nw < 2 || strlen(word[0]) >= sizeof set->group_names[0])
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: energy = '%s': 'GROUP STRUCTURE [FILE]', a group name of at most "
                            "%zu characters", c->path, e->line, e->value, sizeof set->group_names[0] - 1);
        if ((st = structure_of(c, e, set, word[1], &t->mol)) != HESSFIT_SUCCESS)
            return st;
        for (int j = 0; j < i; j++)
            if (set->energies[j].mol == t->mol)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: energy: %s has an energy already (line %d)", c->path,
                                e->line, set->labels[t->mol], hessfit_config_entry_at(c, "energy", j)->line);
        t->group = -1;
        for (int g = 0; g < set->n_groups && t->group < 0; g++)
            if (strcmp(set->group_names[g], word[0]) == 0)
                t->group = g;
        if (t->group < 0) {
            t->group = set->n_groups;
            snprintf(set->group_names[set->n_groups++], sizeof set->group_names[0], "%s", word[0]);
        }
        t->weight = HESSFIT_OBJ_ENERGY_WEIGHT;
        const hessfit_molecule *mol = &set->mols[t->mol];
        if (nw == 2) {
            if (!mol->has_energy)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: energy: %s has no QM energy of its own: name the QM "
                                "file that holds it, energy = %s %s FILE", c->path, e->line, set->labels[t->mol],
                                word[0], word[1]);
            t->qm_hartree = mol->energy;
        } else {
            hessfit_molecule q;
            if ((st = hessfit_molecule_read(word[2], NULL, &q)) != HESSFIT_SUCCESS)
                return prefixed(st, "%s:%d: energy of %s", c->path, e->line, set->labels[t->mol]);
            st = q.has_energy ? same_structure(set->labels[t->mol], word[2], &q, mol)
                              : hessfit_error(HESSFIT_ERROR_FORMAT, "%s holds no QM energy", word[2]);
            t->qm_hartree = q.energy;
            hessfit_molecule_free(&q);
            if (st != HESSFIT_SUCCESS)
                return prefixed(st, "%s:%d: energy", c->path, e->line);
        }
        if (!isfinite(t->qm_hartree))
            return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s:%d: energy: the QM energy of %s is %g", c->path, e->line,
                            set->labels[t->mol], t->qm_hartree);
    }
    set->n_energies = n;
    for (int g = 0; g < set->n_groups; g++) { /* relative energies need two structures or more */
        int members = 0, first = -1;
        for (int i = 0; i < n; i++)
            if (set->energies[i].group == g) {
                members++;
                first = first < 0 ? i : first;
            }
        if (members < 2)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: energy: group '%s' has only %s: relative energies need "
                            "two conformers or more", c->path, hessfit_config_entry_at(c, "energy", first)->line,
                            set->group_names[g], set->labels[set->energies[first].mol]);
    }
    for (int i = 0; i < hessfit_config_count(c, "energy-weight"); i++) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "energy-weight", i);
        char text[strlen(e->value) + 1], *word[8];
        const int nw = entry_words(e, text, sizeof text, word);
        const double w = strtod(word[nw > 1 ? 1 : 0], NULL);
        int found = 0;
        for (int k = 0; k < n; k++)
            if (nw == 1 || strcmp(set->group_names[set->energies[k].group], word[0]) == 0) {
                set->energies[k].weight = w;
                found = 1;
            }
        if (!found)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: energy-weight: unknown group '%s' (no energy entry names "
                            "it)", c->path, e->line, word[0]);
    }
    return HESSFIT_SUCCESS;
}

/* What one geometry entry asks for, checked against the structures (the targets come after typing). */
typedef struct {
    int mol;          /* -1: every structure */
    unsigned kinds;   /* HF_OBJ_GEOMETRY_* of a structure's terms; 0 for one explicit target */
    hessfit_geometry_kind kind;
    int atoms[4];
    int line;
} geometry_request;

static hessfit_status read_geometry_requests(const hessfit_config *c, const hf_training_set *set, geometry_request **out,
                                        int *n_out)
{
    static const char *const single[3] = {"bond", "angle", "torsion"}, *const plural[3] = {"bonds", "angles", "torsions"};
    const int n = hessfit_config_count(c, "geometry");
    *out = NULL;
    *n_out = 0;
    if (n == 0) {
        if (hessfit_config_count(c, "geometry-weight") > 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: geometry-weight without any geometry entry", c->path,
                            hessfit_config_entry_at(c, "geometry-weight", 0)->line);
        return HESSFIT_SUCCESS;
    }
    geometry_request *r = calloc((size_t)n, sizeof *r);
    if (r == NULL)
        return no_memory("the geometry targets");
    for (int i = 0; i < n; i++) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "geometry", i);
        char text[strlen(e->value) + 1], *word[8];
        const int nw = entry_words(e, text, sizeof text, word);
        hessfit_status st;
        r[i].line = e->line;
        r[i].mol = -1;
        r[i].kinds = HESSFIT_OBJ_GEOMETRY_BONDS | HESSFIT_OBJ_GEOMETRY_ANGLES | HESSFIT_OBJ_GEOMETRY_TORSIONS;
        if (strcmp(word[0], "all") == 0)
            continue;
        if ((st = structure_of(c, e, set, word[0], &r[i].mol)) != HESSFIT_SUCCESS) {
            free(r);
            return st;
        }
        if (nw == 1)
            continue;
        r[i].kinds = 0;
        for (int k = 0; k < 3; k++) {
            if (strcmp(word[1], single[k]) == 0) {
                r[i].kind = (hessfit_geometry_kind)k;
                for (int a = 0; a < k + 2; a++) {
                    const long atom = strtol(word[2 + a], NULL, 10);
                    if (atom < 1 || atom > set->mols[r[i].mol].n_atoms) {
                        const int mol = r[i].mol;
                        free(r);
                        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: geometry = '%s': %s has no atom %ld (it has "
                                        "%d)", c->path, e->line, e->value, set->labels[mol], atom,
                                        set->mols[mol].n_atoms);
                    }
                    r[i].atoms[a] = (int)atom - 1;
                }
            }
            for (int w = 1; w < nw; w++)
                if (strcmp(word[w], plural[k]) == 0)
                    r[i].kinds |= 1u << k;
        }
    }
    *out = r;
    *n_out = n;
    return HESSFIT_SUCCESS;
}

/* The geometry targets of the requests, with the geometry-weight entries (q2mm's weights else). */
static hessfit_status build_geometry(const hessfit_config *c, hf_training_set *set, const geometry_request *r, int n)
{
    static const char *const single[3] = {"bond", "angle", "torsion"};
    double weight[3] = {HESSFIT_OBJ_BOND_WEIGHT, HESSFIT_OBJ_ANGLE_WEIGHT, HESSFIT_OBJ_TORSION_WEIGHT};
    hessfit_status st;
    for (int i = 0; i < hessfit_config_count(c, "geometry-weight"); i++) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "geometry-weight", i);
        char text[strlen(e->value) + 1], *word[8];
        entry_words(e, text, sizeof text, word);
        for (int k = 0; k < 3; k++)
            if (strcmp(word[0], single[k]) == 0)
                weight[k] = strtod(word[1], NULL);
    }
    for (int i = 0; i < n; i++) {
        const int before = set->n_geometry;
        for (int m = r[i].mol < 0 ? 0 : r[i].mol; m < (r[i].mol < 0 ? set->n_mols : r[i].mol + 1); m++) {
            if (r[i].kinds != 0) {
                if ((st = hessfit_objective_geometry_targets_of_terms(&set->typed[m], &set->mols[m], m, r[i].kinds, weight,
                                                                 &set->geometry, &set->n_geometry)) != HESSFIT_SUCCESS)
                    return prefixed(st, "%s:%d: geometry", c->path, r[i].line);
                continue;
            }
            hessfit_geometry_target *grown = realloc(set->geometry, (size_t)(set->n_geometry + 1) * sizeof *grown);
            if (grown == NULL)
                return no_memory("the geometry targets");
            set->geometry = grown;
            hessfit_geometry_target *t = &grown[set->n_geometry++];
            t->mol = m;
            t->kind = r[i].kind;
            for (int a = 0; a < 4; a++)
                t->atoms[a] = a < (int)r[i].kind + 2 ? r[i].atoms[a] : -1;
            t->weight = weight[r[i].kind];
        }
        if (set->n_geometry == before)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: geometry: no such internal coordinate in the structure's "
                            "terms (angles within %g degrees of linear are left out)", c->path, r[i].line,
                            HESSFIT_OBJ_GEOMETRY_LINEAR_DEG);
    }
    return HESSFIT_SUCCESS;
}

/* Per structure its Hessian-space objective (none without a Hessian); every structure must have
 * something to fit. */
static hessfit_status molecule_objectives(const hessfit_config *c, hf_training_set *set, const geometry_request *r, int n_r)
{
    const int none = set->settings.objective.frequencies == HESSFIT_OBJ_FREQUENCIES_NONE &&
                     !set->settings.objective.eigenmatrix && !set->settings.objective.hessian;
    set->mol_objective = malloc((size_t)set->n_mols * sizeof *set->mol_objective);
    if (set->mol_objective == NULL)
        return no_memory("the objective");
    for (int m = 0; m < set->n_mols; m++) {
        int other = 0;
        for (int i = 0; i < set->n_energies; i++)
            other |= set->energies[i].mol == m;
        for (int i = 0; i < n_r; i++)
            other |= r[i].mol == m || r[i].mol < 0;
        set->mol_objective[m] = set->settings.objective;
        if (set->mols[m].hessian == NULL) {
            set->mol_objective[m].frequencies = HESSFIT_OBJ_FREQUENCIES_NONE;
            set->mol_objective[m].eigenmatrix = set->mol_objective[m].hessian = 0;
            if (!none && !other)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                "%s: %s has no Hessian: the %s objective compares with QM Hessians; give it a `hessian = "
                                "FILE` entry (%d given for %d structures), or an energy or geometry target",
                                c->path, set->labels[m], set->settings.objective_name, hessfit_config_count(c, "hessian"),
                                set->n_mols);
        }
        if (none && !other)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: %s has nothing to fit: objective = none, and it has no "
                            "energy or geometry target", c->path, set->labels[m]);
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status make_labels(hf_training_set *set)
{
    set->labels = calloc((size_t)set->n_mols, sizeof *set->labels);
    if (set->labels == NULL)
        return no_memory("the structures' names");
    for (int m = 0; m < set->n_mols; m++) {
        const hessfit_molecule *mol = &set->mols[m];
        char text[600];
        if (mol->name != NULL && mol->name[0] != '\0')
            snprintf(text, sizeof text, "structure %d '%.200s' (%.300s)", m + 1, mol->name,
                     mol->source ? mol->source : "");
        else
            snprintf(text, sizeof text, "structure %d (%.300s)", m + 1, mol->source ? mol->source : "");
        if ((set->labels[m] = strdup(text)) == NULL)
            return no_memory("the structures' names");
    }
    return HESSFIT_SUCCESS;
}

/* ---- typing ------------------------------------------------------------------------------------ */

static hessfit_status type_structures(const hessfit_config *c, hf_training_set *set)
{
    const int n_patterns = hessfit_config_count(c, "no-term") + hessfit_config_count(c, "prefer");
    const char **patterns = calloc((size_t)n_patterns + 1, sizeof *patterns);
    char(*prefer)[48] = calloc((size_t)n_patterns + 1, sizeof *prefer);
    hessfit_status st = HESSFIT_SUCCESS;
    int k = 0;
    set->typed = calloc((size_t)set->n_mols, sizeof *set->typed);
    if (patterns == NULL || prefer == NULL || set->typed == NULL) {
        free(patterns);
        free(prefer);
        return no_memory("typing");
    }
    for (int i = 0; i < c->n_entries; i++) { /* in file order: pattern numbers as in the file */
        const hessfit_config_entry *e = &c->entries[i];
        if (strcmp(e->key, "no-term") == 0)
            patterns[k++] = e->value;
        else if (strcmp(e->key, "prefer") == 0) {
            snprintf(prefer[k], sizeof prefer[k], "prefer %.40s", e->value);
            patterns[k] = prefer[k];
            k++;
        }
    }
    hessfit_typing_options opt = {k, patterns};
    for (int m = 0; m < set->n_mols && st == HESSFIT_SUCCESS; m++) {
        hessfit_topology topo;
        if ((st = hessfit_topology_build(&set->mols[m], NULL, &topo)) != HESSFIT_SUCCESS) {
            st = prefixed(st, "%s: bonds of %s", c->path, set->labels[m]);
            break;
        }
        if ((st = hessfit_assign_parameters(&set->mols[m], &topo, &set->ff, &opt, &set->typed[m])) != HESSFIT_SUCCESS)
            st = prefixed(st, "%s: typing %s against %s", c->path, set->labels[m], set->ff.path);
        hessfit_topology_free(&topo);
    }
    free(patterns);
    free(prefer);
    return st;
}

/* used[p] = 1 when some typed term or the model uses parameter p (the MM3* form's stretch-bend lines
 * and van der Waals lines are used by no typed term). */
static unsigned char *used_parameters(const hf_training_set *set)
{
    unsigned char *used = calloc((size_t)set->ff.n_params + 1, 1);
    if (used == NULL)
        return NULL;
    for (int m = 0; m < set->n_mols; m++)
        for (int t = 0; t < set->typed[m].n_terms; t++)
            if (set->typed[m].terms[t].param >= 0 && set->typed[m].terms[t].param < set->ff.n_params)
                used[set->typed[m].terms[t].param] = 1;
    for (int p = 0; p < set->ff.n_params; p++)
        used[p] |= hessfit_model_param_uses(set->model, p) > 0;
    return used;
}

/* ---- free values ------------------------------------------------------------------------------- */

static int is_free(const hessfit_model *model, int param, int value)
{
    for (int i = 0; i < hessfit_model_n_free(model); i++) {
        int p, v;
        if (hessfit_model_free_parameter(model, i, &p, &v, NULL, NULL) == HESSFIT_SUCCESS && p == param && v == value)
            return 1;
    }
    return 0;
}

/* Free one value unless it already is; *added counts the new ones. */
static hessfit_status free_value(hf_training_set *set, int param, int value, int *added)
{
    if (is_free(set->model, param, value))
        return HESSFIT_SUCCESS;
    hessfit_status st = hessfit_model_add_free(set->model, param, value);
    if (st == HESSFIT_SUCCESS)
        (*added)++;
    return st;
}

#define FREE_SYNTAX                                                                                                    \
    "bond k, bond r0, bond mu, angle k, angle theta0, stretch-bend k, torsion k, torsion phase, improper k, "          \
    "improper phase, vdw r, vdw eps, line N [k|r0|mu|theta0|phase|r|eps|value I]"

/* "line N [what]": the values of the parameter on line N. */
static hessfit_status free_line(hf_training_set *set, const hessfit_config_entry *e, char **tok, int n_tok,
                           const unsigned char *used, int *added)
{
    const char *path = set->config.path;
    char *end;
    long line = n_tok >= 2 ? strtol(tok[1], &end, 10) : 0;
    if (n_tok < 2 || *end != '\0' || line < 1 || line > 100000000L)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: free = '%s': 'line' needs a force-field line number", path, e->line,
                        e->value);
    const int p = hessfit_forcefield_param_at_line(&set->ff, (int)line);
    if (p < 0)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: free = '%s': unknown parameter: %s has none on line %ld",
                        path, e->line, e->value, set->ff.path, line);
    const hessfit_ff_param *q = &set->ff.params[p];
    char types[64];
    hf_param_types_text(q, types, sizeof types);
    if (!used[p])
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s:%d: free = '%s': the %s parameter %s on line %d is used by no term of the training set",
                        path, e->line, e->value, hessfit_param_kind_name(q->kind), types, q->line);
    const char *what = n_tok >= 3 ? tok[2] : NULL;
    int selected[HESSFIT_FF_MAX_VALUES], n_sel = 0;
    for (int v = 0; v < q->n_values && v < HESSFIT_FF_MAX_VALUES; v++) {
        int take;
        char name[32];
        hf_param_value_name(q, v, name, sizeof name, NULL);
        if (is_fourier(q) && v % 3 == 2)
            continue; /* a periodicity is never free */
        if (what == NULL) /* k and equilibrium (a bond moment only by name: line N mu) */
            take = !(q->kind == HESSFIT_PARAM_BOND && v == 2);
        else if (strcmp(what, "value") == 0)
            take = n_tok == 4 && atoi(tok[3]) == v + 1;
        else if (is_fourier(q))
            take = (strcmp(what, "k") == 0 && v % 3 == 0) || (strcmp(what, "phase") == 0 && v % 3 == 1);
        else
            take = strcmp(what, name) == 0 || (strcmp(what, "r") == 0 && strcmp(name, "r*") == 0);
        if (take)
            selected[n_sel++] = v;
    }
    if (n_sel == 0 || n_tok > (what != NULL && strcmp(what, "value") == 0 ? 4 : 3))
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                        "%s:%d: free = '%s': the %s parameter %s on line %d has no such value (it has %s)", path,
                        e->line, e->value, hessfit_param_kind_name(q->kind), types, q->line,
                        q->kind == HESSFIT_PARAM_BOND    ? (q->n_values > 2 ? "k, r0, mu" : "k, r0")
                        : q->kind == HESSFIT_PARAM_ANGLE ? "k, theta0"
                        : is_fourier(q)             ? "k, phase per Fourier term; value I"
                        : q->kind == HESSFIT_PARAM_VDW   ? "r, eps"
                                                    : "k");
    for (int s = 0; s < n_sel; s++) {
        hessfit_status st = free_value(set, p, selected[s], added);
        if (st != HESSFIT_SUCCESS)
            return prefixed(st, "%s:%d: free = '%s'", path, e->line, e->value);
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status free_entry(hf_training_set *set, const hessfit_config_entry *e, const unsigned char *used)
{
    static const struct {
        const char *kind, *value;
        hessfit_param_kind param;
        unsigned what;
    } kinds[] = {
        {"bond", "k", HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_K},
        {"bond", "r0", HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_X0},
        {"bond", "mu", HESSFIT_PARAM_BOND, HESSFIT_MODEL_FREE_MU},
        {"stretch-bend", "k", HESSFIT_PARAM_STRETCH_BEND, HESSFIT_MODEL_FREE_K},
        {"angle", "k", HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_K},
        {"angle", "theta0", HESSFIT_PARAM_ANGLE, HESSFIT_MODEL_FREE_X0},
        {"torsion", "k", HESSFIT_PARAM_TORSION, HESSFIT_MODEL_FREE_K},
        {"torsion", "phase", HESSFIT_PARAM_TORSION, HESSFIT_MODEL_FREE_PHASE},
        {"improper", "k", HESSFIT_PARAM_IMPROPER, HESSFIT_MODEL_FREE_K},
        {"improper", "phase", HESSFIT_PARAM_IMPROPER, HESSFIT_MODEL_FREE_PHASE},
        {"vdw", "r", HESSFIT_PARAM_VDW, HESSFIT_MODEL_FREE_X0},
        {"vdw", "eps", HESSFIT_PARAM_VDW, HESSFIT_MODEL_FREE_K},
    };
    const char *path = set->config.path;
    char text[256], *tok[8], *save = NULL;
    int n_tok = 0, added = 0;
    hessfit_status st;
    snprintf(text, sizeof text, "%s", e->value);
    for (char *t = strtok_r(text, " \t", &save); t != NULL && n_tok < 8; t = strtok_r(NULL, " \t", &save))
        tok[n_tok++] = t;
    if (n_tok >= 1 && strcmp(tok[0], "line") == 0)
        st = free_line(set, e, tok, n_tok, used, &added);
    else {
        int k = -1;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && n_tok == 2; i++)
            if (strcmp(tok[0], kinds[i].kind) == 0 && strcmp(tok[1], kinds[i].value) == 0)
                k = (int)i;
        if (k < 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: free = '%s': unknown parameter kind (one of: %s)", path,
                            e->line, e->value, FREE_SYNTAX);
        st = hessfit_model_add_free_kind(set->model, kinds[k].param, kinds[k].what, &added);
        if (st != HESSFIT_SUCCESS)
            return prefixed(st, "%s:%d: free = '%s'", path, e->line, e->value);
        if (added == 0) {
            int any = 0;
            for (int p = 0; p < set->ff.n_params; p++)
                any |= used[p] && set->ff.params[p].kind == kinds[k].param;
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: free = '%s' frees nothing: %s", path, e->line, e->value,
                            kinds[k].param == HESSFIT_PARAM_VDW
                                ? "no term uses a vdw parameter (the fit model has no nonbonded terms)"
                            : set->settings.form != HESSFIT_MODEL_FORM_MM3 &&
                                    (kinds[k].what == HESSFIT_MODEL_FREE_MU || kinds[k].param == HESSFIT_PARAM_STRETCH_BEND)
                                ? "bond moments and stretch-bend constants are values of the MM3* form only (form = mm3)"
                            : !any ? "no term of the training set uses such a parameter"
                                   : "every such value is already free (an earlier free entry), or 0 in the MM3* form "
                                     "(free a zero torsion V, stretch-bend k or bond moment by its line: free = line N)");
        }
    }
    if (st == HESSFIT_SUCCESS && added == 0)
        st =
            hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                     "%s:%d: free = '%s' frees nothing: already free (an earlier free entry)", path, e->line, e->value);
    return st;
}

/*
 * The harmonic form's nonbonded terms (`nonbonded = on`): Lennard-Jones from the force field's vdW
 * parameters and Coulomb from the structures' partial charges, 1-2 and 1-3 pairs excluded, 1-4 pairs
 * scaled by `scale14` (default by the force field's family: AMBER frcmod 1/1.2 and 1/2, MM3 .fld
 * unscaled, an OpenMM ForceField XML its NonbondedForce's coulomb14scale and lj14scale),
 * `combining` Lorentz-Berthelot (AMBER, MM3) or geometric (OPLS-AA; the default for an OPLS-AA
 * ForceField XML, hessfit_forcefield.geometric_combining).
 */
static hessfit_status nonbonded_options(const hessfit_config *c, const hf_training_set *set, hessfit_model_options *o)
{
    const hessfit_config_entry *on = hessfit_config_entry_at(c, "nonbonded", 0), *e;
    o->nonbonded = on != NULL && strcmp(on->value, "on") == 0;
    if (!o->nonbonded) {
        static const char *const needs[2] = {"scale14", "combining"};
        for (int k = 0; k < 2; k++)
            if ((e = hessfit_config_entry_at(c, needs[k], 0)) != NULL)
                return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: %s without `nonbonded = on`", c->path, e->line,
                                     needs[k]);
        return HESSFIT_SUCCESS;
    }
    if (set->settings.form == HESSFIT_MODEL_FORM_MM3)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                             "%s:%d: nonbonded = on: the MM3* form has MacroModel's own van der Waals and charges "
                             "(`form = harmonic` for Lennard-Jones and the structures' charges)",
                             c->path, on->line);
    const int amber = set->ff.format == HESSFIT_FF_FRCMOD;
    o->coulomb14_scale = set->ff.has_14_scales ? set->ff.coulomb14_scale : amber ? 1.0 / 1.2 : 1.0;
    o->lj14_scale = set->ff.has_14_scales ? set->ff.lj14_scale : amber ? 0.5 : 1.0;
    if ((e = hessfit_config_entry_at(c, "scale14", 0)) != NULL) { /* the config checked its form */
        char text[256], *save = NULL;
        snprintf(text, sizeof text, "%s", e->value);
        const char *w0 = strtok_r(text, " \t", &save), *w1 = strtok_r(NULL, " \t", &save);
        hessfit_status st;
        if (w0 == NULL || w1 == NULL ||
            (st = hf_parse_double(w0, c->path, e->line, "scale14", &o->coulomb14_scale)) != HESSFIT_SUCCESS ||
            (st = hf_parse_double(w1, c->path, e->line, "scale14", &o->lj14_scale)) != HESSFIT_SUCCESS)
            return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: scale14 '%s'", c->path, e->line, e->value);
    }
    const char *rule_default = set->ff.geometric_combining ? "geometric" : "lorentz-berthelot";
    o->combining = strcmp(hessfit_config_get(c, "combining", rule_default), "geometric") == 0
                       ? HESSFIT_COMBINE_GEOMETRIC
                       : HESSFIT_COMBINE_LORENTZ_BERTHELOT;
    for (int m = 0; m < set->n_mols; m++)
        if (set->mols[m].partial_charges == NULL)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s:%d: nonbonded = on: %s has no partial charges (read them from a .mol2 or a "
                                 "MacroModel .mmo)",
                                 c->path, on->line, set->labels[m]);
    return HESSFIT_SUCCESS;
}

/* ---- the comparison force field (hessfit report --forcefield) ----------------------------------- */

static hessfit_status same_layout(const hessfit_forcefield *a, const hessfit_forcefield *b)
{
    if (a->n_params != b->n_params || a->format != b->format)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s is not %s with other values: %d parameters (%s) against %d (%s)",
                        b->path, a->path, b->n_params, b->format == HESSFIT_FF_MM3_FLD ? ".fld" : "frcmod", a->n_params,
                        a->format == HESSFIT_FF_MM3_FLD ? ".fld" : "frcmod");
    for (int i = 0; i < a->n_params; i++) {
        const hessfit_ff_param *p = &a->params[i], *q = &b->params[i];
        int same = p->kind == q->kind && p->n_types == q->n_types && p->n_values == q->n_values && p->line == q->line &&
                   p->improper_form == q->improper_form;
        for (int t = 0; same && t < p->n_types && t < 4; t++)
            same = strcmp(p->types[t], q->types[t]) == 0;
        for (int v = 2; same && is_fourier(p) && v < p->n_values; v += 3)
            same = p->values[v] == q->values[v];
        if (!same)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "%s:%d: not the parameter of %s:%d (kind, types, periodicities and lines must be the same; "
                            "only values may differ)",
                            b->path, q->line, a->path, p->line);
    }
    return HESSFIT_SUCCESS;
}

static hessfit_status add_comparison(hf_training_set *set, const char *path, const unsigned char *used, hessfit_forcefield *other)
{
    hessfit_status st = hessfit_forcefield_read(path, other);
    int added = 0;
    if (st != HESSFIT_SUCCESS)
        return prefixed(st, "--forcefield");
    if ((st = same_layout(&set->ff, other)) != HESSFIT_SUCCESS)
        return st;
    for (int p = 0; p < set->ff.n_params; p++) {
        const hessfit_ff_param *a = &set->ff.params[p], *b = &other->params[p];
        if (!used[p] || a->kind == HESSFIT_PARAM_VDW || a->kind == HESSFIT_PARAM_CHARGE)
            continue;
        for (int v = 0; v < a->n_values; v++)
            if (!(is_fourier(a) && v % 3 == 2) && a->values[v] != b->values[v] &&
                !(a->kind == HESSFIT_PARAM_BOND && v == 2 && set->settings.form != HESSFIT_MODEL_FORM_MM3) &&
                (st = free_value(set, p, v, &added)) != HESSFIT_SUCCESS)
                return prefixed(st, "--forcefield %s", path);
    }
    return HESSFIT_SUCCESS;
}

/* ---- the Seminario start ----------------------------------------------------------------------- */

static hessfit_status seminario_start(hf_training_set *set)
{
    hessfit_seminario_options opt = hessfit_seminario_q2mm_options();
    hessfit_seminario **est = calloc((size_t)set->n_mols, sizeof *est);
    unsigned char *chosen = calloc((size_t)set->ff.n_params + 1, 1);
    hessfit_seminario_instance *inst = NULL;
    hessfit_seminario_group *groups = NULL;
    double(*old)[2] = calloc((size_t)set->ff.n_params + 1, sizeof *old);
    int n_inst = 0, cap = 0, n_groups = 0;
    hessfit_status st = HESSFIT_SUCCESS;
    if (est == NULL || chosen == NULL || old == NULL) {
        st = no_memory("the Seminario start");
        goto done;
    }
    for (int i = 0; i < set->n_fit; i++) { /* parameters with a free bond or angle value */
        int p, v;
        hessfit_model_free_parameter(set->model, i, &p, &v, NULL, NULL);
        if ((set->ff.params[p].kind == HESSFIT_PARAM_BOND || set->ff.params[p].kind == HESSFIT_PARAM_ANGLE) && v < 2)
            chosen[p] = 1; /* k or the equilibrium (not a bond moment) */
    }
    for (int m = 0; m < set->n_mols && st == HESSFIT_SUCCESS; m++) {
        if ((st = hessfit_seminario_create(&set->mols[m], &opt, &est[m])) != HESSFIT_SUCCESS) {
            st = prefixed(st, "start = seminario: %s", set->labels[m]);
            break;
        }
        for (int t = 0; t < set->typed[m].n_terms; t++) {
            const hessfit_typed_term *term = &set->typed[m].terms[t];
            if (term->param < 0 || !chosen[term->param] || (term->kind != HESSFIT_TERM_BOND && term->kind != HESSFIT_TERM_ANGLE))
                continue;
            if (n_inst == cap) {
                cap = cap ? 2 * cap : 256;
                hessfit_seminario_instance *grown = realloc(inst, (size_t)cap * sizeof *inst);
                if (grown == NULL) {
                    st = no_memory("the Seminario start");
                    goto done;
                }
                inst = grown;
            }
            inst[n_inst].molecule = m;
            inst[n_inst].kind = term->kind;
            inst[n_inst].atoms[0] = term->atoms[0];
            inst[n_inst].atoms[1] = term->atoms[1];
            inst[n_inst].atoms[2] = term->kind == HESSFIT_TERM_ANGLE ? term->atoms[2] : -1;
            inst[n_inst].group = set->ff.params[term->param].line;
            inst[n_inst].value = NAN; /* the QM geometry's */
            n_inst++;
        }
    }
    if (st != HESSFIT_SUCCESS)
        goto done;
    if ((st = hessfit_seminario_average(est, set->n_mols, inst, n_inst, NULL, &groups, &n_groups)) != HESSFIT_SUCCESS) {
        st = prefixed(st, "start = seminario");
        goto done;
    }
    for (int p = 0; p < set->ff.n_params; p++)
        if (chosen[p]) {
            old[p][0] = set->ff.params[p].values[0];
            old[p][1] = set->ff.params[p].values[1];
        }
    if ((st = hessfit_seminario_apply(&set->ff, groups, n_groups, 0u, &set->n_seminario, NULL)) != HESSFIT_SUCCESS) {
        st = prefixed(st, "start = seminario");
        goto done;
    }
    for (int p = 0; p < set->ff.n_params; p++) /* only the free values take the estimates */
        for (int v = 0; chosen[p] && v < 2; v++)
            if (!is_free(set->model, p, v))
                set->ff.params[p].values[v] = old[p][v];
done:
    for (int m = 0; est != NULL && m < set->n_mols; m++)
        hessfit_seminario_free(est[m]);
    free(est);
    free(chosen);
    free(inst);
    free(groups);
    free(old);
    return st;
}

/* ---- bounds ------------------------------------------------------------------------------------ */

static hessfit_status bounds_and_steps(hf_training_set *set)
{
    const int n = set->n_fit;
    set->step = malloc((size_t)n * sizeof *set->step);
    if (set->settings.bounds) {
        set->lower = malloc((size_t)n * sizeof *set->lower);
        set->upper = malloc((size_t)n * sizeof *set->upper);
    }
    if (set->step == NULL || (set->settings.bounds && (set->lower == NULL || set->upper == NULL)))
        return no_memory("the bounds");
    for (int i = 0; i < n; i++) {
        int p, v;
        hessfit_opt_value_kind kind;
        double lo, hi;
        char what[160];
        hessfit_status st;
        hessfit_model_free_parameter(set->model, i, &p, &v, NULL, NULL);
        describe_value(&set->ff, p, v, what, sizeof what);
        if ((st = hessfit_optimize_value_kind(&set->ff.params[p], v, &kind)) != HESSFIT_SUCCESS ||
            (st = hessfit_optimize_q2mm_defaults(kind, &lo, &hi, &set->step[i])) != HESSFIT_SUCCESS)
            return prefixed(st, "%s: free value %s", set->config.path, what);
        if (!set->settings.bounds)
            continue;
        set->lower[i] = lo;
        set->upper[i] = hi;
        if (!(set->x_start[i] >= lo && set->x_start[i] <= hi))
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                            "%s: the start value of %s, %.10g, lies outside q2mm's box [%g, %g] for a %s (use bounds = "
                            "none, or start from another value)",
                            set->config.path, what, set->x_start[i], lo, hi, hessfit_opt_value_kind_name(kind));
    }
    return HESSFIT_SUCCESS;
}

/* ---- the platform and the device ------------------------------------------------------------------ */

/*
 * The device this process's Contexts take (hessfit_model_options.device_index): `device = N` on
 * every rank; `device = auto` the platform's choice in one process, and under MPI with several
 * ranks the rank's local rank modulo the node's devices (hf_devices.h), one device per rank.
 */
static hessfit_status choose_device(const hessfit_config *c, const hf_fit_settings *s, int *index)
{
    const hessfit_config_entry *e = hessfit_config_entry_at(c, "device", 0);
    const hessfit_config_entry *pe = hessfit_config_entry_at(c, "platform", 0);
    const int line = e != NULL ? e->line : pe != NULL ? pe->line : 0;
    char what[64];
    int n = 0;
    hessfit_status st;
    *index = -1;
    if (s->device >= 0)
        snprintf(what, sizeof what, "device = %d", s->device);
    else
        snprintf(what, sizeof what, "device = auto (%d ranks, one device each)", hf_comm_size());
    if (!hf_platform_has_devices(s->platform)) {
        if (s->device >= 0)
            return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                                 "%s:%d: %s: the %s platform has no devices to choose from (device = auto, or "
                                 "platform = CUDA or OpenCL)",
                                 c->path, line, what, s->platform);
        return HESSFIT_SUCCESS;
    }
    if (s->device < 0 && hf_comm_size() == 1) /* OpenMM's choice: its fastest device */
        return HESSFIT_SUCCESS;
    if ((st = hf_device_count(s->platform, &n)) != HESSFIT_SUCCESS)
        return prefixed(st, "%s:%d: %s", c->path, line, what);
    if (n < 1 || s->device >= n)
        return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s:%d: %s: the %s platform has %d device%s here%s", c->path,
                             line, what, s->platform, n, n == 1 ? "" : "s", n > 1 ? " (0 and up)" : n == 1 ? " (0)" : "");
    *index = s->device >= 0 ? s->device : hf_device_for_local_rank(hf_comm_local_rank(), n);
    return HESSFIT_SUCCESS;
}

/* ---- load -------------------------------------------------------------------------------------- */

void hf_training_set_free(hf_training_set *set)
{
    if (set == NULL)
        return;
    hessfit_objective_destroy(set->objective);
    hessfit_model_destroy(set->model);
    for (int m = 0; m < set->n_mols; m++) {
        if (set->typed != NULL)
            hessfit_typed_molecule_free(&set->typed[m]);
        hessfit_molecule_free(&set->mols[m]);
        if (set->labels != NULL)
            free(set->labels[m]);
    }
    free(set->typed);
    free(set->mols);
    free(set->labels);
    free(set->mol_objective);
    free(set->energies);
    free(set->group_names);
    free(set->geometry);
    free(set->x_start);
    free(set->free_param);
    free(set->free_value);
    free(set->x_compare);
    free(set->lower);
    free(set->upper);
    free(set->step);
    free(set->settings.output_dir);
    hessfit_forcefield_free(&set->ff);
    hessfit_config_free(&set->config);
    memset(set, 0, sizeof *set);
}

hessfit_status hf_training_set_load(const char *input, const hf_training_set_options *options, hf_training_set *set)
{
    hessfit_status st;
    origin *from = NULL;
    size_t cap = 0;
    unsigned char *used = NULL;
    hessfit_forcefield other;
    geometry_request *requests = NULL;
    int n_requests = 0;

    openblas_set_num_threads(1); /* the same bits under any process binding (hf_training_set.h) */
    memset(set, 0, sizeof *set);
    memset(&other, 0, sizeof other);
    if ((st = hessfit_config_read(input, &set->config)) != HESSFIT_SUCCESS)
        return st;
    const hessfit_config *c = &set->config;
    if ((st = read_settings(c, options, &set->settings)) != HESSFIT_SUCCESS)
        goto fail;

    const hessfit_config_entry *ffe = hessfit_config_entry_at(c, "forcefield", 0);
    if ((st = hessfit_forcefield_read(ffe->value, &set->ff)) != HESSFIT_SUCCESS) {
        st = prefixed(st, "%s:%d: forcefield", c->path, ffe->line);
        goto fail;
    }
    { /* the model: an .fld is evaluated as MacroModel's MM3* unless `form = harmonic` */
        const char *form = hessfit_config_get(c, "form", set->ff.format == HESSFIT_FF_MM3_FLD ? "mm3" : "harmonic");
        set->settings.form = strcmp(form, "mm3") == 0 ? HESSFIT_MODEL_FORM_MM3 : HESSFIT_MODEL_FORM_HARMONIC;
        if (set->settings.form == HESSFIT_MODEL_FORM_MM3 && set->ff.format != HESSFIT_FF_MM3_FLD) {
            const hessfit_config_entry *e = hessfit_config_entry_at(c, "form", 0);
            st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT,
                               "%s:%d: form = mm3 needs an MM3* .fld force field, not %s (form = harmonic for it)",
                               c->path, e != NULL ? e->line : 0, ffe->value);
            goto fail;
        }
    }
    for (int s = 0; s < hessfit_config_count(c, "structures"); s++)
        if ((st = read_structures(c, hessfit_config_entry_at(c, "structures", s), set, &from, &cap)) != HESSFIT_SUCCESS)
            goto fail;
    if (set->n_mols == 0) {
        st = hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "%s: empty training set: the structures entries hold no structure",
                      c->path);
        goto fail;
    }
    if ((st = make_labels(set)) != HESSFIT_SUCCESS || (st = read_hessians(c, set, from)) != HESSFIT_SUCCESS ||
        (st = read_energies(c, set)) != HESSFIT_SUCCESS ||
        (st = read_geometry_requests(c, set, &requests, &n_requests)) != HESSFIT_SUCCESS ||
        (st = molecule_objectives(c, set, requests, n_requests)) != HESSFIT_SUCCESS ||
        (st = type_structures(c, set)) != HESSFIT_SUCCESS || (st = build_geometry(c, set, requests, n_requests)) != HESSFIT_SUCCESS)
        goto fail;
    if (strcmp(set->settings.platform, "Reference") != 0 &&
        (st = hf_cli_load_platform(set->settings.platform)) != HESSFIT_SUCCESS) {
        const hessfit_config_entry *e = hessfit_config_entry_at(c, "platform", 0);
        st = prefixed(st, "%s:%d: platform = %s", c->path, e != NULL ? e->line : 0, set->settings.platform);
        goto fail;
    }
    if ((st = hf_cli_load_plugins()) != HESSFIT_SUCCESS)
        goto fail;
    hessfit_model_options model_options = hessfit_model_default_options();
    model_options.form = set->settings.form;
    model_options.platform = set->settings.platform;
    model_options.precision = set->settings.precision;
    if ((st = choose_device(c, &set->settings, &model_options.device_index)) != HESSFIT_SUCCESS)
        goto fail;
    if ((st = nonbonded_options(c, set, &model_options)) != HESSFIT_SUCCESS)
        goto fail;
    set->model_options = model_options;
    if (options != NULL && options->no_model)
        goto loaded;
    if ((st = hessfit_model_create(&set->ff, set->mols, set->typed, set->n_mols, &model_options, &set->model)) !=
        HESSFIT_SUCCESS) {
        st = prefixed(st, "%s: the fit model", c->path);
        goto fail;
    }
    if ((used = used_parameters(set)) == NULL) {
        st = no_memory("the parameters");
        goto fail;
    }
    for (int f = 0; f < hessfit_config_count(c, "free"); f++)
        if ((st = free_entry(set, hessfit_config_entry_at(c, "free", f), used)) != HESSFIT_SUCCESS)
            goto fail;
    set->n_fit = hessfit_model_n_free(set->model);
    if (options != NULL && options->compare_forcefield != NULL &&
        (st = add_comparison(set, options->compare_forcefield, used, &other)) != HESSFIT_SUCCESS)
        goto fail;
    set->n_free = hessfit_model_n_free(set->model);

    if (set->settings.start_seminario && (st = seminario_start(set)) != HESSFIT_SUCCESS)
        goto fail;
    set->x_start = malloc((size_t)set->n_free * sizeof *set->x_start);
    set->free_param = malloc((size_t)set->n_free * sizeof *set->free_param);
    set->free_value = malloc((size_t)set->n_free * sizeof *set->free_value);
    if (other.params != NULL)
        set->x_compare = malloc((size_t)set->n_free * sizeof *set->x_compare);
    if (set->x_start == NULL || set->free_param == NULL || set->free_value == NULL ||
        (other.params != NULL && set->x_compare == NULL)) {
        st = no_memory("the free values");
        goto fail;
    }
    for (int i = 0; i < set->n_free; i++) {
        int p, v;
        hessfit_model_free_parameter(set->model, i, &p, &v, NULL, NULL);
        set->free_param[i] = p;
        set->free_value[i] = v;
        set->x_start[i] = set->ff.params[p].values[v];
        if (set->x_compare != NULL)
            set->x_compare[i] = other.params[p].values[v];
    }
    if ((st = bounds_and_steps(set)) != HESSFIT_SUCCESS)
        goto fail;
    if ((st = hessfit_model_set_free(set->model, set->x_start)) != HESSFIT_SUCCESS) {
        st = prefixed(st, "%s: the start values", c->path);
        goto fail;
    }
    if ((st = hessfit_objective_create(set->model, set->mols, set->n_mols, set->mol_objective, &set->objective)) !=
        HESSFIT_SUCCESS) {
        st = prefixed(st, "%s: the %s objective", c->path, set->settings.objective_name);
        goto fail;
    }
    if (set->n_energies > 0 &&
        (st = hessfit_objective_set_energies(set->objective, set->energies, set->n_energies)) != HESSFIT_SUCCESS) {
        st = prefixed(st, "%s: the energies", c->path);
        goto fail;
    }
    if (set->n_geometry > 0 &&
        (st = hessfit_objective_set_geometry(set->objective, set->mols, set->n_mols, set->geometry, set->n_geometry)) !=
            HESSFIT_SUCCESS) {
        st = prefixed(st, "%s: the geometry targets", c->path);
        goto fail;
    }
    if (set->n_energies > 0 || set->n_geometry > 0) { /* the MM energies and minima, before any work */
        double loss;
        if ((st = hessfit_objective_evaluate(set->objective, NULL, &loss, NULL, NULL)) != HESSFIT_SUCCESS) {
            st = prefixed(st, "%s: at the start values", c->path);
            goto fail;
        }
    }
loaded:
    free(requests);
    free(from);
    free(used);
    hessfit_forcefield_free(&other);
    return HESSFIT_SUCCESS;

fail:
    free(requests);
    free(from);
    free(used);
    hessfit_forcefield_free(&other);
    hf_training_set_free(set);
    return st;
}
