/* fuzz_sqlagg: the sql engine's own grouped aggregates (query/qsqlshape.c,
 * query/qsqlagg.c), differentially.
 *
 * The input is one SQL statement.  It runs twice on the example document's
 * cache (built once, at start) with the engine's columns in memory: as a
 * warm session runs it (the engine computes a statement of its shape
 * itself), and with DSIGHT_SQL_NATIVE=0 (SQLite over the same virtual
 * tables).  Properties: no crash or leak, and the two answers are the same
 * bytes, or the same error (a time limit aside: the engine may finish
 * where SQLite ran out of time). */
#include "fuzzlib.h"
#include "cmd.h"
#include "base/buf.h"
#include "base/err.h"
#include "query/qsqlmem.h"
#include "query/query_sql.h"

static struct qsqlmem *mem;
static char cache[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char out[400];
	char *args[] = {"build", DSIGHT_TOP "/tests/fixtures/example.trace.json",
	                "-o", out, NULL};
	struct err e;

	(void)argc, (void)argv;
	snprintf(out, sizeof out, "%s/report", fuzz_dir());
	if (cmd_build_main(4, args)) {
		fprintf(stderr, "fuzz_sqlagg: cannot build %s\n", out);
		abort();
	}
	snprintf(cache, sizeof cache, "%s/trace-data.sqlite", out);
	if (qsqlmem_load(cache, NULL, &mem, &e)) {
		fprintf(stderr, "fuzz_sqlagg: %s\n", e.msg);
		abort();
	}
	return 0;
}

/* Runs sql with the engine's executor on (native) or off: out and e. */
static int run(const char *sql, int native, struct buf *out, struct err *e)
{
	struct query_sql_with with = {NULL, NULL, mem, NULL};

	if (native)
		unsetenv("DSIGHT_SQL_NATIVE");
	else
		setenv("DSIGHT_SQL_NATIVE", "0", 1);
	e->msg[0] = '\0';
	return query_sql_run(cache, sql, 5.0, 1000, &with, out, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *sql;
	struct buf a, b;
	struct err ea, eb;
	int ra, rb;

	if (size > 4096 || memchr(data, 0, size))
		return 0;
	if (!(sql = malloc(size + 1)))
		return 0;
	memcpy(sql, data, size);
	sql[size] = '\0';
	buf_init(&a, 0);
	buf_init(&b, 0);
	ra = run(sql, 1, &a, &ea);
	rb = run(sql, 0, &b, &eb);
	if (!strstr(ea.msg, "ran longer") && !strstr(eb.msg, "ran longer")) {
		fuzz_check(ra == rb, "the same status with and without the executor");
		if (!ra)
			fuzz_check(a.len == b.len && !memcmp(a.data, b.data, a.len),
			           "the same answer with and without the executor");
		else
			fuzz_check(!strcmp(ea.msg, eb.msg),
			           "the same error with and without the executor");
	}
	buf_free(&a);
	buf_free(&b);
	free(sql);
	return 0;
}
