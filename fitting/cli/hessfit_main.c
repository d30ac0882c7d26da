/* `hessfit`: the command-line front end. Dispatches to one subcommand per file (hf_commands.h). */
#include <stdio.h>
#include <string.h>

#include "hessfit.h"
#include "hf_commands.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"fit", hf_cmd_fit, "fit force-field parameters to QM Hessians as an input file says (INPUT.fit)"},
    {"report", hf_cmd_report, "QM vs MM frequencies per molecule and mode, and the objective, for a force field"},
    {"check", hf_cmd_check, "analytic vs finite-difference Hessians and objective gradients on a training set"},
    {"params", hf_cmd_params, "list every term of the training structures with the parameter it matched and how"},
    {"seminario", hf_cmd_seminario, "estimate bond and angle force constants from QM Hessians (Seminario)"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: hessfit <command> [options]   (hessfit <command> --help for its options)\n"
                 "       hessfit --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("hessfit %s\n", hessfit_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hessfit: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
