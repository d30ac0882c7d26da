/*
 * The fit report's outputs (hessfit_report.h) and the atomic file writer (hessfit_atomic_file.h).
 *
 * A report of two molecules built by hand: CH3F with q2mm's numbers (QM frequencies, the Seminario
 * start's MM frequencies and its L-BFGS-B result, tests/data/goldens/ch3f-benchmark-results/
 * ch3f_jax_harmonic_gpu_lbfgsb.json) and the SN2 transition state (examples/data/sn2, QM
 * frequencies with the imaginary reaction mode; MM values invented) under a name with quotes, <, &
 * and non-ASCII characters, a source with a tab, a newline, a backslash and an invalid UTF-8 byte,
 * a missing MM frequency (NaN) and an infinite residual.
 *
 * Checked: the RMSD and loss sums against q2mm's golden RMSD 156.8599826412395 and scores;
 * the text table parsed back (every frequency within its printed 0.005 cm^-1, parameters to 1e-9);
 * JSON read by python3 (no NaN/Infinity constants allowed) with every number bit-identical to the
 * report's, strings decoded exactly, every non-finite value null and listed; SVG parsed by python3's
 * XML parser, marks counted and mapped back through the axis tick labels to the frequencies; the
 * convergence curve's path vertices mapped back to the losses (log axis); no "nan" anywhere;
 * an unwritable directory (argument `read-only`; skipped as root) and a rename onto a directory
 * give an error naming the path and leave
 * no temporary file; an existing file is replaced only on success (a writer failing after a full
 * write, a file-size limit hitting mid-write), keeping its permission bits on success.
 * Without python3 the python parts are skipped with a message; the C-side checks still run.
 */
#define _POSIX_C_SOURCE 200809L

#include "hessfit_atomic_file.h"
#include "hessfit_report.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The stationarity given to the CH3F molecule of the sample report (before, after). */
static const hessfit_report_stationarity ch3f_stationarity[2] = {{0.0004, 3, 1e-6, {1, 2}, 0.001, {2, 1, 3}},
                                                                 {108.3, 2, 0.1199, {1, 2}, 20.65, {3, 1, 4}}};

static int have_python;

/* ---- the hand-built report ---------------------------------------------------------------------- */

/* q2mm's CH3F benchmark (ch3f_jax_harmonic_gpu_lbfgsb.json): QM, Seminario start, optimised MM
 * frequencies (the optimised list has a 10th, spurious 702 cm^-1 mode first, left out here). */
static const double ch3f_qm[9] = {1040.5813860717833, 1191.7481438159166, 1191.7596032972854,
                                  1495.2543826262465, 1512.3024847909746, 1512.3904361886512,
                                  3057.9919349402667, 3145.0662046070593, 3145.08792677519};
static const double ch3f_before[9] = {851.0537821819515,  1141.6376479981186, 1141.6417784251746,
                                      1658.0257070313596, 1733.2637672364845, 1733.2645936902595,
                                      2896.7070519318877, 3021.8183227411423, 3021.8188029907415};
static const double ch3f_after[9] = {1040.573900451154,  1191.7564323191386, 1191.7616234901527,
                                     1495.2398215877263, 1512.3402905129306, 1512.341550673059,
                                     3057.989618036321,  3145.101051055829,  3145.1014923084217};
#define Q2MM_SEMINARIO_RMSD 156.8599826412395
#define Q2MM_SEMINARIO_SCORE 0.22144548738788938
#define Q2MM_FINAL_SCORE 5.5635717988554924e-09

/* examples/data/sn2/sn2-ts-frequencies.txt */
static const double sn2_qm[12] = {-461.7175680732779597, 322.0485086881695906, 322.0524565455945663,
                                  350.5272019668531129,  1085.528896081490302, 1085.586134320584279,
                                  1232.730524884822216,  1408.621736382568088, 1408.677630858957400,
                                  3184.674187783605703,  3371.972002346658883, 3371.998707344613649};

static const char sn2_name[] = "F\xE2\x81\xBB + CH\xE2\x82\x83" "Cl \"TS\" <SN2> & \xCE\xB1\xCE\xB2 \xE2\x80\x94 'q'";
static const char sn2_source[] = "C:\\data\\sn2\tTS\nhessian.npy \xFF end";
/* What a reader gets back: the invalid byte 0xFF replaced by U+FFFD, everything else as is. */
static const char sn2_source_decoded[] = "C:\\data\\sn2\tTS\nhessian.npy \xEF\xBF\xBD end";

static hessfit_report_mode ch3f_modes[9], sn2_modes[12];
static hessfit_report_molecule molecules[2];
static hessfit_report_objective objectives[2];
static hessfit_report_parameter parameters[8];
#define N_HISTORY 40
static hessfit_report_iteration history[N_HISTORY];
static hessfit_report report;

static double square(double x)
{
    return x * x;
}

static void build_report(void)
{
    static const char *names[8] = {"k", "r0", "k", "r0", "k", "theta0", "k", "theta0"};
    static const char *kinds[8] = {"bond", "bond", "bond", "bond", "angle", "angle", "angle", "angle"};
    static const char *types[8] = {"C-F", "C-F", "C-H", "C-H", "F-C-H", "F-C-H", "H-C-H", "H-C-H"};
    static const char *units[8] = {"kcal/mol/A^2", "A", "kcal/mol/A^2", "A", "kcal/mol/rad^2", "deg",
                                   "kcal/mol/rad^2", "deg"};
    static const int lines[8] = {5, 5, 6, 6, 9, 9, 10, 10}; /* examples/data/sn2/ch3f-seminario-start.frcmod */
    static const double before[8] = {270.60918930118333, 1.398635372383775, 348.31336238406834, 1.0940396626494566,
                                     59.62010839172108,  108.43609414745065, 54.65975104094709, 110.48621469688054};
    static const double after[8] = {453.0057789259686, 1.9004469680433171, 379.36712975393567, 1.0596036982438508,
                                    77.13824382885288, 123.22770003035636, 24.356516972621556, 78.93209577023646};
    double loss_before = 0, loss_after = 0;
    for (int i = 0; i < 9; i++) {
        hessfit_report_mode *m = &ch3f_modes[i];
        m->index = i;
        m->qm_mode = 6 + i;
        m->mm_mode_before = 6 + i;
        m->mm_mode_after = 7 + i;
        m->qm_cm1 = ch3f_qm[i];
        m->mm_before_cm1 = ch3f_before[i];
        m->mm_after_cm1 = ch3f_after[i];
        m->overlap_before = m->overlap_after = NAN; /* q2mm pairing: no overlaps */
        m->weight = 0.001;
        m->residual_before = square(m->weight * (m->qm_cm1 - m->mm_before_cm1));
        m->residual_after = square(m->weight * (m->qm_cm1 - m->mm_after_cm1));
    }
    for (int i = 0; i < 12; i++) {
        hessfit_report_mode *m = &sn2_modes[i];
        m->index = i;
        m->qm_mode = 6 + i;
        m->mm_mode_before = 6 + i;
        m->mm_mode_after = 6 + i;
        m->qm_cm1 = sn2_qm[i];
        m->mm_before_cm1 = i == 0 ? -380.25 : 1.05 * sn2_qm[i] + 10.125;
        m->mm_after_cm1 = i == 0 ? -455.5 : 0.995 * sn2_qm[i] + 1.0 / 3.0;
        m->overlap_before = 0.9 - 0.01 * i;
        m->overlap_after = 0.99 - 0.002 * i;
        m->weight = i == 0 ? 0.0 : 0.001; /* reaction coordinate skipped */
        m->residual_before = square(m->weight * (m->qm_cm1 - m->mm_before_cm1));
        m->residual_after = square(m->weight * (m->qm_cm1 - m->mm_after_cm1));
    }
    sn2_modes[3].mm_before_cm1 = NAN; /* unpaired before the fit */
    sn2_modes[3].mm_mode_before = -1;
    sn2_modes[3].residual_before = NAN;
    sn2_modes[5].residual_after = INFINITY;
    sn2_modes[7].overlap_after = NAN;
    molecules[0] = (hessfit_report_molecule){"CH3F", "examples/data/sn2/ch3f-hessian.npy", 9, ch3f_modes, ch3f_stationarity};
    molecules[1] = (hessfit_report_molecule){sn2_name, sn2_source, 12, sn2_modes, NULL};
    for (int i = 0; i < 9; i++) {
        loss_before += ch3f_modes[i].residual_before;
        loss_after += ch3f_modes[i].residual_after;
    }
    objectives[0] = (hessfit_report_objective){"frequencies (q2mm pairing)", "cm^-1", 9, loss_before, loss_after,
                                          Q2MM_SEMINARIO_RMSD, 0.024863118153450367};
    objectives[1] = (hessfit_report_objective){"eigenmatrix", "Hartree/Bohr^2/amu", 120, 0.5, NAN, 0.0125, -INFINITY};
    for (int p = 0; p < 8; p++)
        parameters[p] = (hessfit_report_parameter){lines[p], kinds[p], types[p], p % 2, names[p], before[p], after[p],
                                              units[p]};
    for (int i = 0; i < N_HISTORY; i++) {
        /* geometric decrease over 7.6 decades, a failed evaluation (NaN) and a derivative-free step */
        history[i].evaluation = i + 1;
        history[i].loss = Q2MM_SEMINARIO_SCORE * pow(Q2MM_FINAL_SCORE / Q2MM_SEMINARIO_SCORE, i / (N_HISTORY - 1.0));
        history[i].gradient_norm = 3.0 * pow(1e-6, i / (N_HISTORY - 1.0));
    }
    history[12].loss = NAN;
    history[20].gradient_norm = NAN;
    report = (hessfit_report){"CH3F and SN2 \"test\" <fit>", "LD_LBFGS", "success: relative loss change below ftol_rel",
                         151, 6.4015866, 2, molecules, 2, objectives, 8, parameters,
                         {"L-BFGS & \"friends\"", N_HISTORY, history}, NULL, NULL};
}

