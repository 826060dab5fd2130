/* fuzz_cli: the flag parser of `dsight query` (client/cmd_query.c) and the
 * engine's validation behind it.
 *
 * The input is a list of arguments separated by NUL bytes, given after
 * `dsight query <example document>`; --remote is left out (it would
 * connect to sessions), and so are --sql-file and the value "-" (--sql -:
 * they would read files and stdin).  Properties: no crash or leak, an exit status of
 * 0, 1 or 2, and (checked by the sanitizers) no read past an argument.
 * Output goes to stdout/stderr: run with -close_fd_mask=3. */
#include "fuzzlib.h"
#include "cmd.h"

#define MAX_ARGS 24

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 3];
	char *copy = malloc(size + 1);
	int argc = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = "query";
	argv[argc++] = DSIGHT_TOP "/tests/fixtures/example.trace.json";
	for (char *p = copy; p <= copy + size && argc < MAX_ARGS + 2;) {
		size_t n = strlen(p);
		if ((!strncmp(p, "--remote", 8) && (p[8] == '\0' || p[8] == '=')) ||
		    !strncmp(p, "--sql-file", 10) || !strcmp(p, "-") ||
		    !strcmp(p, "--sql=-")) {
			free(copy);
			return 0;
		}
		argv[argc++] = p;
		p += n + 1;
	}
	argv[argc] = NULL;
	int rc = cmd_query_main(argc, argv);
	fflush(stdout);
	fuzz_check(rc >= 0 && rc <= 2, "exit status 0, 1 or 2");
	free(copy);
	return 0;
}
