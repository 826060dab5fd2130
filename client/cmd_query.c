/* cmd_query: `dsight query DATASET [KIND] [flags]` and `--remote ADDR`:
 * parses the flags of doc/query-semantics.md into query parameters, runs the engine
 * (or hands them to the remote client) and prints one JSON document. */
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd.h"
#include "query/dataset.h"
#include "base/err.h"
#include "base/jsonout.h"
#include "query/qdoc.h"
#include "query/query.h"
#include "query/query_sql.h"

static void print_usage(void)
{
	struct buf b;

	buf_init(&b, 0);
	buf_puts(&b,
	"usage: dsight query DATASET [KIND] [flags]\n"
	"       dsight query --remote ADDR [KIND] [flags]\n"
	"\n"
	"DATASET is a report directory, a trace-data.sqlite cache or an evidence\n"
	"document (.json or gzip).  --remote ADDR asks a warm session started by\n"
	"`dsightd serve` instead (a name, a socket path or host:port).\n"
	"Prints one JSON document on stdout; on failure {\"ok\": false, \"error\": ...}\n"
	"on stderr and exit status 2 (usage/validation), 1 (data/I/O), 3 (no live\n"
	"session for --remote).\n"
	"\n");
	qdoc_help(&b,
	"  --pretty             indent the JSON\n"
	"  --remote ADDR        query the warm session ADDR instead of DATASET\n"
	"  -h, --help           this text\n");
	buf_puts(&b,
	"\n"
	"Examples:\n"
	"  dsight query ./report\n");
	for (size_t k = 0; k < query_kind_count; k++)
		if (query_kind_table[k].example)
			buf_printf(&b, "  dsight query ./report %s\n",
			           query_kind_table[k].example);
	buf_puts(&b,
	"  dsight query --remote myrun summary\n"
	"\n"
	"See dsight-query(1).\n");
	if (!b.failed)
		fputs(b.data, stdout);
	buf_free(&b);
}

/* The CLI names the flag where RPC and MCP name the parameter, so the
 * sql kind's time limit is checked here, for local and remote queries
 * alike; the kinds that do not use --timeout ignore it. */
static int bad_timeout(const struct query_params *p)
{
	return p->kind && !strcmp(p->kind, "sql") && p->sql && *p->sql &&
	       p->has_timeout &&
	       !(p->timeout > 0 && p->timeout <= QUERY_SQL_TIMEOUT_MAX);
}

/* Prints {"ok": false, "error": msg} on stderr; returns the exit status. */
static int fail(int code, const char *msg)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "{\"ok\": false, \"error\": ");
	jsonout_cstr(&b, msg);
	buf_puts(&b, "}\n");
	if (!b.failed)
		fputs(b.data, stderr);
	buf_free(&b);
	return err_exit_status(code);
}

/* A positional argument after the kind: the message says the fix. */
static int extra_argument(const char *kind, const char *arg)
{
	char msg[ERR_MSG_MAX];
	if (kind && (!strcmp(kind, "request") || !strcmp(kind, "lifecycle")))
		snprintf(msg, sizeof msg, "Give the request as --request %s",
		         arg);
	else
		snprintf(msg, sizeof msg, "Unexpected argument '%s'", arg);
	return fail(ERR_USAGE, msg);
}

/* Parses argv into *p (owned by the caller) and runs the query. */
static int query_main(int argc, char **argv, struct query_params *p)
{
	const char *pos[3] = {NULL, NULL, NULL};
	const char *remote = NULL;
	int npos = 0, pretty = 0, only_pos = 0;
	char msg[ERR_MSG_MAX];
	struct err pe;

	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		const struct qparam *f;
		const char *val = NULL;
		size_t nlen;

		if (only_pos || a[0] != '-' || !a[1]) {
			if (npos == 3)
				return extra_argument(pos[1], a);
			pos[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			print_usage();
			return 0;
		}
		if (!strcmp(a, "--pretty")) {
			pretty = 1;
			continue;
		}
		nlen = strcspn(a, "=");
		if (nlen == 8 && !strncmp(a, "--remote", 8)) {
			if (a[nlen] == '=') {
				remote = a + nlen + 1;
			} else if (k + 1 < argc) {
				remote = argv[++k];
			} else {
				return fail(ERR_USAGE, "--remote needs a value");
			}
			continue;
		}
		f = qparam_by_flag(a, nlen);
		if (f && f->type == QP_BOOLEAN && !a[nlen]) {
			err_clear(&pe);
			query_params_set_cli(p, f, NULL, &pe);
			continue;
		}
		if (!f || f->type == QP_BOOLEAN) {
			snprintf(msg, sizeof msg,
			         "dsight query: unknown flag %s (see dsight query "
			         "--help)",
			         a);
			return fail(ERR_USAGE, msg);
		}
		if (a[nlen] == '=') {
			val = a + nlen + 1;
		} else {
			if (k + 1 >= argc) {
				snprintf(msg, sizeof msg, "%s needs a value",
				         f->flag);
				return fail(ERR_USAGE, msg);
			}
			val = argv[++k];
		}
		err_clear(&pe);
		if (query_params_set_cli(p, f, val, &pe))
			return fail(pe.code, pe.msg);
	}
	if (remote) {
		if (npos > 1 && !query_kind_find(pos[0]))
			return fail(ERR_USAGE,
			            "dsight query: give either DATASET or --remote "
			            "ADDR, not both");
		if (npos > 1)
			return extra_argument(pos[0], pos[1]);
		p->kind = pos[0];
		if (bad_timeout(p))
			return fail(ERR_USAGE, "--timeout must be > 0 and <= 30");
		return cmd_query_remote(remote, p, pretty);
	}
	if (npos == 0)
		return fail(ERR_USAGE, "dsight query: missing DATASET (see dsight "
		                       "query --help)");
	if (npos > 2)
		return extra_argument(pos[1], pos[2]);
	p->kind = pos[1];
	if (bad_timeout(p))
		return fail(ERR_USAGE, "--timeout must be > 0 and <= 30");
	{
		struct dataset *ds = NULL;
		struct err e;
		struct buf out;
		int rc;

		err_clear(&e);
		rc = dataset_open(pos[0], &ds, &e);
		if (rc)
			return fail(rc, e.msg);
		buf_init(&out, 0);
		rc = query_run(ds, p, &out, &e);
		dataset_close(ds);
		if (rc) {
			buf_free(&out);
			return fail(rc, e.msg);
		}
		if (pretty) {
			struct buf pb;
			buf_init(&pb, 0);
			if (jsonout_pretty(out.data, out.len, &pb) || pb.failed) {
				buf_free(&pb);
				buf_free(&out);
				return fail(ERR_DATA, "cannot pretty-print the "
				                      "response");
			}
			buf_free(&out);
			out = pb;
		}
		buf_putc(&out, '\n');
		if (out.failed) {
			buf_free(&out);
			return fail(ERR_NOMEM, "out of memory");
		}
		if (fwrite(out.data, 1, out.len, stdout) != out.len ||
		    fflush(stdout) != 0) {
			buf_free(&out);
			return fail(ERR_DATA, "cannot write the response");
		}
		buf_free(&out);
		return 0;
	}
}
int cmd_query_main(int argc, char **argv)
{
	struct query_params p;
	int rc;

	/* what sql statements may take of SQLite's heap (query_sql.h) */
	sqlite3_hard_heap_limit64(QUERY_SQL_HEAP_MAX);
	query_params_init(&p);
	rc = query_main(argc, argv, &p);
	query_params_free(&p);
	return rc;
}