/* ---- file helpers ------------------------------------------------------------------------------- */

/* Entries of dir whose name contains ".tmp." (left-over temporary files). */
static int count_temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    CHECK(d != NULL, "cannot list %s", dir);
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.") != NULL) {
            printf("  left-over temporary file %s/%s\n", dir, e->d_name);
            n++;
        }
    closedir(d);
    return n;
}

static int count_substrings(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static int contains_nocase(const char *text, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = text; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return 1;
    return 0;
}

/* ---- python3 checks: a script writes key=value lines, the C side asserts ------------------------ */

static const char *python_script =
    "import json, math, re, sys\n"
    "import xml.etree.ElementTree as ET\n"
    "mode, src, dst = sys.argv[1:4]\n"
    "out = open(dst, 'w')\n"
    "def put(k, v): out.write('%s=%s\\n' % (k, v))\n"
    "def num(v): return 'null' if v is None else repr(float(v))\n"
    "def bad(c): raise ValueError('non-JSON constant ' + c)\n"
    "if mode == 'json':\n"
    "    d = json.loads(open(src, 'rb').read().decode('utf-8'), parse_constant=bad)\n"
    "    put('title', d['title'].encode('utf-8').hex())\n"
    "    put('evaluations', d['evaluations'])\n"
    "    put('wall_time_s', num(d['wall_time_s']))\n"
    "    put('n_molecules', len(d['molecules']))\n"
    "    for k, m in enumerate(d['molecules']):\n"
    "        put('mol%d.name' % k, m['name'].encode('utf-8').hex())\n"
    "        put('mol%d.source' % k, m['source'].encode('utf-8').hex())\n"
    "        put('mol%d.n_modes' % k, len(m['modes']))\n"
    "        put('mol%d.rmsd_before_cm1' % k, num(m['rmsd_before_cm1']))\n"
    "        for i, md in enumerate(m['modes']):\n"
    "            for key in ('index', 'qm_mode', 'mm_mode_before', 'mm_mode_after'):\n"
    "                put('mol%d.mode%d.%s' % (k, i, key), 'null' if md[key] is None else md[key])\n"
    "            for key in ('qm_cm1', 'mm_before_cm1', 'mm_after_cm1', 'weight', 'residual_before',\n"
    "                        'residual_after', 'overlap_before', 'overlap_after'):\n"
    "                put('mol%d.mode%d.%s' % (k, i, key), num(md[key]) if key in md else 'absent')\n"
    "    for p, q in enumerate(d['parameters']):\n"
    "        for key in ('before', 'after'): put('param%d.%s' % (p, key), num(q[key]))\n"
    "        put('param%d.ff_line' % p, q['ff_line'])\n"
    "    for o, q in enumerate(d['objectives']):\n"
    "        for key in ('loss_before', 'loss_after', 'rmsd_before', 'rmsd_after'):\n"
    "            put('objective%d.%s' % (o, key), num(q[key]))\n"
    "    put('n_history', len(d['history']))\n"
    "    for i, h in enumerate(d['history']):\n"
    "        put('history%d.loss' % i, num(h['loss']))\n"
    "        put('history%d.gradient_norm' % i, num(h['gradient_norm']) if 'gradient_norm' in h else 'absent')\n"
    "    put('n_nonfinite', len(d['nonfinite']))\n"
    "    for e in d['nonfinite']: put('nonfinite.' + e['path'], e['value'])\n"
    "else:\n"
    "    S = '{http://www.w3.org/2000/svg}'\n"
    "    root = ET.parse(src).getroot()\n"
    "    every = list(root.iter())\n"
    "    cls = lambda e: e.get('class', '')\n"
    "    text = lambda e: ''.join(e.itertext())\n"
    "    put('root_is_svg', int(root.tag == S + 'svg' and root.get('version') == '1.1'))\n"
    "    put('scripts', sum(1 for e in every if e.tag in (S + 'script', S + 'foreignObject') or\n"
    "                       any(a.startswith('on') for a in e.attrib)))\n"
    "    put('circles', sum(1 for e in every if e.tag == S + 'circle'))\n"
    "    put('paths', sum(1 for e in every if e.tag == S + 'path'))\n"
    "    for tag in ('circle', 'path', 'line'):\n"
    "        for c in ('before', 'after', 'legend-before', 'legend-after', 'identity', 'loss', 'best', 'gradient-norm'):\n"
    "            put('%s.%s' % (tag, c), sum(1 for e in every if e.tag == S + tag and cls(e) == c))\n"
    "    for g in every:\n"
    "        if g.tag == S + 'g' and cls(g).endswith('-points'): put('points.' + cls(g), len(list(g)))\n"
    "    labels = [text(e) for e in every if cls(e) == 'axis-label']\n"
    "    put('n_axis_labels', len(labels))\n"
    "    for i, t in enumerate(labels): put('axis_label%d' % i, t.encode('utf-8').hex())\n"
    "    put('title', text(root.find(S + 'title')).encode('utf-8').hex())\n"
    "    put('plot_title', text([e for e in every if cls(e) == 'plot-title'][0]).encode('utf-8').hex())\n"
    "    marks = [e for e in every if cls(e) in ('before', 'after')]\n"
    "    for i, e in enumerate(marks): put('mark%d.title' % i, text(e.find(S + 'title')).encode('utf-8').hex())\n"
    "    # the axes' tick labels give the data <-> pixel maps: invert them for every mark and series vertex\n"
    "    def axis_map(g, anchor, coord):\n"
    "        t = [(float(e.get(coord)), e.text) for e in g if cls(e) == 'tick-label' and e.get('text-anchor') == anchor]\n"
    "        (p0, s0), (p1, s1) = t[0], t[-1]\n"
    "        lg = (anchor == 'end' and 'log' in ''.join(text(e) for e in g if cls(e) == 'axis-label'))\n"
    "        v0, v1 = (math.log10(float(s0)), math.log10(float(s1))) if lg else (float(s0), float(s1))\n"
    "        f = lambda p: v0 + (p - p0) * (v1 - v0) / (p1 - p0)\n"
    "        return (lambda p: 10 ** f(p)) if lg else f\n"
    "    panels = [g for g in every if g.tag == S + 'g' and cls(g) == 'axes']\n"
    "    put('n_panels', len(panels))\n"
    "    maps = [(axis_map(g, 'middle', 'x'), axis_map(g, 'end', 'y')) for g in panels]\n"
    "    for i, e in enumerate(marks):\n"
    "        fx, fy = maps[0]\n"
    "        if e.tag == S + 'circle': cx, cy = float(e.get('cx')), float(e.get('cy'))\n"
    "        else:\n"
    "            v = [float(s) for s in re.findall(r'-?[0-9.]+', e.get('d'))]\n"
    "            cx, cy = v[0], 0.5 * (v[1] + v[5])\n"
    "        put('mark%d.class' % i, cls(e))\n"
    "        put('mark%d.xy' % i, '%r %r' % (fx(cx), fy(cy)))\n"
    "    ident = [e for e in every if cls(e) == 'identity']\n"
    "    if ident:\n"
    "        fx, fy = maps[0]\n"
    "        e = ident[0]\n"
    "        put('identity', '%r %r %r %r' % (fx(float(e.get('x1'))), fy(float(e.get('y1'))), fx(float(e.get('x2'))), fy(float(e.get('y2')))))\n"
    "    for c, panel in (('loss', 0), ('best', 0), ('gradient-norm', 1)):\n"
    "        for e in every:\n"
    "            if e.tag == S + 'path' and cls(e) == c:\n"
    "                fx, fy = maps[panel]\n"
    "                d = e.get('d')\n"
    "                put('series.%s.moves' % c, d.count('M'))\n"
    "                v = re.findall(r'([ML])(-?[0-9.]+) (-?[0-9.]+)', d)\n"
    "                put('series.%s.n' % c, len(v))\n"
    "                for i, (cmd, x, y) in enumerate(v): put('series.%s.%d' % (c, i), '%r %r' % (fx(float(x)), fy(float(y))))\n";

typedef struct kv {
    char **keys, **values;
    int n;
} kv;

static kv run_python(const char *mode, const char *file)
{
    char cmd[2048];
    kv r = {NULL, NULL, 0};
    char *text, *line, *save = NULL;
    int rc;
    snprintf(cmd, sizeof cmd, "python3 '%s' %s '%s' '%s'", test_temp_path("check.py"), mode, file,
             test_temp_path("check.out"));
    rc = system(cmd);
    CHECK(rc == 0, "python3 check of %s (%s) failed: exit %d", file, mode, rc);
    text = test_load_file(test_temp_path("check.out"), NULL);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '=');
        CHECK(eq != NULL, "python output line without '=': %s", line);
        *eq = '\0';
        r.keys = realloc(r.keys, (size_t)(r.n + 1) * sizeof *r.keys);
        r.values = realloc(r.values, (size_t)(r.n + 1) * sizeof *r.values);
        CHECK(r.keys != NULL && r.values != NULL, "no memory");
        r.keys[r.n] = strdup(line);
        r.values[r.n] = strdup(eq + 1);
        r.n++;
    }
    free(text);
    return r;
}

