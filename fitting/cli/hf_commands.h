#ifndef HF_COMMANDS_H_
#define HF_COMMANDS_H_
#include <getopt.h>
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

/* What hf_cli_getopt returns besides an option's val and -1 (no more options; argv[optind..] are
 * then the operands, which getopt_long has moved behind the options). */
enum {
    HF_CLI_HELP = -2,        /* --help or -h: usage printed on stdout; the command exits 0 */
    HF_CLI_USAGE_ERROR = -3  /* an unknown option or a missing value, reported; the command exits 2 */
};

/* The next option of a subcommand's arguments by getopt_long (call it until it returns -1; the
 * value of an option with one is in optarg). Long options may be written --name value or
 * --name=value. options ends with a zeroed entry; besides its entries -h and --help (which options
 * must list with val 'h') are understood. */
int hf_cli_getopt(int argc, char **argv, const struct option *options, const char *command, void (*usage)(FILE *));

/* The one operand of fit, report and check (after hf_cli_getopt returned -1): *input = the input
 * file and 0, or a usage error reported (none, or more than one) and 2. */
int hf_cli_input_operand(int argc, char **argv, const char *command, void (*usage)(FILE *), const char **input);

#endif
