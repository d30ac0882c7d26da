/*
 * ch3f_frequencies: MM and QM harmonic frequencies of CH3F with the hessfit plugin and fitting layer.
 *
 *   1. loads the hessfit OpenMM plugins (--plugin-dir DIR overrides the default),
 *   2. builds CH3F from examples/data/sn2/ch3f-optimized.xyz as an OpenMM_System (monoisotopic
 *      masses) with one hessfit_force: bonds C-F and 3 x C-H, angles 3 x H-C-H and 3 x F-C-H,
 *      parameters typed by element from q2mm's Seminario start (ch3f-seminario-start.txt, q2mm's
 *      units converted with hessfit_units.h),
 *   3. reads the analytic Hessian (kJ/mol/nm^2) from a Reference-platform Context at the QM
 *      geometry and prints its frequencies (mass-weighted, no projection, the 9 of largest
 *      magnitude) beside q2mm's MM frequencies for the same force field,
 *   4. runs the same vibrational routine on the QM Hessian (ch3f-hessian.npy, Hartree/Bohr^2)
 *      and compares with ch3f-frequencies.txt.
 *
 * Exit status: 0 when the QM frequencies reproduce ch3f-frequencies.txt to 1e-3 cm^-1 and the MM
 * frequencies reproduce q2mm's to HF_MM_TOLERANCE_CM1; 1 when either does not; 2 for usage,
 * input or plugin errors.
 *
 * Convention check (documented here and in tests/fitting/hessian/test_vibrations.c): ch3f-frequencies.txt is
 * reproduced from the unprojected Hessian by the 9 eigenvalues of largest magnitude to about
 * 5e-6 cm^-1 with the CODATA factor 5140.48714 (3e-5 with q2mm's rounded 5140.4871); with
 * translations and rotations projected out the match is 1e-7 cm^-1. Either way it is well inside
 * 1e-3, so this comparison uses the unprojected Hessian, as q2mm does.
 */
#include "hessfit.h"
#include "hessfit_fitting.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HESSFIT_EXAMPLE_PLUGIN_DIR
#define HESSFIT_EXAMPLE_PLUGIN_DIR "."
#endif
#ifndef HESSFIT_EXAMPLE_DATA_DIR
#define HESSFIT_EXAMPLE_DATA_DIR "examples/data/sn2"
#endif

#define HF_QM_TOLERANCE_CM1 1e-3
/* q2mm's numbers come from another code (JAX, float64) whose unit constants differ slightly: its
 * frequencies sit uniformly about 8e-8 (relative) below hessfit's, 2.3e-4 cm^-1 at 3000 cm^-1. */
#define HF_MM_TOLERANCE_CM1 1e-3
#define MAX_TYPES 16
#define MAX_REF 64

typedef struct {
    int is_angle;
    int z[3];           /* bond: z[0]-z[1]; angle: z[0]-z[1]-z[2], z[1] central */
    double k, x0;       /* q2mm units as read */
    int k_slot, x0_slot;
} ff_type;

typedef struct {
    ff_type types[MAX_TYPES];
    int n_types;
    double reference[MAX_REF];
    int n_reference;
} ff_file;

static int fail_hessfit(const char *what, hessfit_status st)
{
    fprintf(stderr, "ch3f_frequencies: %s failed: %s: %s\n", what, hessfit_status_string(st), hessfit_last_error());
    return 2;
}

static int fail_hf(const char *what, hessfit_status st)
{
    fprintf(stderr, "ch3f_frequencies: %s failed: %s: %s\n", what, hessfit_status_string(st), hessfit_last_error());
    return 2;
}

/* The one routine both Hessians go through: mass-weight, diagonalise (no projection), all 15
 * frequencies in all[], the 9 of largest magnitude in top9[]. unit_factor: hessfit_units. */
static hessfit_status ch3f_frequencies(const double *hessian, const double masses[5], double unit_factor,
                                  double all[15], double top9[9])
{
    hessfit_status st = hessfit_vib_analyse(hessian, masses, NULL, 5, unit_factor, 0, all, NULL, NULL);
    return st != HESSFIT_SUCCESS ? st : hessfit_vib_select(all, 15, 9, top9);
}