static void kv_free(kv *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->keys[i]);
        free(r->values[i]);
    }
    free(r->keys);
    free(r->values);
}

static const char *kv_get(const kv *r, const char *key)
{
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->keys[i], key) == 0)
            return r->values[i];
    CHECK(0, "python output has no key %s", key);
    return NULL;
}

static const char *kv_getf(const kv *r, const char *format, int a, int b)
{
    char key[128];
    snprintf(key, sizeof key, format, a, b);
    return kv_get(r, key);
}

static long kv_long(const kv *r, const char *key)
{
    return strtol(kv_get(r, key), NULL, 10);
}

static void hex_encode(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s && n + 3 < size; s++, n += 2)
        snprintf(out + n, 3, "%02x", (unsigned char)*s);
    out[n] = '\0';
}

static void check_hex_string(const char *hex, const char *expected, const char *what)
{
    char want[1024];
    hex_encode(expected, want, sizeof want);
    CHECK(strcmp(hex, want) == 0, "%s decoded as %s, expected %s", what, hex, want);
}

/* A number python read, against the double the report holds: bit-identical, or null for NaN/inf. */
static void check_number(const char *got, double expected, const char *what)
{
    if (!isfinite(expected)) {
        CHECK(strcmp(got, "null") == 0, "%s: non-finite %g written as %s, expected null", what, expected, got);
        return;
    }
    CHECK(strcmp(got, "null") != 0, "%s: %.17g written as null", what, expected);
    CHECK(strtod(got, NULL) == expected, "%s: read back %s, expected %.17g", what, got, expected);
}

/* ---- text ------------------------------------------------------------------------------------------- */

/* A frequency token: "1040.58", "-461.72i" (imaginary), "n/a". */
static double parse_frequency(const char *token, int *imaginary)
{
    char *end;
    double v;
    *imaginary = 0;
    if (strcmp(token, "n/a") == 0)
        return NAN;
    v = strtod(token, &end);
    CHECK(end != token, "not a frequency: '%s'", token);
    if (*end == 'i') {
        *imaginary = 1;
        end++;
    }
    CHECK(*end == '\0', "trailing text in frequency '%s'", token);
    return v;
}

static int split(char *line, char **tokens, int max)
{
    int n = 0;
    for (char *t = strtok(line, " "); t != NULL && n < max; t = strtok(NULL, " "))
        tokens[n++] = t;
    return n;
}

static double worst_text_frequency_error;

/* The table rows of molecule k (header "Molecule k+1 of 2: ...") against the report. */
static void check_text_molecule(const char *text, int k)
{
    const hessfit_report_molecule *m = &molecules[k];
    char heading[64];
    const char *p;
    snprintf(heading, sizeof heading, "\nMolecule %d of 2: ", k + 1);
    p = strstr(text, heading);
    CHECK(p != NULL, "text report has no '%s'", heading + 1);
    p = strstr(p, "  mode  QM mode");
    CHECK(p != NULL, "molecule %d: no table header", k + 1);
    p = strchr(p, '\n') + 1;
    for (int i = 0; i < m->n_modes; i++) {
        const hessfit_report_mode *md = &m->modes[i];
        const char *eol = strchr(p, '\n');
        char line[512], *tok[16];
        int n, imaginary;
        double values[3] = {md->qm_cm1, md->mm_before_cm1, md->mm_after_cm1};
        CHECK(eol != NULL && (size_t)(eol - p) < sizeof line, "molecule %d row %d: no line", k + 1, i);
        memcpy(line, p, (size_t)(eol - p));
        line[eol - p] = '\0';
        n = split(line, tok, 16);
        CHECK(n == 10, "molecule %d row %d: %d columns, expected 10: %.*s", k + 1, i, n, (int)(eol - p), p);
        CHECK(strtol(tok[0], NULL, 10) == md->index, "molecule %d row %d: mode %s", k + 1, i, tok[0]);
        CHECK(strtol(tok[1], NULL, 10) == md->qm_mode, "molecule %d row %d: QM mode %s", k + 1, i, tok[1]);
        for (int c = 0; c < 3; c++) {
            double v = parse_frequency(tok[2 + c], &imaginary);
            if (isnan(values[c])) {
                CHECK(isnan(v), "molecule %d row %d column %d: NaN printed as %s", k + 1, i, c, tok[2 + c]);
                continue;
            }
            CHECK(imaginary == (values[c] < 0), "molecule %d row %d: '%s' imaginary mark wrong", k + 1, i, tok[2 + c]);
            CHECK(fabs(v - values[c]) <= 0.005 + 1e-9, "molecule %d row %d column %d: %s vs %.6f", k + 1, i, c,
                  tok[2 + c], values[c]);
            if (fabs(v - values[c]) > worst_text_frequency_error)
                worst_text_frequency_error = fabs(v - values[c]);
        }
        if (isfinite(md->mm_after_cm1))
            CHECK(fabs(strtod(tok[6], NULL) - (md->mm_after_cm1 - md->qm_cm1)) <= 0.005 + 1e-9,
                  "molecule %d row %d: diff after %s", k + 1, i, tok[6]);
        CHECK(strtod(tok[7], NULL) == md->weight, "molecule %d row %d: weight %s", k + 1, i, tok[7]);
        if (isnan(md->overlap_after))
            CHECK(strcmp(tok[8], "n/a") == 0, "molecule %d row %d: unknown overlap as %s", k + 1, i, tok[8]);
        else
            CHECK(fabs(strtod(tok[8], NULL) - md->overlap_after) <= 5e-5, "molecule %d row %d: overlap %s", k + 1, i,
                  tok[8]);
        if (isinf(md->residual_after))
            CHECK(strcmp(tok[9], "inf") == 0, "molecule %d row %d: infinite residual as %s", k + 1, i, tok[9]);
        else
            CHECK(fabs(strtod(tok[9], NULL) - md->residual_after) <= 5e-5 * md->residual_after + 1e-300,
                  "molecule %d row %d: residual %s vs %.6e", k + 1, i, tok[9], md->residual_after);
        p = eol + 1;
    }
    CHECK(strncmp(p, "  RMSD over the weighted modes: ", 32) == 0, "molecule %d: no RMSD line after the rows", k + 1);
}

