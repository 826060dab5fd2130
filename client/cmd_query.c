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
#include "sqlinput.h"
#include "sqlout.h"

/* The CLI's own flags of the sql kind (--help of dsight query and of
 * dsight query sql). */
#define SQL_CLI_FLAGS \
	"  --sql-file FILE      sql: read the statement from FILE (at most 1 MiB,\n" \
	"                       UTF-8); --sql - reads it from standard input\n" \
	"  --format FORMAT      sql: print json (default), jsonl (a columns line,\n" \
	"                       one array per row, a row_count line), csv or tsv\n"

/* Prints a help text on stdout and frees it. */
static void print_help(struct buf *b)
{
	if (!b->failed)
		fputs(b->data, stdout);
	buf_free(b);
}

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
	"`dsightd serve` instead (a name, a socket path, or HOST:PORT or\n"
	"http://HOST:PORT/ of a session served with --http: the token comes from\n"
	"?token=TOKEN in the address, DSIGHT_TOKEN or the user's session files).\n"
	"Prints one JSON document on stdout; on failure {\"ok\": false, \"error\": ...}\n"
	"on stderr and exit status 2 (usage/validation), 1 (data/I/O), 3 (no live\n"
	"session for --remote).\n"
	"\n");
	qdoc_help(&b, SQL_CLI_FLAGS
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
	"`dsight query sql --help` lists the views and their columns.\n"
	"See dsight-query(1).\n");
	print_help(&b);
}