static void join(char *out, size_t cap, const char *dir, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* ---- the force-field file ------------------------------------------------------------------- */

static hessfit_status parse_number(const char *tok, const char *path, int line, double *v)
{
    char *end;
    if (tok == NULL)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: a number is missing", path, line);
    *v = strtod(tok, &end);
    if (end == tok || *end != '\0')
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: '%s' is not a number", path, line, tok);
    if (!isfinite(*v))
        return hessfit_error(HESSFIT_ERROR_NONFINITE, "%s:%d: '%s' is not finite", path, line, tok);
    return HESSFIT_SUCCESS;
}

static hessfit_status parse_element(const char *tok, const char *path, int line, int *z)
{
    if (tok == NULL)
        return hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: an element symbol is missing", path, line);
    *z = hessfit_element_atomic_number(tok);
    if (*z == 0)
        return hessfit_error(HESSFIT_ERROR_UNKNOWN_ELEMENT, "%s:%d: unknown element '%s'", path, line, tok);
    return HESSFIT_SUCCESS;
}

static hessfit_status read_ff(const char *path, ff_file *ff)
{
    char buf[4096];
    int line = 0;
    hessfit_status st = HESSFIT_SUCCESS;
    FILE *f = fopen(path, "r");
    memset(ff, 0, sizeof *ff);
    if (f == NULL)
        return hessfit_error(HESSFIT_ERROR_IO, "%s: cannot open", path);
    while (fgets(buf, sizeof buf, f) != NULL) {
        char *tok, *hash;
        line++;
        if (strchr(buf, '\n') == NULL && !feof(f)) {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: line too long", path, line);
            break;
        }
        if ((hash = strchr(buf, '#')) != NULL)
            *hash = '\0';
        tok = strtok(buf, " \t\r\n");
        if (tok == NULL)
            continue;
        if (strcmp(tok, "bond") == 0 || strcmp(tok, "angle") == 0) {
            ff_type *t;
            int n_atoms = tok[0] == 'b' ? 2 : 3;
            if (ff->n_types == MAX_TYPES) {
                st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: more than %d types", path, line, MAX_TYPES);
                break;
            }
            t = &ff->types[ff->n_types];
            t->is_angle = n_atoms == 3;
            for (int a = 0; a < n_atoms && st == HESSFIT_SUCCESS; a++)
                st = parse_element(strtok(NULL, " \t\r\n"), path, line, &t->z[a]);
            if (st == HESSFIT_SUCCESS)
                st = parse_number(strtok(NULL, " \t\r\n"), path, line, &t->k);
            if (st == HESSFIT_SUCCESS)
                st = parse_number(strtok(NULL, " \t\r\n"), path, line, &t->x0);
            if (st == HESSFIT_SUCCESS && (tok = strtok(NULL, " \t\r\n")) != NULL)
                st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unexpected field '%s'", path, line, tok);
            if (st != HESSFIT_SUCCESS)
                break;
            ff->n_types++;
        } else if (strcmp(tok, "reference_frequencies") == 0) {
            while ((tok = strtok(NULL, " \t\r\n")) != NULL) {
                if (ff->n_reference == MAX_REF) {
                    st = hessfit_error(HESSFIT_ERROR_OVERFLOW, "%s:%d: more than %d reference frequencies", path, line, MAX_REF);
                    break;
                }
                if ((st = parse_number(tok, path, line, &ff->reference[ff->n_reference])) != HESSFIT_SUCCESS)
                    break;
                ff->n_reference++;
            }
            if (st != HESSFIT_SUCCESS)
                break;
        } else {
            st = hessfit_error(HESSFIT_ERROR_PARSE, "%s:%d: unknown record '%s' (bond, angle, reference_frequencies)", path,
                          line, tok);
            break;
        }
    }
    fclose(f);
    return st;
}

static const ff_type *find_bond(const ff_file *ff, int za, int zb)
{
    for (int i = 0; i < ff->n_types; i++) {
        const ff_type *t = &ff->types[i];
        if (!t->is_angle && ((t->z[0] == za && t->z[1] == zb) || (t->z[0] == zb && t->z[1] == za)))
            return t;
    }
    return NULL;
}

static const ff_type *find_angle(const ff_file *ff, int za, int zb, int zc)
{
    for (int i = 0; i < ff->n_types; i++) {
        const ff_type *t = &ff->types[i];
        if (t->is_angle && t->z[1] == zb &&
            ((t->z[0] == za && t->z[2] == zc) || (t->z[0] == zc && t->z[2] == za)))
            return t;
    }
    return NULL;
}

/* ---- plugins --------------------------------------------------------------------------------- */

/* Number of hessfit plugin libraries (file names containing "HessFit") loaded from dir; -1 if
 * OpenMM reported load failures (printed). Without the Reference plugin, creating the Context
 * would abort inside OpenMM, so this is checked first. */
static int load_plugins(const char *dir)
{
    OpenMM_StringArray *loaded = OpenMM_Platform_loadPluginsFromDirectory(dir);
    OpenMM_StringArray *failures = OpenMM_Platform_getPluginLoadFailures();
    int n_loaded = OpenMM_StringArray_getSize(loaded), n_failed = OpenMM_StringArray_getSize(failures);
    int n_hessfit = 0;
    for (int i = 0; i < n_loaded; i++) {
        const char *name = OpenMM_StringArray_get(loaded, i);
        const char *slash = strrchr(name, '/');
        printf("loaded plugin %s\n", name);
        n_hessfit += strstr(slash != NULL ? slash + 1 : name, "HessFit") != NULL;
    }
    for (int i = 0; i < n_failed; i++)
        fprintf(stderr, "ch3f_frequencies: plugin load failure: %s\n", OpenMM_StringArray_get(failures, i));
    OpenMM_StringArray_destroy(loaded);
    OpenMM_StringArray_destroy(failures);
    return n_failed > 0 ? -1 : n_hessfit;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: ch3f_frequencies [--plugin-dir DIR] [--data DIR]\n"
                 "  --plugin-dir DIR  directory of the hessfit OpenMM plugins (default %s)\n"
                 "  --data DIR        directory holding ch3f-optimized.xyz, ch3f-hessian.npy,\n"
                 "                    ch3f-frequencies.txt, ch3f-seminario-start.txt (default %s)\n",
            HESSFIT_EXAMPLE_PLUGIN_DIR, HESSFIT_EXAMPLE_DATA_DIR);
}