static void test_text(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_temp_path("report.txt"));
    char *text;
    const char *p;
    double worst_parameter = 0;
    HF_CALL(hessfit_report_write_text(path, &report));
    text = test_load_file(path, NULL);
    check_text_molecule(text, 0);
    check_text_molecule(text, 1);
    CHECK(strstr(text, "  RMSD over the weighted modes: 156.860 cm^-1 before (9 modes), 0.025 cm^-1 after (9 modes)") !=
              NULL,
          "CH3F RMSD line missing");
    /* SN2: reaction coordinate (weight 0) and the unpaired mode 3 are out of the "before" RMSD */
    CHECK(strstr(text, "cm^-1 before (10 modes), ") != NULL, "SN2 RMSD line: expected 10 modes before");
    CHECK(strstr(text, "    after   force 108.300 kcal/mol/A (atom 2); bond 1-2 by 0.1199 A; angle 3-1-4 by 20.65 deg\n") !=
              NULL,
          "CH3F stationarity line missing");
    CHECK(count_substrings(text, "  stationarity: ") == 1, "stationarity written for a molecule without it");
    CHECK(strstr(text, "i: imaginary frequency, shown as a negative number") != NULL, "no note on imaginary modes");
    CHECK(strstr(text, "-461.72i") != NULL && strstr(text, "-380.25i") != NULL, "imaginary frequencies not shown");
    CHECK(count_substrings(text, "i: imaginary frequency") == 1, "the imaginary note belongs to the SN2 molecule only");
    CHECK(strstr(text, "  optimiser    LD_LBFGS\n") != NULL && strstr(text, "  evaluations  151\n") != NULL &&
              strstr(text, "  wall time    6.402 s\n") != NULL,
          "run summary missing");
    CHECK(strstr(text, "Molecule 2 of 2: F\xE2\x81\xBB + CH\xE2\x82\x83" "Cl \"TS\" <SN2> & ") != NULL,
          "molecule name not written verbatim in UTF-8");
    CHECK(strstr(text, "source: C:\\data\\sn2 TS hessian.npy ? end\n") != NULL,
          "control characters in the source not replaced by spaces / the invalid byte by '?'");
    /* parameters: before, after and change read back */
    p = strstr(text, "\nParameters (8 free;");
    CHECK(p != NULL, "no parameter section");
    p = strchr(strchr(p + 1, '\n') + 1, '\n') + 1; /* past the heading and the column titles */
    for (int q = 0; q < 8; q++) {
        char line[512], *tok[12];
        const char *eol = strchr(p, '\n');
        int n;
        CHECK(eol != NULL, "parameter row %d missing", q);
        memcpy(line, p, (size_t)(eol - p));
        line[eol - p] = '\0';
        n = split(line, tok, 12);
        CHECK(n == 8, "parameter row %d: %d columns", q, n);
        CHECK(strtol(tok[0], NULL, 10) == parameters[q].ff_line && strcmp(tok[1], parameters[q].kind) == 0 &&
                  strcmp(tok[2], parameters[q].types) == 0 && strcmp(tok[3], parameters[q].value_name) == 0 &&
                  strcmp(tok[7], parameters[q].unit) == 0,
              "parameter row %d: %s %s %s %s ... %s", q, tok[0], tok[1], tok[2], tok[3], tok[7]);
        /* six decimals: within 5e-7 */
        CHECK_CLOSE(strtod(tok[4], NULL), parameters[q].before, 5.0000001e-7, 1.0, "parameter before");
        CHECK_CLOSE(strtod(tok[5], NULL), parameters[q].after, 5.0000001e-7, 1.0, "parameter after");
        CHECK_CLOSE(strtod(tok[6], NULL), parameters[q].after - parameters[q].before, 5.0000001e-7, 1.0,
                    "parameter change");
        CHECK(tok[6][0] == (parameters[q].after > parameters[q].before ? '+' : '-'), "change sign: %s", tok[6]);
        worst_parameter = fmax(worst_parameter, fabs(strtod(tok[5], NULL) - parameters[q].after));
        worst_parameter = fmax(worst_parameter, fabs(strtod(tok[4], NULL) - parameters[q].before));
        p = eol + 1;
    }
    CHECK(strstr(text, "  best loss   5.5635718e-09    at evaluation 40\n") != NULL, "convergence summary: best loss");
    CHECK(!contains_nocase(text, "nan"), "the text report contains 'nan'");
    CHECK(strstr(text, " -0.00 ") == NULL && strstr(text, "        0.00 ") != NULL, "a rounded zero keeps a sign");
    printf("text: %zu bytes, 21 mode rows and 8 parameter rows parsed back; worst frequency %.4f cm^-1 (printed to "
           "0.01), worst parameter %.2e (printed to 1e-6)\n",
           strlen(text), worst_text_frequency_error, worst_parameter);
    free(text);
}

/* ---- JSON ------------------------------------------------------------------------------------------- */

/* Outside strings, only JSON's literals and numbers: no NaN, Infinity, nan, inf. */
static void check_json_tokens(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\')
                    p++;
            CHECK(*p == '"', "unterminated JSON string");
            continue;
        }
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
            size_t n = 0;
            while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z'))
                n++;
            CHECK((n == 4 && (strncmp(p, "true", 4) == 0 || strncmp(p, "null", 4) == 0)) ||
                      (n == 5 && strncmp(p, "false", 5) == 0) || (n == 1 && (*p == 'e' || *p == 'E')),
                  "bare word '%.*s' in the JSON", (int)n, p);
            p += n - 1;
        }
    }
}