/* `dsight query sql --help`: the sql kind's flags and every view. */
static void print_sql_usage(void)
{
	struct buf b;

	buf_init(&b, 0);
	buf_puts(&b,
	"usage: dsight query DATASET sql --sql STATEMENT [flags]\n"
	"       dsight query DATASET sql --sql - [flags] < statement.sql\n"
	"       dsight query DATASET sql --sql-file FILE [flags]\n"
	"       dsight query --remote ADDR sql ...\n"
	"\n"
	"Runs one read-only SQL statement on the report's SQLite cache and prints\n"
	"{\"columns\", \"rows\", \"row_count\", \"truncated\"} (or --format jsonl,\n"
	"csv, tsv).  Writes, ATTACH, other pragmas and extensions are refused.\n"
	"\n"
	"Flags:\n");
	qdoc_help_kind(&b, "sql", SQL_CLI_FLAGS
	"  --pretty             indent the JSON\n"
	"  --remote ADDR        ask the warm session ADDR instead of DATASET\n");
	buf_putc(&b, '\n');
	qdoc_help_views(&b);
	buf_puts(&b,
	"\n"
	"Examples:\n"
	"  dsight query ./report sql --sql \"SELECT name, count(*) AS n FROM nvtx\n"
	"      GROUP BY name ORDER BY n DESC LIMIT 10\"\n"
	"  dsight query ./report sql --sql-file q.sql --format csv --max-rows 100000\n"
	"\n"
	"See dsight-query(1) and dsight-report(5).\n");
	print_help(&b);
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

/* The CLI names --max-rows as it does --timeout (bad_timeout). */
static int bad_max_rows(const struct query_params *p)
{
	return p->kind && !strcmp(p->kind, "sql") && p->sql && *p->sql &&
	       (p->max_rows < 0 || p->max_rows > QUERY_SQL_MAX_ROWS_LIMIT);
}

/* Prints {"ok": false, "error": msg} on stderr (nothing for ERR_CLOSED:
 * the reader that went away asked for no more); returns the exit
 * status. */
static int fail(int code, const char *msg)
{
	struct buf b;
	if (code == ERR_CLOSED)
		return err_exit_status(code);
	buf_init(&b, 0);
	buf_puts(&b, "{\"ok\": false, \"error\": ");
	jsonout_cstr(&b, msg);
	buf_puts(&b, "}\n");
	if (!b.failed)
		fputs(b.data, stderr);
	buf_free(&b);
	return err_exit_status(code);
}

/* Prints an answer (sqlout_print); a failure as {"ok": false, ...}. */
static int print_answer(const char *json, size_t n, enum sqlout_format f,
                        int pretty)
{
	struct err e;
	int rc;

	err_clear(&e);
	rc = sqlout_print(json, n, f, pretty, &e);
	return rc ? fail(rc, e.msg) : 0;
}

/* Prints the rows of an open sql cursor as they are computed, a batch at
 * a time (the same bytes as the whole answer).  Nothing is printed before
 * the first row or the end, so an error before any row leaves stdout
 * empty; after rows, the error ends what was printed. */
static int print_sql_stream(struct query_sql_cursor *cur,
                            enum sqlout_format f, int pretty)
{
	struct sqlout_stream *s = NULL;
	struct buf cols, rows;
	struct err e;
	int rc;

	err_clear(&e);
	buf_init(&cols, 0);
	buf_init(&rows, 0);
	rc = sqlout_stream_new(f, pretty, stdout, &s, &e);
	for (int first = 1; !rc; first = 0) {
		struct err se;
		int src;
		buf_reset(&rows);
		err_clear(&se);
		src = query_sql_next(cur, &rows, QUERY_SQL_BATCH,
		                     QUERY_SQL_ROW_MAX, QUERY_SQL_FLUSH_S, &se);
		/* the rows computed before an error print first */
		if (src && !rows.len) {
			e = se;
			rc = src;
			break;
		}
		if (first) {
			query_sql_columns(cur, &cols);
			rc = cols.failed ? err_set(&e, ERR_NOMEM, "out of memory")
			                 : sqlout_stream_head(s, cols.data, cols.len,
			                                      &e);
		}
		if (!rc)
			rc = sqlout_stream_rows(s, rows.data, rows.len, &e);
		if (!rc && src) {
			e = se;
			rc = src;
		}
		if (!rc && query_sql_done(cur)) {
			rc = sqlout_stream_end(s, query_sql_row_count(cur),
			                       query_sql_truncated(cur), &e);
			break;
		}
	}
	sqlout_stream_free(s);
	buf_free(&cols);
	buf_free(&rows);
	return rc ? fail(rc, e.msg) : 0;
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

/* The flags only the CLI has, and the statement text it read. */
struct cli_io {
	const char *sql_file; /* --sql-file FILE, or NULL */
	const char *format;   /* --format FORMAT, or NULL */
	struct buf sql_text;  /* the statement read from the file or stdin */
};

/* Checks the CLI's own flags once the kind is known and reads the
 * statement from its file or stdin (only then is stdin read) into
 * io->sql_text, pointing p->sql at it.  Returns 0 or the exit status after
 * printing the error. */
static int finish_flags(struct query_params *p, struct cli_io *io,
                        int pretty, enum sqlout_format *fmt)
{
	int sql = p->kind && !strcmp(p->kind, "sql");
	char msg[ERR_MSG_MAX];
	struct err e;

	*fmt = SQLOUT_JSON;
	if (io->format && sqlout_parse_format(io->format, fmt))
		return fail(ERR_USAGE, "--format must be json, jsonl, csv or "
		                       "tsv");
	if (*fmt != SQLOUT_JSON && !sql) {
		snprintf(msg, sizeof msg, "--format %s applies to the sql kind "
		         "only", io->format);
		return fail(ERR_USAGE, msg);
	}
	if (*fmt != SQLOUT_JSON && pretty)
		return fail(ERR_USAGE, "--pretty applies to --format json only");
	if (!sql)
		return 0;
	if (io->sql_file && p->sql)
		return fail(ERR_USAGE, "Give the statement once: --sql or "
		                       "--sql-file, not both");
	if (bad_timeout(p))
		return fail(ERR_USAGE, "--timeout must be > 0 and <= 30");
	if (bad_max_rows(p))
		return fail(ERR_USAGE, "--max-rows must be >= 0 and <= 1000000");
	if (io->sql_file || (p->sql && !strcmp(p->sql, "-"))) {
		err_clear(&e);
		if (sqlinput_read(io->sql_file, &io->sql_text, &e))
			return fail(e.code, e.msg);
		p->sql = io->sql_text.data ? io->sql_text.data : "";
	}
	if (p->sql && strlen(p->sql) > QUERY_SQL_TEXT_MAX)
		return fail(ERR_USAGE, QUERY_SQL_TOO_LONG);
	return 0;
}

/* Parses argv into *p and *io (owned by the caller) and runs the query. */
static int query_main(int argc, char **argv, struct query_params *p,
                      struct cli_io *io)
{
	const char *pos[3] = {NULL, NULL, NULL};
	const char *remote = NULL;
	int npos = 0, pretty = 0, only_pos = 0, rc;
	enum sqlout_format fmt;
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
			if (npos && !strcmp(pos[npos - 1], "sql"))
				print_sql_usage();
			else
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
		if ((nlen == 10 && !strncmp(a, "--sql-file", 10)) ||
		    (nlen == 8 && !strncmp(a, "--format", 8))) {
			const char **dst = nlen == 10 ? &io->sql_file
			                              : &io->format;
			if (a[nlen] == '=') {
				*dst = a + nlen + 1;
			} else if (k + 1 < argc) {
				*dst = argv[++k];
			} else {
				snprintf(msg, sizeof msg, "%.*s needs a value",
				         (int)nlen, a);
				return fail(ERR_USAGE, msg);
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
		if ((rc = finish_flags(p, io, pretty, &fmt)))
			return rc;
		return cmd_query_remote(remote, p, fmt, pretty);
	}
	if (npos == 0)
		return fail(ERR_USAGE, "dsight query: missing DATASET (see dsight "
		                       "query --help)");
	if (npos > 2)
		return extra_argument(pos[1], pos[2]);
	p->kind = pos[1];
	if ((rc = finish_flags(p, io, pretty, &fmt)))
		return rc;
	{
		struct dataset *ds = NULL;
		struct query_sql_cursor *cur = NULL;
		struct err e;
		struct buf out;

		/* what sql statements may take of SQLite's heap (query_sql.h);
		 * set here, not at start: a --remote query never starts SQLite */
		sqlite3_hard_heap_limit64(QUERY_SQL_HEAP_MAX);
		err_clear(&e);
		rc = dataset_open(pos[0], &ds, &e);
		if (rc)
			return fail(rc, e.msg);
		buf_init(&out, 0);
		/* the sql kind hands over its cursor: rows print as they come */
		if (!strcmp(p->kind ? p->kind : "", "sql"))
			p->sql_cursor = &cur;
		rc = query_run(ds, p, &out, &e);
		dataset_close(ds);
		p->sql_cursor = NULL;
		if (!rc && cur) {
			buf_free(&out);
			rc = print_sql_stream(cur, fmt, pretty);
			query_sql_close(cur);
			return rc;
		}
		if (rc) {
			buf_free(&out);
			return fail(rc, e.msg);
		}
		if (out.failed) {
			buf_free(&out);
			return fail(ERR_NOMEM, "out of memory");
		}
		rc = print_answer(out.data ? out.data : "", out.len, fmt,
		                     pretty);
		buf_free(&out);
		return rc;
	}
}

int cmd_query_main(int argc, char **argv)
{
	struct query_params p;
	struct cli_io io;
	int rc;

	query_params_init(&p);
	memset(&io, 0, sizeof io);
	buf_init(&io.sql_text, 0);
	rc = query_main(argc, argv, &p, &io);
	buf_free(&io.sql_text);
	query_params_free(&p);
	return rc;
}
