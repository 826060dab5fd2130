/*
 * cmd: the subcommands of `dsight`.  Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the exit status.
 */
#ifndef DSIGHT_CMD_H
#define DSIGHT_CMD_H

int cmd_build_main(int argc, char **argv);
int cmd_query_main(int argc, char **argv);
int cmd_ctl_main(int argc, char **argv);
int cmd_mcp_main(int argc, char **argv);

#endif
