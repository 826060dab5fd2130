/* remote_query: `dsight query --remote` (in development: not yet available). */
#include <stdio.h>

#include "cmd.h"

int cmd_query_remote(const char *addr, const struct query_params *p, int pretty)
{
	(void)addr;
	(void)p;
	(void)pretty;
	fputs("{\"ok\": false, \"error\": \"--remote is not available in this build yet\"}\n", stderr);
	return 1;
}
