/*
 * cmd: the subcommands of `dsight`.  Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the exit status.
 */
#ifndef DSIGHT_CMD_H
#define DSIGHT_CMD_H

int cmd_build_main(int argc, char **argv);
int cmd_query_main(int argc, char **argv);
int cmd_export_main(int argc, char **argv);
int cmd_ctl_main(int argc, char **argv);
int cmd_mcp_main(int argc, char **argv);

#include <stddef.h>

/* Prints {"ok": false, "error": msg} on stderr (the error line of query
 * and export; nothing for ERR_CLOSED: the reader that went away asked for
 * no more); returns the exit status of code (err_exit_status). */
int cmd_fail(int code, const char *msg);

#include "sqlout.h"

/* doc/agent-guide.md, embedded at build time (scripts/embed-text): what
 * `dsight help agent` prints. */
extern const char dsight_agent_guide[];

struct query_params;
/* `dsight query --remote ADDR ...`: sends the parsed parameters to the warm
 * session at addr and prints its answer exactly as a local query would
 * (sqlout_print).  Returns the exit status (0, 1, 2 or 3). */
int cmd_query_remote(const char *addr, const struct query_params *p,
                     enum sqlout_format f, int pretty);

#endif
