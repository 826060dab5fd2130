/* cmd_build: `dsight build` (in development: not yet available). */
#include <stdio.h>

#include "cmd.h"

int cmd_build_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("dsight build: not available in this build yet\n", stderr);
	return 1;
}
