/* cmd_query: `dsight query` (in development: not yet available). */
#include <stdio.h>

#include "cmd.h"

int cmd_query_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("dsight query: not available in this build yet\n", stderr);
	return 1;
}
