/* dsight: subcommand dispatch and top-level --help. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const char usage[] =
	"usage: dsight <command> [options]\n"
	"\n"
	"Commands:\n"
	"  build   turn an evidence document and/or Nsight exports into a report\n"
	"            dsight build [EVIDENCE] [--nsys-sqlite PATH]... -o REPORT [--single-file]\n"
	"  query   ask a report (or a warm session) one question; prints JSON\n"
	"            dsight query DATASET [KIND] [filters...]\n"
	"            dsight query --remote ADDR [KIND] [filters...]\n"
	"  export  write a report window as a Chrome trace for Perfetto UI\n"
	"            dsight export REPORT --format chrome-trace [--from S --to S] [-o FILE]\n"
	"  ctl     manage warm sessions started by dsightd serve\n"
	"            dsight ctl kill-server|status ADDR ; dsight ctl list\n"
	"  mcp     serve the query_trace tool over MCP on stdio\n"
	"  help    this text; 'dsight help agent' prints the guide for coding\n"
	"            agents (also installed as share/dsight/SKILL.md)\n"
	"\n"
	"Run 'dsight <command> --help' for a command's options; see dsight(1).\n";

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && !strcmp(argv[1], "help") && !strcmp(argv[2], "agent")) {
		fputs(dsight_agent_guide, stdout);
		return 0;
	}
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("dsight " DSIGHT_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "build"))
		return cmd_build_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "query"))
		return cmd_query_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "export"))
		return cmd_export_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ctl"))
		return cmd_ctl_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "mcp"))
		return cmd_mcp_main(argc - 1, argv + 1);
	fprintf(stderr, "dsight: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
