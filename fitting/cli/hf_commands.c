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