static void test_json(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_temp_path("report.json"));
    char *text;
    int n_numbers = 0;
    HF_CALL(hessfit_report_write_json(path, &report));
    text = test_load_file(path, NULL);
    check_json_tokens(text);
    /* C-side round trip: every "qm_cm1" in file order, strtod, bit-identical */
    {
        const char *p = text;
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < molecules[k].n_modes; i++) {
                p = strstr(p, "\"qm_cm1\": ");
                CHECK(p != NULL, "qm_cm1 of molecule %d mode %d missing", k, i);
                p += strlen("\"qm_cm1\": ");
                CHECK(strtod(p, NULL) == molecules[k].modes[i].qm_cm1, "qm_cm1 %d/%d: %.30s", k, i, p);
                n_numbers++;
            }
    }
    CHECK(strstr(text, "\"F\xE2\x81\xBB + CH\xE2\x82\x83" "Cl \\\"TS\\\" <SN2> & \xCE\xB1\xCE\xB2 \xE2\x80\x94 'q'\"") !=
              NULL,
          "molecule name not escaped as expected in the JSON");
    CHECK(strstr(text, "\"C:\\\\data\\\\sn2\\tTS\\nhessian.npy \\ufffd end\"") != NULL,
          "source not escaped as expected in the JSON");
    {
        /* CH3F's stationarity, every number read back exactly, in the order written */
        const char *p = strstr(text, "\"stationarity\": {\"before\": {");
        static const char *const keys[4] = {"max_force_kcal_mol_A", "max_force_atom", "bond_shift_A", "angle_shift_deg"};
        CHECK(p != NULL, "CH3F stationarity not in the JSON");
        for (int after = 0; after <= 1; after++) {
            const hessfit_report_stationarity *want = &ch3f_stationarity[after];
            const double values[4] = {want->max_force, want->max_force_atom, want->bond_shift, want->angle_shift};
            for (int k = 0; k < 4; k++) {
                char key[64];
                snprintf(key, sizeof key, "\"%s\": ", keys[k]);
                p = strstr(p, key);
                CHECK(p != NULL, "stationarity %s missing", keys[k]);
                p += strlen(key);
                CHECK(strtod(p, NULL) == values[k], "stationarity %d %s: %.30s", after, keys[k], p);
            }
        }
        CHECK(strstr(text, "\"bond_atoms\": [1, 2], \"angle_shift_deg\"") != NULL &&
                  strstr(text, "\"angle_atoms\": [3, 1, 4]}}") != NULL,
              "stationarity atoms");
    }
    CHECK(count_substrings(text, "\"stationarity\"") == 1, "stationarity written for a molecule without it");
    if (!have_python) {
        printf("json: python3 not found: python parse and full round trip skipped (C-side: %d numbers exact)\n",
               n_numbers);
        free(text);
        return;
    }
    {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "python3 -m json.tool '%s' > /dev/null", path);
        CHECK(system(cmd) == 0, "python3 -m json.tool rejects %s", path);
    }
    {
        kv r = run_python("json", path);
        int n_null = 0, n_absent = 0;
        check_hex_string(kv_get(&r, "title"), report.title, "title");
        CHECK(kv_long(&r, "evaluations") == 151, "evaluations");
        check_number(kv_get(&r, "wall_time_s"), report.wall_time_s, "wall time");
        CHECK(kv_long(&r, "n_molecules") == 2, "molecule count");
        check_hex_string(kv_get(&r, "mol0.name"), "CH3F", "molecule 1 name");
        check_hex_string(kv_get(&r, "mol1.name"), sn2_name, "molecule 2 name");
        check_hex_string(kv_get(&r, "mol1.source"), sn2_source_decoded, "molecule 2 source");
        check_number(kv_get(&r, "mol0.rmsd_before_cm1"), Q2MM_SEMINARIO_RMSD, "CH3F RMSD before");
        for (int k = 0; k < 2; k++) {
            CHECK(kv_long(&r, k == 0 ? "mol0.n_modes" : "mol1.n_modes") == molecules[k].n_modes, "mode count");
            for (int i = 0; i < molecules[k].n_modes; i++) {
                const hessfit_report_mode *md = &molecules[k].modes[i];
                const double values[6] = {md->qm_cm1,  md->mm_before_cm1,   md->mm_after_cm1,
                                          md->weight, md->residual_before, md->residual_after};
                static const char *keys[6] = {"qm_cm1", "mm_before_cm1", "mm_after_cm1",
                                              "weight", "residual_before", "residual_after"};
                const double overlaps[2] = {md->overlap_before, md->overlap_after};
                char key[64];
                for (int c = 0; c < 6; c++) {
                    snprintf(key, sizeof key, "mol%d.mode%d.%s", k, i, keys[c]);
                    check_number(kv_get(&r, key), values[c], key);
                    n_null += !isfinite(values[c]);
                    n_numbers++;
                }
                for (int c = 0; c < 2; c++) {
                    const char *got = kv_getf(&r, c == 0 ? "mol%d.mode%d.overlap_before" : "mol%d.mode%d.overlap_after",
                                              k, i);
                    if (isnan(overlaps[c])) {
                        CHECK(strcmp(got, "absent") == 0, "unknown overlap %d/%d written as %s", k, i, got);
                        n_absent++;
                    } else {
                        check_number(got, overlaps[c], "overlap");
                        n_numbers++;
                    }
                }
                CHECK((strcmp(kv_getf(&r, "mol%d.mode%d.mm_mode_before", k, i), "null") != 0) == (md->mm_mode_before >= 0),
                      "mm_mode_before %d/%d: %s", k, i, kv_getf(&r, "mol%d.mode%d.mm_mode_before", k, i));
            }
        }
        for (int q = 0; q < 8; q++) {
            check_number(kv_getf(&r, "param%d.before", q, 0), parameters[q].before, "parameter before");
            check_number(kv_getf(&r, "param%d.after", q, 0), parameters[q].after, "parameter after");
            CHECK(strtol(kv_getf(&r, "param%d.ff_line", q, 0), NULL, 10) == parameters[q].ff_line, "ff_line");
            n_numbers += 2;
        }
        for (int o = 0; o < 2; o++) {
            check_number(kv_getf(&r, "objective%d.loss_before", o, 0), objectives[o].loss_before, "loss before");
            check_number(kv_getf(&r, "objective%d.loss_after", o, 0), objectives[o].loss_after, "loss after");
            check_number(kv_getf(&r, "objective%d.rmsd_before", o, 0), objectives[o].rmsd_before, "rmsd before");
            check_number(kv_getf(&r, "objective%d.rmsd_after", o, 0), objectives[o].rmsd_after, "rmsd after");
            n_null += !isfinite(objectives[o].loss_after) + !isfinite(objectives[o].rmsd_before) +
                      !isfinite(objectives[o].rmsd_after);
            n_numbers += 4;
        }
        CHECK(kv_long(&r, "n_history") == N_HISTORY, "history length");
        for (int i = 0; i < N_HISTORY; i++) {
            const char *g = kv_getf(&r, "history%d.gradient_norm", i, 0);
            check_number(kv_getf(&r, "history%d.loss", i, 0), history[i].loss, "history loss");
            n_null += !isfinite(history[i].loss);
            if (isnan(history[i].gradient_norm))
                CHECK(strcmp(g, "absent") == 0, "history %d: NaN gradient norm written as %s", i, g);
            else
                check_number(g, history[i].gradient_norm, "history gradient norm");
            n_numbers += 2;
        }
        /* every null is listed by its path, with what it was */
        CHECK(kv_long(&r, "n_nonfinite") == n_null, "nonfinite lists %ld entries, %d nulls written",
              kv_long(&r, "n_nonfinite"), n_null);
        CHECK(strcmp(kv_get(&r, "nonfinite.molecules[1].modes[3].mm_before_cm1"), "NaN") == 0, "NaN note");
        CHECK(strcmp(kv_get(&r, "nonfinite.molecules[1].modes[5].residual_after"), "Infinity") == 0, "inf note");
        CHECK(strcmp(kv_get(&r, "nonfinite.objectives[1].rmsd_after"), "-Infinity") == 0, "-inf note");
        CHECK(strcmp(kv_get(&r, "nonfinite.history[12].loss"), "NaN") == 0, "history NaN note");
        printf("json: %zu bytes, valid for python3 json (no NaN/Infinity constants); %d numbers bit-identical "
               "after the round trip, %d nulls each listed in nonfinite, %d unknown overlaps left out\n",
               strlen(text), n_numbers, n_null, n_absent);
        kv_free(&r);
    }
    free(text);
}

/* ---- SVG -------------------------------------------------------------------------------------------- */

static void test_scatter(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_temp_path("frequencies.svg"));
    char *text;
    int n_before = 0, n_after = 0;
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < molecules[k].n_modes; i++) {
            n_before += isfinite(molecules[k].modes[i].mm_before_cm1);
            n_after += isfinite(molecules[k].modes[i].mm_after_cm1);
        }
    CHECK(n_before == 20 && n_after == 21, "test data: %d / %d marks", n_before, n_after);
    HF_CALL(hessfit_svg_frequency_scatter(path, &report));
    text = test_load_file(path, NULL);
    CHECK(count_substrings(text, "<circle class=\"before\"") == n_before, "before marks");
    CHECK(count_substrings(text, "<path class=\"after\"") == n_after, "after marks");
    CHECK(!contains_nocase(text, "nan") && !contains_nocase(text, "inf"), "the SVG contains nan or inf");
    CHECK(strstr(text, "<script") == NULL, "a script in the SVG");
    CHECK(strstr(text, "F\xE2\x81\xBB + CH\xE2\x82\x83" "Cl &quot;TS&quot; &lt;SN2&gt; &amp; \xCE\xB1\xCE\xB2 \xE2\x80\x94 "
                       "&apos;q&apos; mode 0 (QM mode 6): QM -461.72i") != NULL,
          "the SN2 name is not escaped as expected in the mark titles");
    if (!have_python) {
        printf("scatter: python3 not found: XML parse skipped (C-side counts: %d before, %d after marks)\n", n_before,
               n_after);
        free(text);
        return;
    }
    {
        kv r = run_python("svg", path);
        double worst = 0;
        int mark = 0;
        char label[256];
        CHECK(kv_long(&r, "root_is_svg") == 1, "root element is not <svg version=\"1.1\">");
        CHECK(kv_long(&r, "scripts") == 0, "scripts or event handlers in the SVG");
        CHECK(kv_long(&r, "circle.before") == n_before && kv_long(&r, "path.after") == n_after,
              "marks by class: %ld before, %ld after", kv_long(&r, "circle.before"), kv_long(&r, "path.after"));
        CHECK(kv_long(&r, "circle.legend-before") == 1 && kv_long(&r, "path.legend-after") == 1, "legend marks");
        CHECK(kv_long(&r, "circles") == n_before + 1 && kv_long(&r, "paths") == n_after + 1,
              "%ld circles, %ld paths: only marks and legend", kv_long(&r, "circles"), kv_long(&r, "paths"));
        CHECK(kv_long(&r, "line.identity") == 1, "the y = x line");
        CHECK(kv_long(&r, "n_axis_labels") == 2, "axis labels");
        check_hex_string(kv_get(&r, "axis_label0"), "QM frequency (cm\xE2\x81\xBB\xC2\xB9)", "x axis label");
        check_hex_string(kv_get(&r, "axis_label1"), "MM frequency (cm\xE2\x81\xBB\xC2\xB9)", "y axis label");
        snprintf(label, sizeof label, "MM vs QM vibrational frequencies: %s", report.title);
        check_hex_string(kv_get(&r, "plot_title"), label, "plot title");
        /* the marks in document order: before (molecule, mode), then after; titles and positions */
        for (int after = 0; after < 2; after++)
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < molecules[k].n_modes; i++) {
                    const hessfit_report_mode *md = &molecules[k].modes[i];
                    double mm = after ? md->mm_after_cm1 : md->mm_before_cm1, x, y;
                    char expected[512];
                    if (!isfinite(mm))
                        continue;
                    CHECK(strcmp(kv_getf(&r, "mark%d.class", mark, 0), after ? "after" : "before") == 0, "mark order");
                    snprintf(expected, sizeof expected, "%s mode %d (QM mode %d): QM %.2f%s cm\xE2\x81\xBB\xC2\xB9, MM "
                             "%.2f%s cm\xE2\x81\xBB\xC2\xB9 %s the fit",
                             molecules[k].name, md->index, md->qm_mode, md->qm_cm1, md->qm_cm1 < 0 ? "i" : "", mm,
                             mm < 0 ? "i" : "", after ? "after" : "before");
                    check_hex_string(kv_getf(&r, "mark%d.title", mark, 0), expected, "mark title");
                    CHECK(sscanf(kv_getf(&r, "mark%d.xy", mark, 0), "%lf %lf", &x, &y) == 2, "mark position");
                    worst = fmax(worst, fmax(fabs(x - md->qm_cm1), fabs(y - mm)));
                    mark++;
                }
        /* 0.01 px resolution on a 480 px axis over about 4000 cm^-1 */
        CHECK(worst < 0.1, "marks mapped back through the tick labels are %.4f cm^-1 off", worst);
        {
            double x1, y1, x2, y2;
            CHECK(sscanf(kv_get(&r, "identity"), "%lf %lf %lf %lf", &x1, &y1, &x2, &y2) == 4, "identity line");
            CHECK(fabs(x1 - y1) < 1e-6 && fabs(x2 - y2) < 1e-6 && x1 <= -461.8 && x2 >= 3372.0,
                  "the y = x line runs from (%g, %g) to (%g, %g)", x1, y1, x2, y2);
        }
        printf("scatter: %zu bytes, XML well-formed; %d before circles + %d after diamonds (+1 legend each), "
               "positions mapped back through the tick labels to the frequencies within %.4f cm^-1\n",
               strlen(text), n_before, n_after, worst);
        kv_free(&r);
    }
    free(text);
}

