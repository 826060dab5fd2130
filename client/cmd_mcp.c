/* cmd_mcp: `dsight mcp` (in development: not yet available). */
#include <stdio.h>

#include "cmd.h"

int cmd_mcp_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("dsight mcp: not available in this build yet\n", stderr);
	return 1;
}
