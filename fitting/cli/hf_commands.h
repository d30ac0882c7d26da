#ifndef HF_COMMANDS_H_
#define HF_COMMANDS_H_
/* The subcommands of the `hessfit` program. Each takes the arguments after its name (argv[0] is
 * the subcommand's name), prints its own --help, and returns the process exit status: 0 on
 * success, 1 on a failure it reported on stderr (the message names the file/line or item),
 * 2 on a usage error. */

int hf_cmd_fit(int argc, char **argv);
int hf_cmd_report(int argc, char **argv);
int hf_cmd_check(int argc, char **argv);
int hf_cmd_params(int argc, char **argv);
int hf_cmd_seminario(int argc, char **argv);

#endif