static void test_convergence(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_temp_path("convergence.svg"));
    char *text;
    HF_CALL(hessfit_svg_convergence(path, &report.history));
    text = test_load_file(path, NULL);
    CHECK(!contains_nocase(text, "nan") && !contains_nocase(text, "inf"), "the SVG contains nan or inf");
    CHECK(strstr(text, "L-BFGS &amp; &quot;friends&quot;") != NULL, "history title not escaped");
    CHECK(count_substrings(text, "<path class=\"loss\"") == 1 && count_substrings(text, "<path class=\"best\"") == 1 &&
              count_substrings(text, "<path class=\"gradient-norm\"") == 1,
          "one path per series");
    /* 5.6e-9 .. 0.22: nine decades, a label every second one, the ends rounded out to whole labels */
    CHECK(strstr(text, ">1e-10<") != NULL && strstr(text, ">1e-2<") != NULL && strstr(text, ">1<") != NULL &&
              strstr(text, ">1e-9<") == NULL,
          "log decades 1e-10, 1e-8, .. 1 not labelled");
    if (have_python) {
        kv r = run_python("svg", path);
        double worst_loss = 0, worst_x = 0;
        CHECK(kv_long(&r, "root_is_svg") == 1 && kv_long(&r, "scripts") == 0, "svg root / scripts");
        CHECK(kv_long(&r, "n_panels") == 2, "two panels (loss, gradient norm)");
        check_hex_string(kv_get(&r, "axis_label1"), "loss (log scale)", "loss axis label");
        check_hex_string(kv_get(&r, "axis_label0"), "evaluation", "evaluation axis label");
        check_hex_string(kv_get(&r, "axis_label3"), "gradient norm (log scale)", "gradient axis label");
        check_hex_string(kv_get(&r, "title"), "L-BFGS & \"friends\"", "document title");
        /* 39 finite losses, a gap at evaluation 13: two sub-paths; a dot per point (<= 50 points) */
        CHECK(kv_long(&r, "series.loss.n") == N_HISTORY - 1 && kv_long(&r, "series.loss.moves") == 2,
              "loss path: %ld vertices, %ld moves", kv_long(&r, "series.loss.n"), kv_long(&r, "series.loss.moves"));
        CHECK(kv_long(&r, "series.best.n") == N_HISTORY && kv_long(&r, "series.best.moves") == 1, "best path");
        CHECK(kv_long(&r, "series.gradient-norm.n") == N_HISTORY - 1 &&
                  kv_long(&r, "series.gradient-norm.moves") == 2,
              "gradient path");
        CHECK(kv_long(&r, "points.loss-points") == N_HISTORY - 1 && kv_long(&r, "points.best-points") == N_HISTORY &&
                  kv_long(&r, "points.gradient-norm-points") == N_HISTORY - 1,
              "points per series");
        for (int i = 0, v = 0; i < N_HISTORY; i++) {
            double x, y;
            if (!isfinite(history[i].loss))
                continue;
            CHECK(sscanf(kv_getf(&r, "series.loss.%d", v++, 0), "%lf %lf", &x, &y) == 2, "loss vertex");
            worst_x = fmax(worst_x, fabs(x - (double)history[i].evaluation));
            worst_loss = fmax(worst_loss, fabs(y / history[i].loss - 1.0));
        }
        /* 0.01 px on 240 px spanning 9 decades: 3.75e-4 decades, 8.7e-4 relative */
        CHECK(worst_x < 0.01 && worst_loss < 2e-3, "loss vertices mapped back: evaluation %.4f off, loss %.2e "
                                                    "relative", worst_x, worst_loss);
        printf("convergence: %zu bytes, XML well-formed, log loss axis, 2 panels; %d loss vertices mapped back to "
               "the losses within %.2e relative (evaluation within %.4f)\n",
               strlen(text), N_HISTORY - 1, worst_loss, worst_x);
        kv_free(&r);
    } else {
        printf("convergence: python3 not found: XML parse skipped\n");
    }
    free(text);

    /* less than two decades and no gradient: linear axis, one panel; a long run: no dots */
    {
        hessfit_report_iteration long_run[200];
        hessfit_report_history h = {NULL, 200, long_run};
        for (int i = 0; i < 200; i++)
            long_run[i] = (hessfit_report_iteration){i + 1, 5.0 + 4.0 / (1.0 + i), NAN};
        snprintf(path, sizeof path, "%s", test_temp_path("convergence-linear.svg"));
        HF_CALL(hessfit_svg_convergence(path, &h));
        text = test_load_file(path, NULL);
        CHECK(strstr(text, "(log scale)") == NULL, "a linear range drawn on a log axis");
        CHECK(strstr(text, "gradient-norm") == NULL && strstr(text, "-points") == NULL,
              "no gradient panel and no dots expected");
        CHECK(strstr(text, "<title>Convergence</title>") != NULL, "default title");
        if (have_python) {
            kv r = run_python("svg", path);
            CHECK(kv_long(&r, "n_panels") == 1 && kv_long(&r, "series.loss.n") == 200, "one panel, 200 vertices");
            check_hex_string(kv_get(&r, "axis_label1"), "loss", "linear loss axis label");
            kv_free(&r);
        }
        free(text);
        /* empty history: still a valid document */
        h.n_points = 0;
        snprintf(path, sizeof path, "%s", test_temp_path("convergence-empty.svg"));
        HF_CALL(hessfit_svg_convergence(path, &h));
        text = test_load_file(path, NULL);
        CHECK(strstr(text, "no finite loss to plot") != NULL && strstr(text, "</svg>") != NULL, "empty history");
        if (have_python) {
            kv r = run_python("svg", path);
            CHECK(kv_long(&r, "paths") == 0, "no series in an empty history");
            kv_free(&r);
        }
        free(text);
    }
}

/* ---- failures --------------------------------------------------------------------------------------- */

typedef struct failing_context {
    const hessfit_report *report;
    size_t bytes_before_failure;
} failing_context;

/* The test hook: writes the whole text report, then fails like a writer that hit a problem late. */
static hessfit_status failing_writer(hessfit_atomic_file *out, void *context)
{
    failing_context *c = context;
    hessfit_status st = hessfit_report_text_writer(out, (void *)c->report);
    if (st != HESSFIT_SUCCESS)
        return st;
    c->bytes_before_failure = hessfit_atomic_file_size(out);
    return hessfit_error(HESSFIT_ERROR_INVALID_ARGUMENT, "simulated failure after %zu bytes", c->bytes_before_failure);
}

