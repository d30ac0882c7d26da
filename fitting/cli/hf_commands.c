/* What the subcommands share (hf_commands.h). */
#include "hf_commands.h"

int hf_cli_usage_error(const char *command, void (*usage)(FILE *), const char *fmt, const char *arg)
{
    fprintf(stderr, "hessfit %s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return 2;
}

int hf_cli_getopt(int argc, char **argv, const struct option *options, const char *command, void (*usage)(FILE *))
{
    /* ":h": a missing value comes back as ':' and only -h is a short option; opterr = 0 so that
     * the messages are hessfit's. getopt_long permutes, so operands may stand between options. */
    opterr = 0;
    int opt = getopt_long(argc, argv, ":h", options, NULL);
    switch (opt) {
    case 'h':
        usage(stdout);
        return HF_CLI_HELP;
    case ':':
        hf_cli_usage_error(command, usage, "option '%s' needs a value", argv[optind - 1]);
        return HF_CLI_USAGE_ERROR;
    case '?':
        hf_cli_usage_error(command, usage, "unknown option '%s'", argv[optind - 1]);
        return HF_CLI_USAGE_ERROR;
    default:
        return opt;
    }
}

int hf_cli_input_operand(int argc, char **argv, const char *command, void (*usage)(FILE *), const char **input)
{
    if (optind >= argc)
        return hf_cli_usage_error(command, usage, "%s", "the input file INPUT.fit is required");
    if (optind + 1 < argc)
        return hf_cli_usage_error(command, usage, "unexpected argument '%s' (one input file)", argv[optind + 1]);
    *input = argv[optind];
    return 0;
}
