/*
 * entry: the `dsight` agents run, a lean front for the one-shot query.
 *
 * `dsight query --remote ADDR ...` (a session name or socket path) is a
 * one-shot an agent runs many times, so its cost is the process start: this
 * program answers it itself, linked without the dynamic loader's work
 * (LINK=static: a static executable, so no library is mapped or relocated
 * at start; doc/performance.md "Warm sessions").  Everything else (build,
 * ctl, mcp, help, local queries, and any ADDR that names an HTTP
 * listener, HOST:PORT or scheme://, whose client loads libcurl at first
 * use, which a static program cannot) is handed, argv
 * unchanged, to the full program: execv of ../libexec/dsight/dsight beside
 * this executable (the build tree and `make install` both lay it out so).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../cmd.h"
#include "httpc.h"

#define FULL_REL "/../libexec/dsight/dsight"

/* 1 when argv is a query this program answers: `query` with --remote ADDR
 * where ADDR is no HTTP address (httpc_is_addr). */
static int lean_query(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "query"))
		return 0;
	for (int k = 2; k < argc; k++) {
		const char *a = argv[k], *v = NULL;
		if (!strcmp(a, "--"))
			return 0;
		if (!strcmp(a, "--remote") && k + 1 < argc)
			v = argv[k + 1];
		else if (!strncmp(a, "--remote=", 9))
			v = a + 9;
		if (v)
			return !httpc_is_addr(v);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	ssize_t n;

	if (lean_query(argc, argv)) {
		signal(SIGPIPE, SIG_IGN);
		return cmd_query_main(argc - 1, argv + 1);
	}
	n = readlink("/proc/self/exe", path, sizeof path - sizeof FULL_REL);
	if (n <= 0) {
		perror("dsight: cannot find its own executable (/proc/self/exe)");
		return 127;
	}
	path[n] = '\0';
	char *slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	strcat(path, FULL_REL);
	execv(path, argv);
	fprintf(stderr, "dsight: cannot run %s: %s\n", path, strerror(errno));
	return 127;
}