static void test_failures(void)
{
    const char *old_text = "old content: must survive every failed write\n";
    char target[512];
    snprintf(target, sizeof target, "%s", test_temp_path("existing.txt"));
    char *text;
    char missing_dir[600], file_as_dir[600];
    struct stat sb;

    /* unwritable places: error names the path, nothing left behind */
    snprintf(missing_dir, sizeof missing_dir, "%s/no/such/dir/report.json", test_temp_dir());
    test_expect_error(hessfit_report_write_json(missing_dir, &report), HESSFIT_ERROR_IO, missing_dir, NULL, "missing directory");
    test_write_text("plain-file", "x");
    snprintf(file_as_dir, sizeof file_as_dir, "%s/plain-file/report.svg", test_temp_dir());
    test_expect_error(hessfit_svg_frequency_scatter(file_as_dir, &report), HESSFIT_ERROR_IO, file_as_dir, NULL,
                      "parent is a file");
    /* the temporary file is created and written, the rename onto a directory fails: removed again */
    CHECK(mkdir(test_temp_path("a-directory"), 0755) == 0, "mkdir");
    test_expect_error(hessfit_report_write_text(test_temp_path("a-directory"), &report), HESSFIT_ERROR_IO,
                      test_temp_path("a-directory"), NULL, "target is a directory");
    CHECK(strstr(hessfit_last_error(), ".tmp.") != NULL, "the message names the temporary file: %s", hessfit_last_error());
    CHECK(count_temp_files(test_temp_dir()) == 0, "temporary files left behind");

    /* an invalid report: nothing created */
    {
        hessfit_report bad = report;
        hessfit_report_molecule bad_molecules[2] = {molecules[0], molecules[1]};
        bad_molecules[0].modes = NULL;
        bad.molecules = bad_molecules;
        test_expect_error(hessfit_report_write_json(test_temp_path("never.json"), &bad), HESSFIT_ERROR_NULL_ARGUMENT,
                          "report molecule 1 (CH3F): modes is NULL for 9 modes", NULL, "invalid report");
        CHECK(strstr(hessfit_last_error(), test_temp_path("never.json")) != NULL, "message names the path");
        CHECK(access(test_temp_path("never.json"), F_OK) != 0, "a file was created for an invalid report");
    }

    /* an existing file is replaced only on success: a writer that fails after writing everything */
    test_write_text("existing.txt", old_text);
    CHECK(chmod(target, 0640) == 0, "chmod");
    {
        failing_context c = {&report, 0};
        test_expect_error(hessfit_atomic_write(target, failing_writer, &c), HESSFIT_ERROR_INVALID_ARGUMENT, target, NULL,
                          "writer failing after a full write");
        CHECK(strstr(hessfit_last_error(), "simulated failure") != NULL, "the writer's message is kept");
        CHECK(c.bytes_before_failure > 4000, "the writer wrote %zu bytes before failing", c.bytes_before_failure);
        text = test_load_file(target, NULL);
        CHECK(strcmp(text, old_text) == 0, "the old file changed after a failed write");
        free(text);
        CHECK(count_temp_files(test_temp_dir()) == 0, "temporary file left after a failed writer");
        printf("  old file intact after a writer failed at byte %zu\n", c.bytes_before_failure);
    }
    /* a real I/O error mid-write: a file size limit of 1000 bytes (write(2) fails with EFBIG) */
    {
        struct rlimit saved, limited;
        void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
        CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0, "getrlimit");
        limited = saved;
        limited.rlim_cur = 1000;
        CHECK(setrlimit(RLIMIT_FSIZE, &limited) == 0, "setrlimit");
        hessfit_status st = hessfit_report_write_text(target, &report);
        CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0, "restoring RLIMIT_FSIZE"); /* before printing anything */
        signal(SIGXFSZ, saved_handler);
        test_expect_error(st, HESSFIT_ERROR_IO, target, NULL, "file size limit");
        CHECK(strstr(hessfit_last_error(), "after 1000 bytes") != NULL && strstr(hessfit_last_error(), strerror(EFBIG)) != NULL,
              "message gives the offset and the reason: %s", hessfit_last_error());
        text = test_load_file(target, NULL);
        CHECK(strcmp(text, old_text) == 0, "the old file changed after a failed write");
        free(text);
        CHECK(count_temp_files(test_temp_dir()) == 0, "temporary file left after an I/O error");
    }
    /* success replaces it and keeps its permission bits */
    HF_CALL(hessfit_report_write_text(target, &report));
    text = test_load_file(target, NULL);
    CHECK(strncmp(text, "hessfit fit report", 18) == 0, "the file was not replaced");
    free(text);
    CHECK(stat(target, &sb) == 0 && (sb.st_mode & 07777) == 0640, "mode %o, expected 640",
          (unsigned)(sb.st_mode & 07777));
    CHECK(count_temp_files(test_temp_dir()) == 0, "temporary files left behind");
}

/* An empty report (no molecule, objective, parameter or history) still gives valid documents; a
 * report with a bad mode index is refused, naming the molecule and row. */
static void test_empty_report(void)
{
    hessfit_report empty;
    char text_path[512], json_path[512], svg_path[512];
    char *text;
    memset(&empty, 0, sizeof empty);
    snprintf(text_path, sizeof text_path, "%s", test_temp_path("empty-report.txt"));
    snprintf(json_path, sizeof json_path, "%s", test_temp_path("empty-report.json"));
    snprintf(svg_path, sizeof svg_path, "%s", test_temp_path("empty-report.svg"));
    HF_CALL(hessfit_report_write_text(text_path, &empty));
    HF_CALL(hessfit_report_write_json(json_path, &empty));
    HF_CALL(hessfit_svg_frequency_scatter(svg_path, &empty));
    text = test_load_file(text_path, NULL);
    CHECK(strstr(text, "  optimiser    n/a\n") != NULL && strstr(text, "Molecule") == NULL, "empty text report");
    free(text);
    text = test_load_file(json_path, NULL);
    check_json_tokens(text);
    CHECK(strstr(text, "\"molecules\": [],") != NULL && strstr(text, "\"title\": null") != NULL, "empty JSON");
    free(text);
    text = test_load_file(svg_path, NULL);
    CHECK(strstr(text, "no mode with a finite QM and MM frequency") != NULL && !contains_nocase(text, "nan") &&
              !contains_nocase(text, "inf"),
          "empty scatter");
    free(text);
    if (have_python) {
        char cmd[1024];
        kv r;
        snprintf(cmd, sizeof cmd, "python3 -m json.tool '%s' > /dev/null", json_path);
        CHECK(system(cmd) == 0, "python3 -m json.tool rejects the empty report");
        r = run_python("svg", svg_path);
        CHECK(kv_long(&r, "circle.before") == 0 && kv_long(&r, "path.after") == 0 && kv_long(&r, "line.identity") == 1,
              "empty scatter marks");
        kv_free(&r);
    }
    {
        hessfit_report bad = report;
        hessfit_report_mode modes[12];
        hessfit_report_molecule bad_molecules[2] = {molecules[0], molecules[1]};
        memcpy(modes, sn2_modes, sizeof modes);
        modes[4].mm_mode_after = -2;
        bad_molecules[1].modes = modes;
        bad.molecules = bad_molecules;
        test_expect_error(hessfit_svg_frequency_scatter(svg_path, &bad), HESSFIT_ERROR_INVALID_ARGUMENT,
                          "report molecule 2 (F\xE2\x81\xBB + CH", NULL, "bad mode index");
        CHECK(strstr(hessfit_last_error(), "mode row 4: index 4, QM mode 10, MM modes 10 / -2") != NULL, "row named");
        bad.molecules = molecules;
        bad.history.n_points = -1;
        test_expect_error(hessfit_report_write_json(json_path, &bad), HESSFIT_ERROR_INVALID_ARGUMENT, "report history: -1 points",
                          NULL, "bad history");
    }
    /* extreme values: finite axes, no nan or inf in the coordinates */
    {
        hessfit_report_iteration extreme[4] = {{1, -1.7e308, 1e-300}, {2, 1.7e308, 1e300}, {3, 0.0, INFINITY}, {4, -INFINITY, 0}};
        hessfit_report_history h = {"extreme", 4, extreme};
        size_t n;
        HF_CALL(hessfit_svg_convergence(svg_path, &h));
        text = test_load_file(svg_path, &n);
        CHECK(!contains_nocase(text, "nan") && !contains_nocase(text, "inf") && n < 20000, "extreme history: %zu bytes",
              n);
        free(text);
        if (have_python) {
            kv r = run_python("svg", svg_path);
            CHECK(kv_long(&r, "series.loss.n") == 3 && kv_long(&r, "series.gradient-norm.n") == 3,
                  "extreme history vertices: %ld loss, %ld gradient", kv_long(&r, "series.loss.n"),
                  kv_long(&r, "series.gradient-norm.n"));
            kv_free(&r);
        }
    }
    printf("empty report: text, JSON and scatter written and valid; extreme convergence values plotted finitely\n");
}

/* ---- the atomic writer on its own ----------------------------------------------------------------- */

