/*
 * `hessfit report INPUT.fit [--forcefield FILE]`: QM against MM per molecule and per mode, and the
 * objective's value, for the input's force field (at its start values: `start = seminario` applies)
 * or, with --forcefield, for FILE beside it -- no optimisation. The training set is loaded exactly
 * as `hessfit fit` loads it (hf_training_set.h), so the objective at FILE = the fit's output is the
 * fit's final loss (in the q2mm frequency mode the MM modes are selected at the input's start
 * values, as in the fit). FILE must be the input's force field with other values (a fitted.fld or
 * fitted.frcmod of `hessfit fit`): the same lines, kinds, types and periodicities.
 *
 * Writes report.txt, report.json, frequencies.svg and, with energy or geometry targets,
 * targets.txt and targets.json (atomically) to --output DIR (default "<input stem>-report" beside
 * the input) and prints the objective's value and RMSD per kind.
 * Exit 0 on success, 1 on an error, 2 on a usage error.
 */
#include "hessfit_report.h"
#include "hf_commands.h"
#include "hf_fit_report.h"
#include "hf_training_set.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hessfit report INPUT.fit [--forcefield FILE] [--output DIR] [--help]\n"
            "\n"
            "QM against MM frequencies, per molecule and per mode, and the value of INPUT's objective, for the\n"
            "force field of INPUT (its start values) and, with --forcefield, for FILE: the input's force field\n"
            "with other values, such as the fitted.fld of `hessfit fit` (\"before\" = INPUT's, \"after\" = FILE's).\n"
            "The training set, typing, free parameters and objective are INPUT's (docs/fitting.md).\n"
            "\n"
            "  --forcefield FILE   the force field to compare (same lines, types and periodicities as INPUT's)\n"
            "  --output DIR        where report.txt, report.json, frequencies.svg and targets.{txt,json} go\n"
            "                      (default: <input stem>-report beside the input file)\n"
            "Exit status: 0 success, 1 error, 2 usage error.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    return hf_cli_usage_error("report", usage, fmt, arg);
}

static int fail(void)
{
    fprintf(stderr, "hessfit report: %s\n", hf_last_error());
    return 1;
}

int hf_cmd_report(int argc, char **argv)
{
    const char *input = NULL, *forcefield = NULL, *output = NULL;
    hf_training_set set;
    hf_fit_comparison cmp;
    char path[4200], status[1200];
    int rc = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--forcefield") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            if (strcmp(a, "--forcefield") == 0)
                forcefield = argv[++i];
            else
                output = argv[++i];
        } else if (a[0] == '-')
            return usage_error("unknown option '%s'", a);
        else if (input != NULL)
            return usage_error("unexpected argument '%s' (one input file)", a);
        else
            input = a;
    }
    if (input == NULL)
        return usage_error("%s", "the input file INPUT.fit is required");

    hf_training_set_options topt = {forcefield, output, "-report"};
    if (hf_training_set_load(input, &topt, &set) != HF_SUCCESS)
        return fail();
    if (hf_fit_compare(&set, set.x_start, set.x_compare, set.n_free, &cmp) != HF_SUCCESS) {
        fail();
        hf_training_set_free(&set);
        return 1;
    }
    const char *dir = set.settings.output_dir;
    if (hf_cli_make_directory(dir) != HF_SUCCESS) {
        fail();
        goto done;
    }
    snprintf(status, sizeof status, "no optimisation: %s (before)%s%s%s", set.ff.path,
             forcefield != NULL ? " against " : "", forcefield != NULL ? forcefield : "",
             forcefield != NULL ? " (after)" : "");
    hf_report report;
    hf_fit_comparison_report(&cmp, &report);
    report.title = input;
    report.optimizer = "none (hessfit report)";
    report.status = status;
    struct {
        const char *name;
        hf_status (*write)(const char *, const hf_report *);
    } outputs[] = {{"report.txt", hf_report_write_text},
                   {"report.json", hf_report_write_json},
                   {"frequencies.svg", hf_svg_frequency_scatter}};
    for (size_t k = 0; k < sizeof outputs / sizeof outputs[0]; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, outputs[k].name);
        if (outputs[k].write(path, &report) != HF_SUCCESS) {
            fail();
            goto done;
        }
    }
    if (hf_fit_write_targets(dir, &cmp) != HF_SUCCESS) {
        fail();
        goto done;
    }

    printf("hessfit report %s: %d structures, objective %s\n", input, set.n_mols, set.settings.objective_name);
    printf("  %s: objective %.10g\n", set.ff.path, cmp.loss_before);
    if (forcefield != NULL)
        printf("  %s: objective %.10g\n", forcefield, cmp.loss_after);
    for (int k = 0; k < cmp.n_objectives; k++) {
        const hf_report_objective *o = &cmp.objectives[k];
        printf("  %s: %ld weighted, loss %.10g, RMSD %.6g %s", o->kind, o->n_weighted, o->loss_before, o->rmsd_before,
               o->unit);
        if (forcefield != NULL)
            printf("; with %s: loss %.10g, RMSD %.6g %s", forcefield, o->loss_after, o->rmsd_after, o->unit);
        printf("\n");
    }
    for (int m = 0; m < cmp.n_molecules; m++) {
        double before, after;
        int nb = 0, na = 0;
        hf_report_frequency_rmsd(&cmp.molecules[m], 0, &before, &nb);
        hf_report_frequency_rmsd(&cmp.molecules[m], 1, &after, &na);
        if (nb == 0) { /* an objective that is not per mode: no weighted frequency */
            printf("  %s: %d modes\n", set.labels[m], cmp.molecules[m].n_modes);
            continue;
        }
        printf("  %s: %d modes, frequency RMSD %.3f cm^-1 over %d weighted", set.labels[m], cmp.molecules[m].n_modes,
               before, nb);
        if (forcefield != NULL && na > 0)
            printf(" (%.3f with %s)", after, forcefield);
        printf("\n");
    }
    printf("  wrote %s/{report.txt,report.json,frequencies.svg%s}\n", dir,
           cmp.n_energies + cmp.n_geometry > 0 ? ",targets.txt,targets.json" : "");
    rc = 0;
done:
    hf_fit_comparison_free(&cmp);
    hf_training_set_free(&set);
    return rc;
}