static double max_abs_diff(const double *a, const double *b, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > m)
            m = fabs(a[i] - b[i]);
    return m;
}

int main(int argc, char **argv)
{
    const char *const default_data_dir = HESSFIT_EXAMPLE_DATA_DIR;
    const char *plugin_dir = NULL, *data_dir = default_data_dir;
    char path[4096];
    hessfit_xyz xyz = {0, NULL, NULL, NULL};
    ff_file ff;
    hessfit_status hst;
    hessfit_status st;
    OpenMM_System *system = NULL;
    hessfit_force *force = NULL;
    OpenMM_VerletIntegrator *integrator = NULL;
    OpenMM_Context *context = NULL;
    OpenMM_Vec3Array *positions = NULL;
    double masses[5], block_masses[5], mm_all[15], mm[9], qm_all[15], qm[9], *hessian = NULL, *ref = NULL;
    double *qm_hessian = NULL;
    size_t n_ref = 0, qm_dim = 0;
    long long hsize = 0;
    int centre = -1, n_loaded, rc = 2, particles[5], n_particles = 0, bonds[8], n_bonds = 0;
    const double f_kj = hessfit_frequency_factor_kj_mol_nm2_amu(), f_au = hessfit_frequency_factor_hartree_bohr2_amu();

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin-dir") == 0 && i + 1 < argc) {
            plugin_dir = argv[++i];
        } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
            data_dir = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }

    /* 1. plugins: the build tree's directory, else the install tree's */
    n_loaded = load_plugins(plugin_dir != NULL ? plugin_dir : HESSFIT_EXAMPLE_PLUGIN_DIR);
#ifdef HESSFIT_EXAMPLE_INSTALL_PLUGIN_DIR
    if (n_loaded == 0 && plugin_dir == NULL)
        n_loaded = load_plugins(HESSFIT_EXAMPLE_INSTALL_PLUGIN_DIR);
