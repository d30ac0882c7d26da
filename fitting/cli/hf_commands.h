#ifndef HF_COMMANDS_H_
#define HF_COMMANDS_H_
#include <stdio.h>
/* The subcommands of the `hessfit` program. Each takes the arguments after its name (argv[0] is
 * the subcommand's name), prints its own --help, and returns the process exit status: 0 on
 * success, 1 on a failure it reported on stderr (the message names the file/line or item),
 * 2 on a usage error. */

int hf_cmd_fit(int argc, char **argv);
int hf_cmd_report(int argc, char **argv);
int hf_cmd_check(int argc, char **argv);
int hf_cmd_params(int argc, char **argv);
int hf_cmd_seminario(int argc, char **argv);

/* A usage error of subcommand `command`: "hessfit COMMAND: " and fmt (one %s: arg) on stderr, a
 * blank line, then the subcommand's usage text; returns 2 (the usage-error exit status). */
int hf_cli_usage_error(const char *command, void (*usage)(FILE *), const char *fmt, const char *arg);

#endif