static void test_atomic_file(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s", test_temp_path("big.txt"));
    hessfit_atomic_file *f = NULL;
    char *big = malloc(200001), *text;
    size_t n;
    for (int i = 0; i < 200000; i++)
        big[i] = (char)('a' + i % 26);
    big[200000] = '\0';
    /* formatted output larger than the 64 KiB buffer, then small pieces across buffer boundaries */
    HF_CALL(hessfit_atomic_file_open(path, &f));
    CHECK(strstr(hessfit_atomic_file_temp_path(f), ".tmp.") != NULL && access(hessfit_atomic_file_temp_path(f), F_OK) == 0,
          "temporary file %s", hessfit_atomic_file_temp_path(f));
    CHECK(access(path, F_OK) != 0, "the target exists before commit");
    HF_CALL(hessfit_atomic_file_printf(f, "<%s>", big));
    for (int i = 0; i < 30000; i++)
        HF_CALL(hessfit_atomic_file_printf(f, "%05d\n", i));
    HF_CALL(hessfit_atomic_file_write(f, big, 100000));
    n = hessfit_atomic_file_size(f);
    HF_CALL(hessfit_atomic_file_commit(f));
    text = test_load_file(path, &n);
    CHECK(n == 200002 + 30000 * 6 + 100000, "size %zu", n);
    CHECK(text[0] == '<' && memcmp(text + 1, big, 200000) == 0 && text[200001] == '>', "big formatted block");
    CHECK(memcmp(text + 200002, "00000\n00001\n", 12) == 0 && memcmp(text + 200002 + 29999 * 6, "29999\n", 6) == 0,
          "numbered lines");
    CHECK(memcmp(text + 200002 + 180000, big, 100000) == 0, "raw block");
    free(text);
    /* abort leaves nothing; an empty buffer makes an empty file */
    HF_CALL(hessfit_atomic_file_open(test_temp_path("aborted.txt"), &f));
    HF_CALL(hessfit_atomic_file_printf(f, "partial"));
    hessfit_atomic_file_abort(f);
    CHECK(access(test_temp_path("aborted.txt"), F_OK) != 0 && count_temp_files(test_temp_dir()) == 0,
          "abort left a file");
    HF_CALL(hessfit_atomic_write_buffer(test_temp_path("empty.txt"), NULL, 0));
    CHECK(stat(test_temp_path("empty.txt"), &(struct stat){0}) == 0, "empty file");
    text = test_load_file(test_temp_path("empty.txt"), &n);
    CHECK(n == 0, "empty file has %zu bytes", n);
    free(text);
    HF_CALL(hessfit_atomic_write_buffer(test_temp_path("empty.txt"), "abc\n", 4));
    text = test_load_file(test_temp_path("empty.txt"), &n);
    CHECK(n == 4 && strcmp(text, "abc\n") == 0, "buffer write");
    free(text);
    test_expect_error(hessfit_atomic_write_buffer("", "x", 1), HESSFIT_ERROR_INVALID_ARGUMENT, "empty path", NULL, "empty path");
    test_expect_error(hessfit_atomic_file_open(NULL, &f), HESSFIT_ERROR_NULL_ARGUMENT, "path is NULL", NULL, "NULL path");
    free(big);
    printf("atomic file: %zu bytes through printf/write across 64 KiB buffers read back exactly; abort and "
           "failures leave no file\n",
           (size_t)(200002 + 30000 * 6 + 100000));
}

/* A read-only directory: the error names the path and no temporary file is left. Its own CTest
 * entry (test_report_read_only), which reports skipped (77) as root: permissions do not stop root. */
static int test_read_only_dir(void)
{
    if (geteuid() == 0) {
        printf("read-only directory case skipped: running as root (permissions do not stop root)\n");
        return TEST_SKIPPED;
    }
    CHECK(mkdir(test_temp_path("read-only"), 0555) == 0, "mkdir");
    test_expect_error(hessfit_report_write_text(test_temp_path("read-only/report.txt"), &report), HESSFIT_ERROR_IO,
                      test_temp_path("read-only/report.txt"), NULL, "read-only directory");
    CHECK(count_temp_files(test_temp_path("read-only")) == 0, "temporary file left in the read-only directory");
    CHECK(count_temp_files(test_temp_dir()) == 0, "temporary files left behind");
    printf("test_report read-only: all checks passed\n");
    return 0;
}

/* A comma-decimal locale must not leak into JSON. Its own CTest entry (test_report_locale), which
 * reports skipped (77) when no such locale is installed (scripts/setup installs de_DE.UTF-8). */
static int test_locale(void)
{
    static const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", NULL};
    const char *used = NULL;
    char expected[64];
    snprintf(expected, sizeof expected, "\"wall_time_s\": %.17g,", report.wall_time_s); /* in the C locale */
    for (int i = 0; names[i] != NULL && used == NULL; i++)
        if (setlocale(LC_NUMERIC, names[i]) != NULL)
            used = names[i];
    if (used == NULL) {
        printf("locale: no comma-decimal locale installed (de_DE.UTF-8, fr_FR.UTF-8): skipped\n");
        return TEST_SKIPPED;
    }
    {
        char probe[32];
        char *text;
        snprintf(probe, sizeof probe, "%.1f", 1.5);
        HF_CALL(hessfit_report_write_json(test_temp_path("locale.json"), &report));
        setlocale(LC_NUMERIC, "C");
        text = test_load_file(test_temp_path("locale.json"), NULL);
        CHECK(strcmp(probe, "1,5") == 0, "%s prints 1.5 as '%s', not with a decimal comma", used, probe);
        CHECK(strstr(text, expected) != NULL, "JSON numbers under %s: no '%s'", used, expected);
        printf("locale: %s prints 1.5 as '%s'; the JSON still has '.' decimals\n", used, probe);
        free(text);
    }
    printf("test_report locale: all checks passed\n");
    return 0;
}

/* No argument: every case but two, which are CTest entries of their own so that they can report
 * skipped (77) without hiding the others: `read-only` and `locale`. */
int main(int argc, char **argv)
{
    double rmsd, loss_before = 0, loss_after = 0;
    int n;
    build_report();
    if (argc > 1 && strcmp(argv[1], "read-only") == 0)
        return test_read_only_dir();
    if (argc > 1 && strcmp(argv[1], "locale") == 0)
        return test_locale();
    CHECK(argc == 1, "usage: test_report [read-only | locale]");
    have_python = system("python3 -c 'import json, xml.etree.ElementTree' > /dev/null 2>&1") == 0;
    if (have_python) {
        FILE *f = fopen(test_temp_path("check.py"), "w");
        CHECK(f != NULL && fputs(python_script, f) >= 0 && fclose(f) == 0, "writing check.py");
    } else {
        printf("python3 with json and xml.etree not found: the python parts of the checks are skipped\n");
    }

    /* statistics against q2mm's golden numbers */
    HF_CALL(hessfit_report_frequency_rmsd(&molecules[0], 0, &rmsd, &n));
    CHECK(n == 9, "CH3F: %d modes", n);
    CHECK_CLOSE(rmsd, Q2MM_SEMINARIO_RMSD, 1e-13, Q2MM_SEMINARIO_RMSD, "CH3F Seminario RMSD vs q2mm");
    printf("CH3F RMSD before %.13f (q2mm %.13f, rel diff %.1e)\n", rmsd, Q2MM_SEMINARIO_RMSD,
           fabs(rmsd / Q2MM_SEMINARIO_RMSD - 1));
    for (int i = 0; i < 9; i++) {
        loss_before += ch3f_modes[i].residual_before;
        loss_after += ch3f_modes[i].residual_after;
    }
    CHECK_CLOSE(loss_before, Q2MM_SEMINARIO_SCORE, 1e-13, Q2MM_SEMINARIO_SCORE, "CH3F score before vs q2mm");
    CHECK_CLOSE(loss_after, Q2MM_FINAL_SCORE, 1e-10, Q2MM_FINAL_SCORE, "CH3F score after vs q2mm");
    printf("CH3F loss before %.17g (q2mm %.17g), after %.17g (q2mm %.17g, rel diff %.1e)\n", loss_before,
           Q2MM_SEMINARIO_SCORE, loss_after, Q2MM_FINAL_SCORE, fabs(loss_after / Q2MM_FINAL_SCORE - 1));
    HF_CALL(hessfit_report_frequency_rmsd(&molecules[1], 0, &rmsd, &n));
    CHECK(n == 10, "SN2 before: the reaction coordinate (weight 0) and the unpaired mode are left out: %d", n);
    HF_CALL(hessfit_report_frequency_rmsd_all(&report, 1, &rmsd, &n));
    CHECK(n == 20, "all after: %d modes", n);
    {
        hessfit_report_molecule none = {"x", NULL, 1, &sn2_modes[0], NULL}; /* weight 0 only */
        HF_CALL(hessfit_report_frequency_rmsd(&none, 1, &rmsd, &n));
        CHECK(isnan(rmsd) && n == 0, "no weighted mode: NaN and 0");
    }

    test_text();
    test_json();
    test_scatter();
    test_convergence();
    test_failures();
    test_empty_report();
    test_atomic_file();
    printf("test_report: all checks passed\n");
    return 0;
}