#endif
    if (n_loaded < 0) {
        fprintf(stderr, "ch3f_frequencies: the hessfit plugins failed to load\n");
        return 2;
    }
    if (n_loaded == 0) {
        fprintf(stderr, "ch3f_frequencies: no hessfit plugin found in %s (use --plugin-dir)\n",
                plugin_dir != NULL ? plugin_dir : HESSFIT_EXAMPLE_PLUGIN_DIR);
        return 2;
    }

    /* 2. geometry, masses, force field (an installed program finds its data in the install tree) */
    join(path, sizeof path, data_dir, "ch3f-optimized.xyz");
#ifdef HESSFIT_EXAMPLE_INSTALL_DATA_DIR
    if (data_dir == default_data_dir) {
        FILE *probe = fopen(path, "r");
        if (probe != NULL)
            fclose(probe);
        else {
            data_dir = HESSFIT_EXAMPLE_INSTALL_DATA_DIR;
            join(path, sizeof path, data_dir, "ch3f-optimized.xyz");
        }
    }
#endif
    if ((hst = hessfit_xyz_read(path, &xyz)) != HESSFIT_SUCCESS)
        return fail_hf("reading the geometry", hst);
    if (xyz.n_atoms != 5) {
        fprintf(stderr, "ch3f_frequencies: %s: %d atoms, CH3F has 5\n", path, xyz.n_atoms);
        goto done;
    }
    if ((hst = hessfit_element_masses(xyz.atomic_numbers, 5, HESSFIT_MASS_MONOISOTOPIC, masses)) != HESSFIT_SUCCESS) {
        rc = fail_hf("masses", hst);
        goto done;
    }
    for (int a = 0; a < 5; a++) {
        if (xyz.atomic_numbers[a] == 6) {
            if (centre >= 0) {
                fprintf(stderr, "ch3f_frequencies: %s: more than one carbon\n", path);
                goto done;
            }
            centre = a;
        }
    }
    if (centre < 0) {
        fprintf(stderr, "ch3f_frequencies: %s: no carbon atom\n", path);
        goto done;
    }
    join(path, sizeof path, data_dir, "ch3f-seminario-start.txt");
    if ((hst = read_ff(path, &ff)) != HESSFIT_SUCCESS) {
        rc = fail_hf("reading the force field", hst);
        goto done;
    }

    system = OpenMM_System_create();
    for (int a = 0; a < 5; a++)
        OpenMM_System_addParticle(system, masses[a]);
    if ((st = hessfit_force_create(&force)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_create", st);
        goto done;
    }
    /* one slot per typed parameter, in HessianForce units (kJ/mol, nm, rad); E = k (x - x0)^2 on both sides */
    for (int i = 0; i < ff.n_types; i++) {
        ff_type *t = &ff.types[i];
        double k = t->is_angle ? t->k * HESSFIT_KCAL_PER_MOL_PER_RAD2_TO_KJ_PER_MOL_PER_RAD2
                               : t->k * HESSFIT_KCAL_PER_MOL_PER_A2_TO_KJ_PER_MOL_PER_NM2;
        double x0 = t->is_angle ? t->x0 * HESSFIT_DEG_TO_RAD : t->x0 * HESSFIT_ANGSTROM_TO_NM;
        if ((st = hessfit_force_add_parameter(force, k, &t->k_slot)) != HESSFIT_SUCCESS ||
            (st = hessfit_force_add_parameter(force, x0, &t->x0_slot)) != HESSFIT_SUCCESS) {
            rc = fail_hessfit("hessfit_force_add_parameter", st);
            goto done;
        }
    }
    for (int a = 0; a < 5; a++) {
        if ((st = hessfit_force_add_particle(force, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, HESSFIT_NO_SLOT, NULL)) !=
            HESSFIT_SUCCESS) {
            rc = fail_hessfit("hessfit_force_add_particle", st);
            goto done;
        }
    }
    /* bonds: the carbon to every other atom */
    for (int a = 0; a < 5; a++) {
        const ff_type *t;
        if (a == centre)
            continue;
        t = find_bond(&ff, xyz.atomic_numbers[centre], xyz.atomic_numbers[a]);
        if (t == NULL) {
            fprintf(stderr, "ch3f_frequencies: no bond type %s-%s in %s\n", hessfit_element_symbol(xyz.atomic_numbers[centre]),
                    hessfit_element_symbol(xyz.atomic_numbers[a]), path);
            goto done;
        }
        if ((st = hessfit_force_add_bond(force, centre, a, t->k_slot, t->x0_slot, NULL)) != HESSFIT_SUCCESS) {
            rc = fail_hessfit("hessfit_force_add_bond", st);
            goto done;
        }
        bonds[2 * n_bonds] = centre;
        bonds[2 * n_bonds + 1] = a;
        n_bonds++;
    }
    /* angles: every pair of the carbon's neighbours (3 x H-C-H, 3 x F-C-H) */
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++) {
            const ff_type *t;
            if (a == centre || b == centre)
                continue;
            t = find_angle(&ff, xyz.atomic_numbers[a], xyz.atomic_numbers[centre], xyz.atomic_numbers[b]);
            if (t == NULL) {
                fprintf(stderr, "ch3f_frequencies: no angle type %s-%s-%s in %s\n",
                        hessfit_element_symbol(xyz.atomic_numbers[a]), hessfit_element_symbol(xyz.atomic_numbers[centre]),
                        hessfit_element_symbol(xyz.atomic_numbers[b]), path);
                goto done;
            }
            if ((st = hessfit_force_add_angle(force, a, centre, b, t->k_slot, t->x0_slot, NULL)) != HESSFIT_SUCCESS) {
                rc = fail_hessfit("hessfit_force_add_angle", st);
                goto done;
            }
        }
    /* no nonbonded parameters here; exclusions keep the model right if charges are added later */
    if ((st = hessfit_force_create_exclusions_from_bonds(force, bonds, n_bonds)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_create_exclusions_from_bonds", st);
        goto done;
    }
    if ((st = hessfit_force_add_to_system(force, system, NULL)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_add_to_system", st);
        goto done;
    }

    /* 3. analytic MM Hessian on the Reference platform at the QM geometry */
    integrator = OpenMM_VerletIntegrator_create(0.001);
    context = OpenMM_Context_create_2(system, (OpenMM_Integrator *)integrator,
                                      OpenMM_Platform_getPlatformByName("Reference"));
    positions = OpenMM_Vec3Array_create(5);
    for (int a = 0; a < 5; a++) {
        OpenMM_Vec3 p = {xyz.coords_angstrom[3 * a] * HESSFIT_ANGSTROM_TO_NM, xyz.coords_angstrom[3 * a + 1] * HESSFIT_ANGSTROM_TO_NM,
                         xyz.coords_angstrom[3 * a + 2] * HESSFIT_ANGSTROM_TO_NM};
        OpenMM_Vec3Array_set(positions, a, p);
    }
    OpenMM_Context_setPositions(context, positions);
    if ((st = hessfit_force_get_hessian_size(force, &hsize)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_get_hessian_size", st);
        goto done;
    }
    if (hsize != 225) {
        fprintf(stderr, "ch3f_frequencies: Hessian size %lld, expected 225 (one 15 x 15 block)\n", hsize);
        goto done;
    }
    if ((st = hessfit_force_get_molecule_particles(force, 0, particles, 5, &n_particles)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_get_molecule_particles", st);
        goto done;
    }
    if (n_particles != 5) {
        fprintf(stderr, "ch3f_frequencies: molecule 0 has %d particles, expected 5\n", n_particles);
        goto done;
    }
    for (int i = 0; i < 5; i++)
        block_masses[i] = masses[particles[i]]; /* Hessian-block order */
    hessian = malloc(225 * sizeof *hessian);
    if (hessian == NULL) {
        fprintf(stderr, "ch3f_frequencies: out of memory\n");
        goto done;
    }
    if ((st = hessfit_force_get_hessian_blocks(force, context, hessian, hsize)) != HESSFIT_SUCCESS) {
        rc = fail_hessfit("hessfit_force_get_hessian_blocks", st);
        goto done;
    }
    if ((hst = ch3f_frequencies(hessian, block_masses, f_kj, mm_all, mm)) != HESSFIT_SUCCESS) {
        rc = fail_hf("MM vibrational analysis", hst);
        goto done;
    }

    /* 4. QM Hessian through the same routine */
    join(path, sizeof path, data_dir, "ch3f-hessian.npy");
    if ((hst = hessfit_npy_read_square(path, 15, &qm_hessian, &qm_dim)) != HESSFIT_SUCCESS) {
        rc = fail_hf("reading the QM Hessian", hst);
        goto done;
    }
    if ((hst = ch3f_frequencies(qm_hessian, masses, f_au, qm_all, qm)) != HESSFIT_SUCCESS) {
        rc = fail_hf("QM vibrational analysis", hst);
        goto done;
    }
    join(path, sizeof path, data_dir, "ch3f-frequencies.txt");
    if ((hst = hessfit_text_read_values(path, &ref, &n_ref)) != HESSFIT_SUCCESS) {
        rc = fail_hf("reading the QM frequencies", hst);
        goto done;
    }
    if (n_ref != 9) {
        fprintf(stderr, "ch3f_frequencies: %s holds %zu values, expected 9\n", path, n_ref);
        goto done;
    }

    {
        double qm_dev = max_abs_diff(qm, ref, 9), mm_dev = -1.0, mm_rms = 0.0;
        int have_mm_ref = ff.n_reference == 9;
        printf("\nCH3F harmonic frequencies (cm^-1), no projection, the 9 of largest magnitude\n");
        printf("  factors: %.8f cm^-1 per sqrt(Hartree/Bohr^2/amu), %.10f per sqrt(kJ/mol/nm^2/amu)\n", f_au, f_kj);
        /* not exactly zero: the start force field is not at its minimum at the QM geometry */
        printf("  MM translations/rotations (unprojected):");
        for (int i = 0; i < 15; i++)
            if (fabs(mm_all[i]) < 100.0)
                printf(" %.4f", mm_all[i]);
        printf("\n\n%4s %16s %16s %11s %14s %14s %10s\n", "mode", "QM (hessfit)", "QM (txt)", "QM diff", "MM (hessfit)",
               "MM (q2mm)", "MM diff");
        for (int i = 0; i < 9; i++) {
            printf("%4d %16.6f %16.6f %11.2e %14.6f", i + 1, qm[i], ref[i], qm[i] - ref[i], mm[i]);
            if (have_mm_ref)
                printf(" %14.6f %10.2e", ff.reference[i], mm[i] - ff.reference[i]);
            printf("\n");
            mm_rms += (qm[i] - mm[i]) * (qm[i] - mm[i]);
        }
        mm_rms = sqrt(mm_rms / 9.0);
        printf("\nQM: max |hessfit - ch3f-frequencies.txt| = %.3e cm^-1 (tolerance %.0e)\n", qm_dev,
               HF_QM_TOLERANCE_CM1);
        if (have_mm_ref) {
            mm_dev = max_abs_diff(mm, ff.reference, 9);
            printf("MM: max |hessfit - q2mm Seminario start| = %.3e cm^-1 (tolerance %.0e)\n", mm_dev,
                   HF_MM_TOLERANCE_CM1);
        }
        printf("MM vs QM: RMSD %.4f cm^-1 (q2mm reports 156.854 for its Seminario start, OpenMM backend)\n", mm_rms);
        rc = qm_dev <= HF_QM_TOLERANCE_CM1 && (!have_mm_ref || mm_dev <= HF_MM_TOLERANCE_CM1) ? 0 : 1;
        if (rc != 0)
            fprintf(stderr, "ch3f_frequencies: frequencies outside tolerance\n");
    }

done:
    free(ref);
    free(qm_hessian);
    free(hessian);
    if (positions != NULL)
        OpenMM_Vec3Array_destroy(positions);
    if (context != NULL)
        OpenMM_Context_destroy(context);
    if (integrator != NULL)
        OpenMM_VerletIntegrator_destroy(integrator);
    if (force != NULL)
        hessfit_force_destroy(force); /* frees the handle; the System owns the force once added */
    if (system != NULL)
        OpenMM_System_destroy(system);
    hessfit_xyz_free(&xyz);
    return rc;
}
