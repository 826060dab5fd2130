/* cmd_ctl: `dsight ctl` (in development: not yet available). */
#include <stdio.h>

#include "cmd.h"

int cmd_ctl_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs("dsight ctl: not available in this build yet\n", stderr);
	return 1;
}
