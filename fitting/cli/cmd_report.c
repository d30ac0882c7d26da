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

static int fail(void)
{
    fprintf(stderr, "hessfit report: %s\n", hessfit_last_error());
    return 1;
}

int hf_cmd_report(int argc, char **argv)
{
    const char *input = NULL, *forcefield = NULL, *output = NULL;
    hf_training_set set;
    hf_fit_comparison cmp;
    int rc = 1;

    static const struct option options[] = {{"forcefield", required_argument, NULL, 'f'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    for (int o; (o = hf_cli_getopt(argc, argv, options, "report", usage)) != -1;) {
        if (o == HF_CLI_HELP || o == HF_CLI_USAGE_ERROR)
            return o == HF_CLI_HELP ? 0 : 2;
        if (o == 'f')
            forcefield = optarg;
        else
            output = optarg;
    }
    if (hf_cli_input_operand(argc, argv, "report", usage, &input) != 0)
        return 2;

    hf_training_set_options topt = {forcefield, output, "-report", 0};
    if (hf_training_set_load(input, &topt, &set) != HESSFIT_SUCCESS)
        return fail();
    if (hf_fit_compare(&set, set.x_start, set.x_compare, set.n_free, &cmp) != HESSFIT_SUCCESS) {
        fail();
        hf_training_set_free(&set);
        return 1;
    }
    hf_fit_warn_stationarity(&set, &cmp, set.x_compare != NULL, stdout);
    char status[sizeof "no optimisation:  (before) against  (after)" + strlen(set.ff.path) +
                (forcefield != NULL ? strlen(forcefield) : 0)];
    snprintf(status, sizeof status, "no optimisation: %s (before)%s%s%s", set.ff.path,
             forcefield != NULL ? " against " : "", forcefield != NULL ? forcefield : "",
             forcefield != NULL ? " (after)" : "");
    const char *dir = set.settings.output_dir;
    if (hf_cli_make_directory(dir) != HESSFIT_SUCCESS) {
        fail();
        goto done;
    }
    hessfit_report report;
    hf_fit_comparison_report(&cmp, &report);
    report.title = input;
    report.optimizer = "none (hessfit report)";
    report.status = status;
    if (hf_fit_write_reports(dir, &report, &cmp) != HESSFIT_SUCCESS) {
        fail();
        goto done;
    }

    printf("hessfit report %s: %d structures, objective %s\n", input, set.n_mols, set.settings.objective_name);
    printf("  %s: objective %.10g\n", set.ff.path, cmp.loss_before);
    if (forcefield != NULL)
        printf("  %s: objective %.10g\n", forcefield, cmp.loss_after);
    for (int k = 0; k < cmp.n_objectives; k++) {
        const hessfit_report_objective *o = &cmp.objectives[k];
        printf("  %s: %ld weighted, loss %.10g, RMSD %.6g %s", o->kind, o->n_weighted, o->loss_before, o->rmsd_before,
               o->unit);
        if (forcefield != NULL)
            printf("; with %s: loss %.10g, RMSD %.6g %s", forcefield, o->loss_after, o->rmsd_after, o->unit);
        printf("\n");
    }
    for (int m = 0; m < cmp.n_molecules; m++) {
        double before, after;
        int nb = 0, na = 0;
        hessfit_report_frequency_rmsd(&cmp.molecules[m], 0, &before, &nb);
        hessfit_report_frequency_rmsd(&cmp.molecules[m], 1, &after, &na);
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
