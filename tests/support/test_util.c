#define _GNU_SOURCE /* mkdtemp, nftw, memmem, program_invocation_short_name */
#include "test_util.h"
#include "hessfit_elements.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <math.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

extern char **environ;

const char *test_platform_name(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "Reference";
    if (strcmp(name, "Reference") != 0)
        test_require_platform(name);
    return name;
}

/* What OpenMM said when its CUDA plugin failed to load (test_load_plugins): why that platform is absent. */
static char openmm_load_failures[4096];

/* Whether OpenMM has registered a platform of that name. */
static int platform_registered(const char *name) {
    for (int i = 0; i < OpenMM_Platform_getNumPlatforms(); i++)
        if (strcmp(OpenMM_Platform_getName(OpenMM_Platform_getPlatform(i)), name) == 0)
            return 1;
    return 0;
}

void test_require_platform(const char *name) {
    test_load_plugins();
    const int is_cuda = strcmp(name, "CUDA") == 0;
    if (!platform_registered(name)) {
        if (is_cuda) {
            printf("no CUDA platform (OpenMM's CUDA plugin did not load%s%s): skipped\n",
                   openmm_load_failures[0] ? ": " : ": no CUDA driver here", openmm_load_failures);
            exit(TEST_SKIPPED);
        }
        CHECK(0, "OpenMM has no platform named %s", name);
    }
    if (!is_cuda)
        return;
    /* The platform loads wherever the driver is installed; a Context needs a device. */
    OpenMM_System *system = OpenMM_System_create();
    OpenMM_System_addParticle(system, 1.0);
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(0.001);
    OpenMM_Context *context = NULL;
    hessfit_status st = hessfit_context_create(system, (OpenMM_Integrator *) verlet, name, NULL, &context);
    if (st != HESSFIT_SUCCESS) {
        printf("no usable CUDA device (%s): skipped\n", hessfit_last_error());
        exit(TEST_SKIPPED);
    }
    OpenMM_Context_destroy(context);
    OpenMM_VerletIntegrator_destroy(verlet);
    OpenMM_System_destroy(system);
}

OpenMM_Context *test_create_context_precision(OpenMM_System *system, const char *platform, const char *precision,
                                              const double *pos_nm, int n, double dt_ps, OpenMM_Integrator **integrator) {
    test_load_plugins();
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(dt_ps);
    OpenMM_Context *context = NULL;
    HF_OK(hessfit_context_create(system, (OpenMM_Integrator *) verlet, platform, precision, &context));
    test_set_positions(context, pos_nm, n);
    *integrator = (OpenMM_Integrator *) verlet;
    return context;
}

/* The environment variable name when set and not empty, else the build's path (compiled in). The
 * variables let the test binaries run from a copy of the build on another machine (bench/gpu-kit,
 * bench/gpu-run): HESSFIT_PLUGIN_DIR, HESSFIT_OPENMM_PLUGIN_DIR, HESSFIT_SOURCE_DIR. */
static const char *test_env_or(const char *name, const char *compiled) {
    const char *value = getenv(name);
    return value != NULL && value[0] != '\0' ? value : compiled;
}

