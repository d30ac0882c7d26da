/* PLACEHOLDER while the readers issue is in progress: replaced by the real subcommand. */
#include <stdio.h>
#include "hf_commands.h"
int hf_cmd_seminario(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "hessfit %s: not built yet\n", argv[0]);
    return 1;
}
