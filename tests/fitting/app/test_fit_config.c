/* The `hessfit fit` input file (hessfit_config.h): keys, paths resolved against the file's
 * directory (also the FILE word of energy entries), the word forms of the energy and geometry keys,
 * and an error naming file:line for every kind of bad input. */
#include "hessfit_config.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    CHECK(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
    return path;
}

static void expect_error(const char *name, const char *text, const char *where, const char *part)
{
    hessfit_config c;
    const char *path = write_file(name, text);
    char location[320];
    hessfit_status st = hessfit_config_read(path, &c);
    CHECK(st != HESSFIT_SUCCESS, "%s: accepted", name);
    snprintf(location, sizeof location, "%s%s", path, where);
    CHECK(strstr(hessfit_last_error(), location) != NULL, "%s: message lacks '%s': %s", name, location, hessfit_last_error());
    CHECK(strstr(hessfit_last_error(), part) != NULL, "%s: message lacks '%s': %s", name, part, hessfit_last_error());
    CHECK(c.n_entries == 0 && c.entries == NULL && c.path == NULL, "%s: output not zeroed", name);
    printf("  expected error: %s\n", hessfit_last_error());
}

int main(void)
{
    static const char good[] =
        "# a training set\n"
        "forcefield = ff/start.fld   # relative to this file\n"
        "structures = set.mmo\n"
        "hessian    = /abs/one.in\n"
        "hessian    = two.in\n"
        "free = bond k\n"
        "free = angle theta0\n"
        "\n"
        "no-term = torsion * RH * *\n"
        "objective = eigenmatrix\n"
        "max-time = 30\n"
        "energy = conf-A 2   qm/two.out\n"
        "energy = conf-A 3 /abs/three.log\n"
        "energy = conf_B.1 4\n"
        "energy-weight = 20\n"
        "energy-weight = conf-A 0\n"
        "geometry = all\n"
        "geometry = 2 bonds torsions\n"
        "geometry = 3 torsion 1 2 3 4\n"
        "geometry-weight = angle 4.5\n";
    const char *base = "/tmp/hessfit_test_config_XXXXXX";
    hessfit_config c;
    double v;
    char expected[256];

    strcpy(dir, base);
    CHECK(mkdtemp(dir) != NULL, "mkdtemp failed");

    HF_CALL(hessfit_config_read(write_file("good.fit", good), &c));
    CHECK(c.n_entries == 18, "%d entries", c.n_entries);
    snprintf(expected, sizeof expected, "conf-A 2 %s/qm/two.out", dir);
    CHECK(strcmp(hessfit_config_entry_at(&c, "energy", 0)->value, expected) == 0, "energy FILE resolved: %s",
          hessfit_config_entry_at(&c, "energy", 0)->value);
    CHECK(strcmp(hessfit_config_entry_at(&c, "energy", 1)->value, "conf-A 3 /abs/three.log") == 0, "absolute FILE kept");
    CHECK(strcmp(hessfit_config_entry_at(&c, "energy", 2)->value, "conf_B.1 4") == 0, "energy without FILE");
    CHECK(strcmp(hessfit_config_entry_at(&c, "geometry", 2)->value, "3 torsion 1 2 3 4") == 0, "geometry kept whole");
    snprintf(expected, sizeof expected, "%s/ff/start.fld", dir);
    CHECK(strcmp(hessfit_config_get(&c, "forcefield", NULL), expected) == 0, "forcefield %s",
          hessfit_config_get(&c, "forcefield", NULL));
    CHECK(hessfit_config_count(&c, "hessian") == 2, "hessians");
    CHECK(strcmp(hessfit_config_entry_at(&c, "hessian", 0)->value, "/abs/one.in") == 0, "absolute path kept");
    snprintf(expected, sizeof expected, "%s/two.in", dir);
    CHECK(strcmp(hessfit_config_entry_at(&c, "hessian", 1)->value, expected) == 0, "relative path resolved");
    CHECK(hessfit_config_entry_at(&c, "hessian", 1)->line == 5, "line numbers");
    CHECK(hessfit_config_entry_at(&c, "hessian", 2) == NULL, "past the end");
    CHECK(strcmp(hessfit_config_entry_at(&c, "no-term", 0)->value, "torsion * RH * *") == 0, "text value kept whole");
    CHECK(strcmp(hessfit_config_get(&c, "optimizer", "lbfgs"), "lbfgs") == 0, "fallback");
    HF_CALL(hessfit_config_number(&c, "max-time", 0, 100, -1, &v));
    CHECK(v == 30.0, "max-time %g", v);
    HF_CALL(hessfit_config_number(&c, "ftol", 0, 1, 1e-8, &v));
    CHECK(v == 1e-8, "ftol fallback %g", v);
    CHECK(hessfit_config_number(&c, "max-time", 0, 10, -1, &v) == HESSFIT_ERROR_PARSE, "range in the getter");
    hessfit_config_free(&c);
    hessfit_config_free(&c); /* safe twice */

    expect_error("unknown.fit", "forcefield = a.fld\nstructures = s.mmo\nfree = bond k\nfrobnicate = 1\n", ":4:",
                 "unknown key 'frobnicate'");
    expect_error("twice.fit", "forcefield = a.fld\nforcefield = b.fld\n", ":2:", "second time (first on line 1)");
    expect_error("choice.fit", "forcefield = a.fld\noptimizer = bfgs\n", ":2:", "lm|trf|lbfgs|slsqp|nelder-mead|sbplx|grad-simp");
    expect_error("number.fit", "forcefield = a.fld\nmax-evaluations = ten\n", ":2:", "not a number");
    expect_error("nan.fit", "forcefield = a.fld\nftol = nan\n", ":2:", "not finite");
    expect_error("range.fit", "forcefield = a.fld\nftol = 2\n", ":2:", "outside [0, 1]");
    expect_error("noeq.fit", "forcefield a.fld\n", ":1:", "expected 'key = value'");
    expect_error("empty-value.fit", "forcefield =\n", ":1:", "has no value");
    expect_error("missing.fit", "forcefield = a.fld\nstructures = s.mmo\n", ":", "required key 'free'");
    expect_error("empty.fit", "", ":", "required key 'forcefield'");
    /* the energy and geometry keys' word forms */
    expect_error("energy-words.fit", "forcefield = a.fld\nenergy = groupA\n", ":2:", "'GROUP STRUCTURE [FILE]'");
    expect_error("energy-index.fit", "forcefield = a.fld\nenergy = g 0 x.out\n", ":2:", "'GROUP STRUCTURE [FILE]'");
    expect_error("energy-name.fit", "forcefield = a.fld\nenergy = 12 3\n", ":2:", "a group name of letters");
    expect_error("energy-name2.fit", "forcefield = a.fld\nenergy = g/h 3\n", ":2:", "'GROUP STRUCTURE [FILE]'");
    expect_error("energy-extra.fit", "forcefield = a.fld\nenergy = g 3 a.out b.out\n", ":2:", "'GROUP STRUCTURE");
    expect_error("eweight.fit", "forcefield = a.fld\nenergy-weight = -1\n", ":2:", "must be >= 0");
    expect_error("eweight-nan.fit", "forcefield = a.fld\nenergy-weight = g nan\n", ":2:", "not finite");
    expect_error("eweight-words.fit", "forcefield = a.fld\nenergy-weight = g 1 2\n", ":2:", "'W' (every energy)");
    expect_error("geometry-kind.fit", "forcefield = a.fld\ngeometry = 2 dihedrals\n", ":2:", "'N bond A B'");
    expect_error("geometry-twice.fit", "forcefield = a.fld\ngeometry = 2 bonds bonds\n", ":2:", "once each");
    expect_error("geometry-atoms.fit", "forcefield = a.fld\ngeometry = 2 angle 1 2\n", ":2:", "takes 3 atom numbers");
    expect_error("geometry-atom0.fit", "forcefield = a.fld\ngeometry = 2 bond 0 1\n", ":2:", "takes 2 atom numbers");
    expect_error("geometry-all.fit", "forcefield = a.fld\ngeometry = all bonds\n", ":2:", "'all', 'N'");
    expect_error("gweight.fit", "forcefield = a.fld\ngeometry-weight = dihedral 1\n", ":2:", "'bond W' (per Angstrom)");
    expect_error("gweight-neg.fit", "forcefield = a.fld\ngeometry-weight = bond -2\n", ":2:", "must be >= 0");
    expect_error("scale14-one.fit", "forcefield = a.fld\nscale14 = 0.5\n", ":2:", "'COULOMB LJ'");
    expect_error("scale14-range.fit", "forcefield = a.fld\nscale14 = 0.5 1.5\n", ":2:", "LJ scale 1.5 is not in [0, 1]");
    expect_error("combining.fit", "forcefield = a.fld\ncombining = arithmetic\n", ":2:", "geometric");
    expect_error("form.fit", "forcefield = a.fld\nform = mm2\n", ":2:", "harmonic");
    expect_error("objective-choice.fit", "forcefield = a.fld\nobjective = energies\n", ":2:",
                 "frequencies|frequencies-q2mm|eigenmatrix|hessian|none");
    {
        /* a NUL byte inside the file */
        const char *path = write_file("nul.fit", "x");
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL && fwrite("forcefield = a\0b\n", 1, 17, f) == 17 && fclose(f) == 0, "write");
        CHECK(hessfit_config_read(path, &c) == HESSFIT_ERROR_PARSE && strstr(hessfit_last_error(), ":1:") != NULL, "NUL: %s",
              hessfit_last_error());
    }
    CHECK(hessfit_config_read("/nonexistent/x.fit", &c) == HESSFIT_ERROR_IO, "missing file");
    CHECK(strstr(hessfit_last_error(), "/nonexistent/x.fit") != NULL, "message names the file");

    {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0, "cleanup");
    }
    printf("test_fit_config: ok\n");
    return 0;
}