void test_load_plugins(void) {
    static int loaded = 0;
    if (loaded)
        return;
    loaded = 1;
    /* OpenMM's own platform plugins first (OpenCL, CUDA, CPU): hessfit's GPU kernels register with
     * the platforms that exist when they load. A failure here (the CUDA plugin without a driver)
     * only means that platform is absent. */
    const char *openmm_dir = test_env_or("HESSFIT_OPENMM_PLUGIN_DIR", HESSFIT_OPENMM_PLUGIN_DIR);
    const char *hessfit_dir = test_env_or("HESSFIT_PLUGIN_DIR", HESSFIT_PLUGIN_DIR);
    OpenMM_StringArray *platforms = OpenMM_Platform_loadPluginsFromDirectory(openmm_dir);
    OpenMM_StringArray_destroy(platforms);
    OpenMM_StringArray *openmm_failures = OpenMM_Platform_getPluginLoadFailures();
    for (int i = 0; i < OpenMM_StringArray_getSize(openmm_failures); i++) {
        if (!strstr(OpenMM_StringArray_get(openmm_failures, i), "/libOpenMMCUDA.so:"))
            continue; /* the other plugins' failures follow from it, or do not matter here */
        size_t used = strlen(openmm_load_failures);
        snprintf(openmm_load_failures + used, sizeof openmm_load_failures - used, "%s%s", used ? "; " : "",
                 OpenMM_StringArray_get(openmm_failures, i));
    }
    OpenMM_StringArray_destroy(openmm_failures);
    OpenMM_StringArray *names = OpenMM_Platform_loadPluginsFromDirectory(hessfit_dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    int nfail = OpenMM_StringArray_getSize(failures);
    for (int i = 0; i < nfail; i++)
        fprintf(stderr, "plugin load failure: %s\n", OpenMM_StringArray_get(failures, i));
    CHECK(nfail == 0, "%d plugin(s) failed to load from %s", nfail, hessfit_dir);
    CHECK(OpenMM_StringArray_getSize(names) >= 1, "no plugin found in %s", hessfit_dir);
    OpenMM_StringArray_destroy(names);
    OpenMM_StringArray_destroy(failures);
}

const char *test_source_path(const char *relative) {
    static char buffers[8][4096];
    static int next = 0;
    char *buf = buffers[next++ % 8];
    snprintf(buf, sizeof buffers[0], "%s/%s", test_env_or("HESSFIT_SOURCE_DIR", HESSFIT_SOURCE_DIR), relative);
    return buf;
}

char *test_source_path_dup(const char *relative) {
    const char *p = test_source_path(relative);
    char *c = malloc(strlen(p) + 1);
    CHECK(c != NULL, "out of memory");
    strcpy(c, p);
    return c;
}

char *test_venv_python(void) {
    char *python = test_source_path_dup(".venv/bin/python");
    if (access(python, X_OK) != 0) {
        printf("SKIP: %s is missing (run scripts/setup-and-test to create the venv with openmm)\n", python);
        exit(TEST_SKIPPED);
    }
    return python;
}

void test_set_positions(OpenMM_Context *context, const double *pos_nm, int n) {
    OpenMM_Vec3Array *positions = OpenMM_Vec3Array_create(n);
    for (int i = 0; i < n; i++) {
        OpenMM_Vec3 v = {pos_nm[3 * i], pos_nm[3 * i + 1], pos_nm[3 * i + 2]};
        OpenMM_Vec3Array_set(positions, i, v);
    }
    OpenMM_Context_setPositions(context, positions);
    OpenMM_Vec3Array_destroy(positions);
}

OpenMM_Context *test_create_context(OpenMM_System *system, const char *platform_name, const double *pos_nm, int n,
                                    double dt_ps, OpenMM_Integrator **integrator) {
    test_load_plugins();
    OpenMM_Platform *platform = OpenMM_Platform_getPlatformByName(platform_name);
    CHECK(platform != NULL, "no platform %s", platform_name);
    OpenMM_VerletIntegrator *verlet = OpenMM_VerletIntegrator_create(dt_ps);
    if (strcmp(platform_name, "Reference") != 0 && strcmp(platform_name, "CPU") != 0)
        OpenMM_Platform_setPropertyDefaultValue(platform, "Precision", "double");
    OpenMM_Context *context = OpenMM_Context_create_2(system, (OpenMM_Integrator *) verlet, platform);
    test_set_positions(context, pos_nm, n);
    *integrator = (OpenMM_Integrator *) verlet;
    return context;
}

double test_energy_forces(OpenMM_Context *context, int groups_mask, double *forces, int n) {
    int types = OpenMM_State_Energy | (forces ? OpenMM_State_Forces : 0);
    OpenMM_State *state = OpenMM_Context_getState_2(context, types, 0, groups_mask);
    double energy = OpenMM_State_getPotentialEnergy(state);
    if (forces) {
        const OpenMM_Vec3Array *f = OpenMM_State_getForces(state);
        CHECK(OpenMM_Vec3Array_getSize(f) == n, "force array has %d entries, expected %d",
              OpenMM_Vec3Array_getSize(f), n);
        for (int i = 0; i < n; i++) {
            const OpenMM_Vec3 *v = OpenMM_Vec3Array_get(f, i);
            forces[3 * i] = v->x;
            forces[3 * i + 1] = v->y;
            forces[3 * i + 2] = v->z;
        }
    }
    OpenMM_State_destroy(state);
    return energy;
}

double test_max_abs_diff(const double *a, const double *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

double test_max_abs(const double *a, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

int test_soft_failures = 0;

int test_soft_finish(const char *name) {
    if (test_soft_failures) {
        fprintf(stderr, "%s: %d check(s) FAILED\n", name, test_soft_failures);
        return 1;
    }
    printf("%s: OK\n", name);
    return 0;
}

static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;

void test_seed(unsigned long long seed) {
    rng_state = seed ? seed : 0x9E3779B97F4A7C15ULL;
}

double test_random(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double) ((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

void test_rotate(double *pos, int n, const double axis[3], double angle) {
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double u[3] = {axis[0] / len, axis[1] / len, axis[2] / len};
    double c = cos(angle), s = sin(angle), t = 1.0 - c;
    double r[3][3] = {
        {t * u[0] * u[0] + c, t * u[0] * u[1] - s * u[2], t * u[0] * u[2] + s * u[1]},
        {t * u[0] * u[1] + s * u[2], t * u[1] * u[1] + c, t * u[1] * u[2] - s * u[0]},
        {t * u[0] * u[2] - s * u[1], t * u[1] * u[2] + s * u[0], t * u[2] * u[2] + c}};
    for (int i = 0; i < n; i++) {
        double x[3] = {pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]};
        for (int a = 0; a < 3; a++)
            pos[3 * i + a] = r[a][0] * x[0] + r[a][1] * x[1] + r[a][2] * x[2];
    }
}

/* ---- geometries for the term tests --------------------------------------------------------- */

#define TEST_PI 3.14159265358979323846
static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void sub3(const double *a, const double *b, double *c) {
    for (int k = 0; k < 3; k++)
        c[k] = a[k] - b[k];
}
static void cross3(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}
static double norm3(const double *a) { return sqrt(dot3(a, a)); }

double test_distance(const double *x, int i, int j) {
    double d[3] = {x[3 * i] - x[3 * j], x[3 * i + 1] - x[3 * j + 1], x[3 * i + 2] - x[3 * j + 2]};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

double test_angle(const double *x, int i, int j, int k) {
    double a[3], b[3], c[3];
    sub3(x + 3 * i, x + 3 * j, a);
    sub3(x + 3 * k, x + 3 * j, b);
    cross3(a, b, c);
    return atan2(norm3(c), dot3(a, b)); /* accurate near 0 and pi, unlike acos */
}

double test_best_assignment(const double *score, int n) {
    int perm[9], c[9] = {0};
    double best = 0.0;
    CHECK(n >= 1 && n <= 9, "test_best_assignment: n = %d", n);
    for (int i = 0; i < n; i++) {
        perm[i] = i;
        best += score[i * n + i];
    }
    for (int i = 1; i < n;) { /* Heap's algorithm, iterative */
        if (c[i] < i) {
            const int j = i % 2 ? c[i] : 0, t = perm[j];
            double sum = 0.0;
            perm[j] = perm[i];
            perm[i] = t;
            for (int k = 0; k < n; k++)
                sum += score[k * n + perm[k]];
            best = fmax(best, sum);
            c[i]++;
            i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return best;
}

double test_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- the temporary directory ------------------------------------------------------------------ */

static char temp_dir[4096];
static pid_t temp_owner;    /* the process that made it (a forked child leaves it alone) */
static char **temp_paths;   /* every path handed out, freed at exit */
static size_t n_temp_paths, cap_temp_paths;

static int make_writable(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)ftw;
    if (flag == FTW_D && (sb->st_mode & 0700) != 0700)
        (void)chmod(path, sb->st_mode | 0700); /* so that what a test made read-only can go */
    return 0;
}

static int remove_inside(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    if (ftw->level > 0)
        (void)remove(path);
    return 0;
}

static void remove_tree(int keep_top) {
    nftw(temp_dir, make_writable, 16, FTW_PHYS);
    nftw(temp_dir, remove_inside, 16, FTW_DEPTH | FTW_PHYS);
    if (!keep_top)
        (void)rmdir(temp_dir);
}

static void temp_dir_at_exit(void) {
    if (getpid() == temp_owner) {
        if (getenv("HESSFIT_TEST_KEEP") != NULL)
            printf("test files kept in %s\n", temp_dir);
        else
            remove_tree(0);
    }
    for (size_t i = 0; i < n_temp_paths; i++)
        free(temp_paths[i]);
    free(temp_paths);
    temp_paths = NULL;
    n_temp_paths = cap_temp_paths = 0;
}

const char *test_temp_dir(void) {
    if (temp_dir[0] == '\0') {
        const char *base = getenv("TMPDIR");
        char name[sizeof temp_dir];
        snprintf(name, sizeof name, "%s/hessfit_%s_XXXXXX", base != NULL && base[0] ? base : "/tmp",
                 program_invocation_short_name);
        CHECK(mkdtemp(name) != NULL, "mkdtemp(%s): %s", name, strerror(errno));
        memcpy(temp_dir, name, sizeof temp_dir);
        temp_owner = getpid();
        atexit(temp_dir_at_exit);
    }
    return temp_dir;
}

const char *test_temp_path(const char *name) {
    const char *dir = test_temp_dir();
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path;
    for (size_t i = 0; i < n_temp_paths; i++) /* the same name gives the same string */
        if (strlen(temp_paths[i]) + 1 == n && strcmp(temp_paths[i] + strlen(dir) + 1, name) == 0)
            return temp_paths[i];
    if (n_temp_paths == cap_temp_paths) {
        cap_temp_paths = cap_temp_paths ? 2 * cap_temp_paths : 64;
        temp_paths = realloc(temp_paths, cap_temp_paths * sizeof *temp_paths);
        CHECK(temp_paths != NULL, "out of memory");
    }
    path = malloc(n);
    CHECK(path != NULL, "out of memory");
    snprintf(path, n, "%s/%s", dir, name);
    temp_paths[n_temp_paths++] = path;
    return path;
}

void test_temp_clear(void) {
    test_temp_dir();
    remove_tree(1);
}

/* Every entry of the directory is one of names[0..n) or (handed_out) a name test_temp_path gave. */
static int check_entries(const char *const *names, int n, int handed_out) {
    DIR *d = opendir(test_temp_dir());
    struct dirent *e;
    int count = 0;
    CHECK(d != NULL, "opendir %s", temp_dir);
    while ((e = readdir(d)) != NULL) {
        int known = 0;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        for (int k = 0; k < n && !known; k++)
            known = strcmp(e->d_name, names[k]) == 0;
        for (size_t k = 0; handed_out && k < n_temp_paths && !known; k++)
            known = strcmp(temp_paths[k] + strlen(temp_dir) + 1, e->d_name) == 0;
        CHECK(known, "unexpected file %s in %s (a temporary file left behind?)", e->d_name, temp_dir);
        count++;
    }
    closedir(d);
    return count;
}

int test_temp_check_only(const char *const *names, int n) {
    return check_entries(names, names != NULL ? n : 0, 0);
}

int test_temp_check_known(void) {
    return check_entries(NULL, 0, 1);
}

const char *test_write_file(const char *name, const void *data, size_t n) {
    const char *path = test_temp_path(name);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot create %s: %s", path, strerror(errno));
    CHECK(fwrite(data, 1, n, f) == n, "cannot write %s", path);
    CHECK(fclose(f) == 0, "cannot close %s", path);
    return path;
}

const char *test_write_gz(const char *name, const void *data, size_t n) {
    const char *path = test_temp_path(name);
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL, "gzopen %s", path);
    CHECK(n <= (size_t)INT32_MAX && gzwrite(gz, data, (unsigned)n) == (int)n, "gzwrite %s", path);
    CHECK(gzclose(gz) == Z_OK, "gzclose %s", path);
    return path;
}

const char *test_write_text(const char *name, const char *text) {
    return test_write_file(name, text, strlen(text));
}

char *test_load_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    char *data;
    long n;
    CHECK(f != NULL, "cannot open %s: %s", path, strerror(errno));
    CHECK(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0, "size of %s", path);
    data = malloc((size_t)n + 1);
    CHECK(data != NULL, "out of memory");
    CHECK(fread(data, 1, (size_t)n, f) == (size_t)n, "short read of %s", path);
    fclose(f);
    data[n] = '\0';
    if (size != NULL)
        *size = (size_t)n;
    return data;
}

char *test_load_gunzip(const char *path, size_t *size) {
    gzFile gz = gzopen(path, "rb");
    size_t cap = 1 << 20, n = 0;
    char *data = malloc(cap);
    int got;
    CHECK(gz != NULL && data != NULL, "cannot open %s", path);
    while ((got = gzread(gz, data + n, (unsigned)(cap - n - 1))) > 0) {
        n += (size_t)got;
        if (cap - n - 1 == 0) {
            cap *= 2;
            data = realloc(data, cap);
            CHECK(data != NULL, "out of memory");
        }
    }
    CHECK(got == 0, "read error in %s", path);
    gzclose(gz);
    data[n] = '\0';
    if (size != NULL)
        *size = n;
    return data;
}

/* ---- text mutations --------------------------------------------------------------------------- */

char *test_splice(const char *text, size_t from, size_t to, const char *repl) {
    size_t n = strlen(text), r = strlen(repl);
    char *out;
    CHECK(from <= to && to <= n, "splice of [%zu, %zu) in a text of %zu bytes", from, to, n);
    out = malloc(n - (to - from) + r + 1);
    CHECK(out != NULL, "out of memory");
    memcpy(out, text, from);
    memcpy(out + from, repl, r);
    memcpy(out + from + r, text + to, n - to + 1);
    return out;
}

char *test_replace_first(const char *text, size_t start, const char *old, const char *repl, int *line) {
    const char *hit;
    size_t at;
    CHECK(start <= strlen(text), "start %zu beyond the text", start);
    hit = strstr(text + start, old);
    CHECK(hit != NULL, "'%s' not found in the text to mutate", old);
    at = (size_t)(hit - text);
    if (line != NULL)
        *line = test_line_of(text, at);
    return test_splice(text, at, at + strlen(old), repl);
}

char *test_replace_lines(const char *text, int first, int last, const char *lines) {
    CHECK(first >= 1 && last >= first - 1, "lines %d..%d", first, last);
    return test_splice(text, test_line_offset(text, first), test_line_offset(text, last + 1), lines);
}

size_t test_line_offset(const char *text, int line) {
    size_t off = 0;
    for (int l = 1; l < line; l++) {
        const char *nl = strchr(text + off, '\n');
        CHECK(nl != NULL, "line %d beyond the text", line);
        off = (size_t)(nl - text) + 1;
    }
    return off;
}

int test_line_of(const char *text, size_t off) {
    int line = 1;
    for (size_t k = 0; k < off; k++)
        line += text[k] == '\n';
    return line;
}

int test_find_line(const char *text, int from, const char *s, int flags) {
    size_t n = strlen(s);
    int line = 1, found = 0;
    for (const char *p = text; *p != '\0'; line++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        int hit = (flags & TEST_LINE_EXACT) ? len == n && memcmp(p, s, n) == 0 : memmem(p, len, s, n) != NULL;
        if (line >= from && hit) {
            found = line;
            if (!(flags & TEST_LINE_LAST))
                break;
        }
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    CHECK(found > 0, "no line %s '%s' (from line %d)", (flags & TEST_LINE_EXACT) ? "that is" : "containing", s, from);
    return found;
}

/* ---- expected failures ------------------------------------------------------------------------ */

static int quiet_failures;

void test_set_quiet(int quiet) {
    quiet_failures = quiet;
}

void test_expect_file_error(hessfit_status got, hessfit_status want, const char *path, int line, const char *part1,
                            const char *part2, const char *what) {
    const char *msg = hessfit_last_error();
    CHECK(got != HESSFIT_SUCCESS, "%s: the call succeeded", what);
    CHECK(want == HESSFIT_SUCCESS || got == want, "%s: got %s, expected %s (%s)", what, hessfit_status_string(got),
          hessfit_status_string(want), msg);
    if (path != NULL) {
        const char *at = strstr(msg, path);
        CHECK(at != NULL, "%s: the message does not name the file %s: %s", what, path, msg);
        if (line > 0) {
            char where[4200];
            snprintf(where, sizeof where, "%s:%d:", path, line);
            CHECK(strstr(msg, where) != NULL, "%s: the message does not name line %d: %s", what, line, msg);
        } else if (line == TEST_ANY_LINE) {
            at += strlen(path);
            CHECK(at[0] == ':' && isdigit((unsigned char)at[1]), "%s: the message does not name file:line: %s", what,
                  msg);
        }
    }
    CHECK(part1 == NULL || strstr(msg, part1) != NULL, "%s: the message lacks '%s': %s", what, part1, msg);
    CHECK(part2 == NULL || strstr(msg, part2) != NULL, "%s: the message lacks '%s': %s", what, part2, msg);
    if (!quiet_failures)
        printf("  %-44s -> %s: %s\n", what, hessfit_status_string(got), msg);
}

void test_expect_error(hessfit_status got, hessfit_status want, const char *part1, const char *part2, const char *what) {
    test_expect_file_error(got, want, NULL, 0, part1, part2, what);
}

static int molecule_is_zero(const hessfit_molecule *m) {
    return m->name == NULL && m->source == NULL && m->n_atoms == 0 && m->atomic_numbers == NULL &&
           m->coords == NULL && m->atom_types == NULL && m->atom_names == NULL && m->partial_charges == NULL &&
           m->bonds_known == 0 && m->n_bonds == 0 && m->bonds == NULL && m->bond_orders == NULL &&
           m->hessian == NULL && m->has_energy == 0 && m->energy == 0.0 && m->has_charge == 0 && m->charge == 0 &&
           m->multiplicity == 0 && m->n_modes == 0 && m->frequencies == NULL && m->modes == NULL &&
           m->n_reported_terms == 0 && m->reported_terms == NULL;
}

void test_expect_read_failure(hessfit_status (*read)(const char *path, hessfit_molecule *mol), const char *path, hessfit_status want,
                              int line, const char *part1, const char *part2, const char *what) {
    hessfit_molecule m;
    hessfit_status st;
    memset(&m, 0x5a, sizeof m);
    st = read(path, &m);
    test_expect_file_error(st, want, path, line, part1, part2, what);
    CHECK(molecule_is_zero(&m), "%s: the output is not zeroed after a failure", what);
}

void test_expect_list_failure(hessfit_status (*read)(const char *path, hessfit_molecule_list *list), const char *path,
                              hessfit_status want, int line, const char *part1, const char *part2, const char *what) {
    hessfit_molecule_list l;
    hessfit_status st;
    memset(&l, 0x5a, sizeof l);
    st = read(path, &l);
    test_expect_file_error(st, want, path, line, part1, part2, what);
    CHECK(l.n == 0 && l.items == NULL, "%s: the output is not zeroed after a failure", what);
}

/* ---- running a built program ------------------------------------------------------------------ */

const char *test_program_path(const char *argv0, const char *name) {
    static char path[4096];
    char self[4096];
    const char *dir;
    snprintf(self, sizeof self, "%s", argv0);
    dir = dirname(self);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (access(path, X_OK) != 0)
        snprintf(path, sizeof path, "%s/../bin/%s", dir, name);
    CHECK(access(path, X_OK) == 0, "no %s program next to %s", name, argv0);
    return path;
}

void test_shell_quote(char *out, size_t size, const char *s) {
    size_t n = 0;
    CHECK(size >= 3, "no room to quote");
    out[n++] = '\'';
    for (; *s; s++) {
        CHECK(n + 6 < size, "'%.40s...' too long to quote in %zu bytes", s, size);
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
}

test_run_result test_run_program(const char *program, const char *args) {
    test_run_result r;
    size_t qsize = 4 * strlen(program) + 3, cap = 1 << 16, err_len = 0;
    char *quoted = malloc(qsize), *cmd;
    char *argv[4] = {"sh", "-c", NULL, NULL};
    int out_pipe[2], err_pipe[2], w, open_fds = 2;
    posix_spawn_file_actions_t actions;
    pid_t pid;
    double t0;
    memset(&r, 0, sizeof r);
    CHECK(quoted != NULL, "out of memory");
    test_shell_quote(quoted, qsize, program);
    cmd = malloc(strlen(quoted) + strlen(args) + 2);
    CHECK(cmd != NULL, "out of memory");
    sprintf(cmd, "%s %s", quoted, args);
    argv[2] = cmd;
    CHECK(pipe(out_pipe) == 0 && pipe(err_pipe) == 0, "pipe: %s", strerror(errno));
    for (int k = 0; k < 2; k++) { /* only the child's copies on fds 1 and 2 stay open in it */
        fcntl(out_pipe[k], F_SETFD, FD_CLOEXEC);
        fcntl(err_pipe[k], F_SETFD, FD_CLOEXEC);
    }
    CHECK(posix_spawn_file_actions_init(&actions) == 0 &&
              posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO) == 0 &&
              posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO) == 0,
          "posix_spawn file actions");
    fflush(NULL);
    t0 = test_now_s();
    CHECK(posix_spawn(&pid, "/bin/sh", &actions, NULL, argv, environ) == 0, "cannot run %s", cmd);
    posix_spawn_file_actions_destroy(&actions);
    close(out_pipe[1]);
    close(err_pipe[1]);
    r.out = malloc(cap);
    CHECK(r.out != NULL, "out of memory");
    while (open_fds > 0) { /* both pipes at once, so that neither fills up and blocks the child */
        struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR)
            continue;
        CHECK(ready > 0, "poll: %s", strerror(errno));
        for (int k = 0; k < 2; k++) {
            char chunk[65536];
            ssize_t got;
            if (fds[k].fd < 0 || fds[k].revents == 0)
                continue;
            got = read(fds[k].fd, chunk, sizeof chunk);
            if (got < 0 && errno == EINTR)
                continue;
            CHECK(got >= 0, "reading the output of %s: %s", cmd, strerror(errno));
            if (got == 0) {
                close(fds[k].fd);
                if (k == 0)
                    out_pipe[0] = -1;
                else
                    err_pipe[0] = -1;
                open_fds--;
            } else if (k == 0) {
                while (r.out_len + (size_t)got + 1 > cap) {
                    cap *= 2;
                    r.out = realloc(r.out, cap);
                    CHECK(r.out != NULL, "out of memory");
                }
                memcpy(r.out + r.out_len, chunk, (size_t)got);
                r.out_len += (size_t)got;
            } else {
                size_t keep = sizeof r.err - 1 - err_len;
                if (keep > (size_t)got)
                    keep = (size_t)got;
                memcpy(r.err + err_len, chunk, keep);
                err_len += keep;
            }
        }
    }
    r.out[r.out_len] = '\0';
    r.err[err_len] = '\0';
    while ((w = (int)waitpid(pid, &r.status, 0)) < 0 && errno == EINTR)
        ;
    r.seconds = test_now_s() - t0;
    CHECK(w == pid && WIFEXITED(r.status), "%s did not exit normally", cmd);
    r.status = WEXITSTATUS(r.status);
    free(cmd);
    free(quoted);
    return r;
}

void test_expect_exit(const test_run_result *r, int status, const char *err_part, const char *what) {
    const char *nl = strchr(r->err, '\n');
    CHECK(r->status == status, "%s: exit %d, expected %d; stderr: %s", what, r->status, status, r->err);
    CHECK(err_part == NULL || strstr(r->err, err_part) != NULL, "%s: stderr lacks '%s': %s", what, err_part, r->err);
    printf("  %-44s exit %d%s%.*s\n", what, r->status, r->err[0] ? ", stderr: " : "",
           (int)(nl ? nl - r->err : (long)strlen(r->err)), r->err);
}

void test_expect_output(const test_run_result *r, const char *text, const char *what) {
    CHECK(strstr(r->out, text) != NULL, "%s: output lacks '%s'", what, text);
}

/* ---- HessianForce test molecules ---------------------------------------------------------------- */

void test_add_star_bonds_angles(hessfit_force *f, const int *g, int kb, int r0, int ka, int th0, int bonds[8]) {
    static const int pairs[4][2] = {{0, 1}, {0, 2}, {0, 3}, {3, 4}};
    for (int i = 0; i < 4; i++) {
        HF_OK(hessfit_force_add_bond(f, g[pairs[i][0]], g[pairs[i][1]], kb, r0, NULL));
        bonds[2 * i] = g[pairs[i][0]];
        bonds[2 * i + 1] = g[pairs[i][1]];
    }
    HF_OK(hessfit_force_add_angle(f, g[1], g[0], g[2], ka, th0, NULL));
    HF_OK(hessfit_force_add_angle(f, g[2], g[0], g[3], ka, th0, NULL));
    HF_OK(hessfit_force_add_angle(f, g[0], g[3], g[4], ka, th0, NULL));
}

/* ---- training-set fixtures -------------------------------------------------------------------- */

void test_read_ch3f_start(const char *path, test_ch3f_start *out) {
    char buf[4096];
    int line = 0;
    const int max_params = (int)(sizeof out->params / sizeof out->params[0]);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    memset(out, 0, sizeof *out);
    out->ff.format = HESSFIT_FF_FORMAT_NONE;
    out->ff.path = (char *)path;
    out->ff.params = out->params;
    while (fgets(buf, sizeof buf, f) != NULL) {
        char *tok = strtok(buf, " \t\r\n");
        hessfit_ff_param *p;
        int n_types;
        line++;
        if (tok == NULL || tok[0] == '#')
            continue;
        if (strcmp(tok, "reference_frequencies") == 0) {
            while ((tok = strtok(NULL, " \t\r\n")) != NULL && out->n_reference < 9)
                out->reference[out->n_reference++] = strtod(tok, NULL);
            continue;
        }
        CHECK(out->ff.n_params < max_params, "%s: too many parameters", path);
        p = &out->params[out->ff.n_params++];
        n_types = strcmp(tok, "bond") == 0 ? 2 : strcmp(tok, "angle") == 0 ? 3 : 0;
        CHECK(n_types > 0, "%s:%d: unknown record %s", path, line, tok);
        p->kind = n_types == 2 ? HESSFIT_PARAM_BOND : HESSFIT_PARAM_ANGLE;
        p->n_types = n_types;
        for (int k = 0; k < n_types; k++)
            snprintf(p->types[k], sizeof p->types[k], "%s", strtok(NULL, " \t\r\n"));
        p->n_values = 2;
        p->values[0] = strtod(strtok(NULL, " \t\r\n"), NULL);
        p->values[1] = strtod(strtok(NULL, " \t\r\n"), NULL);
        p->line = line;
        p->substructure = -1;
    }
    fclose(f);
    CHECK(out->ff.n_params == max_params && out->n_reference == 9, "%s: %d parameters, %d reference frequencies",
          path, out->ff.n_params, out->n_reference);
}

void test_load_ch3f(test_ch3f_set *s) {
    memset(s, 0, sizeof *s);
    s->ff_path = test_source_path_dup("examples/data/sn2/ch3f-seminario-start.txt");
    test_read_ch3f_start(s->ff_path, &s->ff);
    HF_CALL(hessfit_npy_xyz_read(test_source_path("examples/data/sn2/ch3f-optimized.xyz"),
                            test_source_path("examples/data/sn2/ch3f-hessian.npy"), &s->mol));
    CHECK(s->mol.n_atoms == 5 && s->mol.hessian != NULL, "CH3F: %d atoms", s->mol.n_atoms);
    s->mol.atom_types = calloc(5, sizeof(char *));
    CHECK(s->mol.atom_types != NULL, "out of memory");
    for (int a = 0; a < 5; a++) {
        const char *sym = hessfit_element_symbol(s->mol.atomic_numbers[a]);
        CHECK(sym != NULL && (s->mol.atom_types[a] = strdup(sym)) != NULL, "CH3F atom %d: no type", a + 1);
    }
    HF_CALL(hessfit_molecule_copy(&s->mol, &s->moved));
    for (int a = 0; a < 5; a++)
        if (s->moved.atomic_numbers[a] == 1) {
            s->moved.coords[3 * a] += 0.04;
            s->moved.coords[3 * a + 2] -= 0.03;
            break;
        }
    HF_CALL(hessfit_topology_build(&s->mol, NULL, &s->topo));
    HF_CALL(hessfit_assign_parameters(&s->mol, &s->topo, &s->ff.ff, NULL, &s->typed));
    CHECK(s->typed.n_terms == 10, "CH3F: %d typed terms", s->typed.n_terms);
}

void test_free_ch3f(test_ch3f_set *s) {
    free(s->ff_path);
    hessfit_typed_molecule_free(&s->typed);
    hessfit_topology_free(&s->topo);
    hessfit_molecule_free(&s->mol);
    hessfit_molecule_free(&s->moved);
}

const char *const test_rh_jaguar[TEST_RH_MOLECULES] = {
    "1ZDMPfromJCTCSI_loner1",          "2DMPEConformation1fromJCTCSI_isomer1",
    "3DMPEConformation2fromJCTCSI_isomer2", "4RR-Me-DuPHOSpro-RfromJCTCSI_isomer3",
    "5RR-Me-DuPHOSpro-SfromJCTCSI_isomer4", "6RR-Me-BPEpro-RConformation1fromJCTCSI_isomer5",
    "7RR-Me-BPEpro-RConformation2fromJCTCSI_isomer6", "8RR-Me-BPEpro-SConformation1fromJCTCSI_isomer7",
    "9RR-Me-BPEpro-SConformation2fromJCTCSI_isomer8"};

void test_type_rh_enamide(hessfit_forcefield *ff, hessfit_molecule_list *mmo, hessfit_typed_molecule typed[TEST_RH_MOLECULES]) {
    /* the torsions MacroModel left out of the rh-enamide .mmo */
    static const char *const no_term[7] = {"torsion * RH * *",    "torsion RH * * *",    "torsion * * C1 N1",
                                           "torsion N2 C2 C2 H1", "torsion C1 C2 C2 H1", "torsion C3 P3 C2 H1",
                                           "torsion C3 P3 C2 C2"};
    HF_CALL(hessfit_fld_read(test_source_path("examples/data/rh-enamide/ff/mm3.fld"), ff));
    HF_CALL(hessfit_mmo_read(test_source_path("examples/data/rh-enamide/rh_enamide_training_set.mmo.gz"), mmo));
    CHECK(mmo->n == TEST_RH_MOLECULES, "%d structures", mmo->n);
    for (int m = 0; m < TEST_RH_MOLECULES; m++) {
        hessfit_topology t;
        hessfit_typing_options opt = {7, no_term};
        HF_CALL(hessfit_topology_build(&mmo->items[m], NULL, &t));
        HF_CALL(hessfit_assign_parameters(&mmo->items[m], &t, ff, &opt, &typed[m]));
        hessfit_topology_free(&t);
    }
}

/* IUPAC dihedral i-j-k-l: phi = atan2(|b2| b1.(b2 x b3), (b1 x b2).(b2 x b3)), b1 = xj - xi,
 * b2 = xk - xj, b3 = xl - xk (positive = clockwise looking from j to k). */
double test_dihedral(const double *pos, int i, int j, int k, int l) {
    double b1[3], b2[3], b3[3], n1[3], n2[3];
    sub3(pos + 3 * j, pos + 3 * i, b1);
    sub3(pos + 3 * k, pos + 3 * j, b2);
    sub3(pos + 3 * l, pos + 3 * k, b3);
    cross3(b1, b2, n1);
    cross3(b2, b3, n2);
    return atan2(norm3(b2) * dot3(b1, n2), dot3(n1, n2));
}

double test_wrap_pi(double a) {
    while (a > TEST_PI)
        a -= 2.0 * TEST_PI;
    while (a < -TEST_PI)
        a += 2.0 * TEST_PI;
    return a;
}

/* sin and cos that are exact at 0 and +-pi, so planar geometries are exactly planar */
static void sincos_exact(double a, double *s, double *c) {
    if (a == 0.0) {
        *s = 0.0;
        *c = 1.0;
    } else if (a == TEST_PI || a == -TEST_PI) {
        *s = 0.0;
        *c = -1.0;
    } else {
        *s = sin(a);
        *c = cos(a);
    }
}

/*
 * Z-matrix placement (NeRF): atom i at distance r from c, angle i-c-b = theta, dihedral
 * a-b-c-i = phi (IUPAC). b < 0: along +x from c. a < 0: in the plane z = const through b, c.
 */
void test_place(double *pos, int i, int c, int b, int a, double r, double theta, double phi) {
    double *x = pos + 3 * i;
    if (c < 0) {
        x[0] = x[1] = x[2] = 0.0;
        return;
    }
    if (b < 0) {
        x[0] = pos[3 * c] + r;
        x[1] = pos[3 * c + 1];
        x[2] = pos[3 * c + 2];
        return;
    }
    double A[3], bc[3], ab[3], n[3], m[3];
    const double *B = pos + 3 * b, *C = pos + 3 * c;
    if (a < 0) {
        A[0] = B[0];
        A[1] = B[1] + 1.0;
        A[2] = B[2];
    } else {
        memcpy(A, pos + 3 * a, sizeof A);
    }
    sub3(C, B, bc);
    double l = norm3(bc);
    for (int k = 0; k < 3; k++)
        bc[k] /= l;
    sub3(B, A, ab);
    cross3(ab, bc, n);
    l = norm3(n);
    for (int k = 0; k < 3; k++)
        n[k] /= l;
    cross3(n, bc, m);
    double st, ct, sp, cp;
    sincos_exact(theta, &st, &ct);
    sincos_exact(phi, &sp, &cp);
    const double d2[3] = {-r * ct, r * st * cp, r * st * sp};
    for (int k = 0; k < 3; k++)
        x[k] = C[k] + d2[0] * bc[k] + d2[1] * m[k] + d2[2] * n[k];
    if (a >= 0) {
        const double got = test_dihedral(pos, a, b, c, i);
        CHECK(fabs(test_wrap_pi(got - phi)) < 1e-9, "Z-matrix placement gave dihedral %.12g, wanted %.12g", got, phi);
    }
}

double test_uniform(double lo, double hi) { return lo + (hi - lo) * test_random(); }

/* chain 0-1-2-...: r[i] bond (i-1, i), th[i] angle (i-2, i-1, i), ph[i] dihedral (i-3 .. i) */
void test_chain(double *pos, int n, const double *r, const double *th, const double *ph) {
    for (int i = 0; i < n; i++)
        test_place(pos, i, i - 1, i >= 2 ? i - 2 : -1, i >= 3 ? i - 3 : -1, r[i], th[i], ph[i]);
}

void test_random_chain(double *pos, int n, double rlo, double rhi) {
    double r[TEST_MAX_CHAIN], th[TEST_MAX_CHAIN], ph[TEST_MAX_CHAIN];
    CHECK(n <= TEST_MAX_CHAIN, "a chain of %d atoms (at most %d)", n, TEST_MAX_CHAIN);
    for (int i = 0; i < n; i++) {
        r[i] = test_uniform(rlo, rhi);
        th[i] = test_uniform(75.0, 150.0) * (TEST_PI / 180.0);
        ph[i] = test_uniform(-TEST_PI, TEST_PI);
    }
    test_chain(pos, n, r, th, ph);
}

/* star around atom 0: bonds r[1..3]; angle 2-0-1 = th2, angle 3-0-2 = th3, dihedral 1-2-0-3 = phi */
void test_star(double *pos, const double *r, double th2, double th3, double phi) {
    test_place(pos, 0, -1, -1, -1, 0, 0, 0);
    test_place(pos, 1, 0, -1, -1, r[1], 0, 0);
    test_place(pos, 2, 0, 1, -1, r[2], th2, 0.0);
    test_place(pos, 3, 0, 2, 1, r[3], th3, phi);
}

/* A random rigid motion (rotation about a random axis, translation up to 0.5 nm). */
void test_random_pose(double *pos, int n) {
    double axis[3] = {test_uniform(-1, 1), test_uniform(-1, 1), test_uniform(-1, 1)};
    if (norm3(axis) < 1e-3)
        axis[2] = 1.0;
    test_rotate(pos, n, axis, test_uniform(0, 2 * TEST_PI));
    const double t[3] = {test_uniform(-0.5, 0.5), test_uniform(-0.5, 0.5), test_uniform(-0.5, 0.5)};
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            pos[3 * i + c] += t[c];
}

double test_min_pair_distance(const double *pos, int n) {
    double m = 1e300;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            m = fmin(m, test_distance(pos, i, j));
    return m;
}

hessfit_fld_row *test_rh_hbond_case(hessfit_forcefield *ff, hessfit_fld_row *saved) {
    hessfit_fld_row *line = NULL;
    for (int r = 0; r < ff->n_fld_rows && line == NULL; r++)
        if (ff->fld_rows[r].code == '7' && ff->fld_rows[r].n_types == 2)
            line = &ff->fld_rows[r];
    CHECK(line != NULL && strcmp(line->types[0], "H1") == 0 && strcmp(line->types[1], "O3") == 0 &&
              line->values[0] == 90.0 && line->values[1] == 40.0,
          "mm3.fld's first hydrogen-bond line is not H1 O3 90 40");
    *saved = *line;
    strcpy(line->types[1], "O2");
    line->descriptor[0] = '\0';
    return line;
}
