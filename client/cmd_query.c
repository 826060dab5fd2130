/* cmd_query: `dsight query DATASET [KIND] [flags]` and `--remote ADDR`:
 * parses the flags of queries.md into query parameters, runs the engine
 * (or hands them to the remote client) and prints one JSON document. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cmd.h"
#include "query/dataset.h"
#include "base/err.h"
#include "base/jsonout.h"
#include "query/query.h"
#include "query/query_sql.h"

static const char usage_text[] =
	"usage: dsight query DATASET [KIND] [flags]\n"
	"       dsight query --remote ADDR [KIND] [flags]\n"
	"\n"
	"DATASET is a report directory, a trace-data.sqlite cache or an evidence\n"
	"document (.json or gzip).  --remote ADDR asks a warm session started by\n"
	"`dsightd serve` instead (a name, a socket path or host:port).\n"
	"Prints one JSON document on stdout; on failure {\"ok\": false, \"error\": ...}\n"
	"on stderr and exit status 2 (usage/validation), 1 (data/I/O), 3 (no live\n"
	"session for --remote).\n"
	"\n"
	"Kinds (default summary):\n"
	"  summary       schema, meta, audit, capabilities, counts\n"
	"  requests      client requests overlapping the window (filters: --session,\n"
	"                --agent, --worker, --min-ttft-ms, --search)\n"
	"  request       one whole request (--request ID)\n"
	"  lifecycle     one request's lifecycle (--request ID)\n"
	"  metrics       series windows with samples/min/max/mean/last (--worker,\n"
	"                --name exact, --rank, --points)\n"
	"  profiles      Nsight profiles (--worker, --rank, --profile)\n"
	"  nsys          NVTX ranges overlapping the window (--worker, --rank,\n"
	"                --profile, --name substring)\n"
	"  cpu           inclusive CPU hotspots (--worker, --rank, --profile)\n"
	"  iterations    batch observations (--worker, --rank)\n"
	"  sources       the source inventory\n"
	"  server_spans  server spans not joined to a request\n"
	"  sessions      sessions (--session, --agent)\n"
	"  workers       the worker catalog (--worker)\n"
	"  families      metric families (--name substring)\n"
	"  sql           one read-only SQL statement on the report's SQLite cache\n"
	"                (--sql, --timeout); views nvtx, cpu_samples, cpu_frames,\n"
	"                metric_points, series, requests, request_workers,\n"
	"                lifecycle_stages, server_spans, profiles, workers,\n"
	"                sessions, iterations, sources (see dsight-report(5))\n"
	"\n"
	"Flags:\n"
	"  --from SECONDS       window start (default 0)\n"
	"  --to SECONDS         window end (default: the run duration)\n"
	"  --request ID         request id (request, lifecycle)\n"
	"  --session ID         exact session\n"
	"  --agent NAME         exact agent\n"
	"  --worker ID          exact worker (empty: no filter)\n"
	"  --rank N             integer rank (0 is a real filter)\n"
	"  --profile N          integer profile id (0 is a real filter)\n"
	"  --name TEXT          metrics: exact; nsys, families: case-insensitive substring\n"
	"  --search TEXT        requests: case-insensitive substring\n"
	"  --min-ttft-ms MS     requests with ttft_ms >= MS (default 0)\n"
	"  --offset N           first item of the page (default 0)\n"
	"  --limit N            page size, 0..1000 (default 100; 0 = counts only)\n"
	"  --points             metrics: include the first 1000 raw points\n"
	"  --sql STATEMENT      sql: the statement (one SELECT; at most 10000 rows\n"
	"                       and 16 MiB are returned, then truncated: true)\n"
	"  --timeout SECONDS    sql: time limit, > 0 and <= 30 (default 10)\n"
	"  --pretty             indent the JSON\n"
	"  --remote ADDR        query the warm session ADDR instead of DATASET\n"
	"  -h, --help           this text\n"
	"\n"
	"Examples:\n"
	"  dsight query ./report\n"
	"  dsight query ./report requests --from 3 --to 4 --search chat --limit 10\n"
	"  dsight query ./report request --request req-0001\n"
	"  dsight query ./report lifecycle --request req-0001\n"
	"  dsight query ./report metrics --worker decode-0 --rank 0 --points\n"
	"  dsight query ./report profiles --worker decode-0\n"
	"  dsight query ./report nsys --from 9 --to 10 --profile 0 --name forward\n"
	"  dsight query ./report cpu --worker frontend --limit 20\n"
	"  dsight query ./report iterations --worker decode-0 --rank 0\n"
	"  dsight query ./report sources\n"
	"  dsight query ./report server_spans --from 0 --to 5\n"
	"  dsight query ./report sessions --agent planner\n"
	"  dsight query ./report workers\n"
	"  dsight query ./report families --name queue\n"
	"  dsight query ./report sql --sql 'SELECT name, count(*) AS n FROM nvtx\n"
	"      GROUP BY name ORDER BY n DESC LIMIT 5'\n"
	"  dsight query --remote myrun summary\n"
	"\n"
	"See dsight-query(1).\n";

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

static int parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;
	if (!*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	if (!*s)
		return -1;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || (errno == ERANGE && isinf(*out)))
		return -1;
	return 0;
}

enum ftype { F_STR, F_NUM, F_INT };

struct flag {
	const char *name;
	enum ftype type;
};

static const struct flag flags[] = {
	{"--from", F_NUM},      {"--to", F_NUM},         {"--request", F_STR},
	{"--session", F_STR},   {"--agent", F_STR},      {"--worker", F_STR},
	{"--rank", F_INT},      {"--profile", F_INT},    {"--name", F_STR},
	{"--search", F_STR},    {"--min-ttft-ms", F_NUM}, {"--offset", F_INT},
	{"--limit", F_INT},     {"--remote", F_STR},      {"--sql", F_STR},
	{"--timeout", F_NUM},
};

static void set_flag(struct query_params *p, const char *name,
                     const char *sval, double d, int64_t i,
                     const char **remote)
{
	if (!strcmp(name, "--from")) {
		p->has_start = 1;
		p->start = d;
	} else if (!strcmp(name, "--to")) {
		p->has_end = 1;
		p->end = d;
	} else if (!strcmp(name, "--request"))
		p->request_id = sval;
	else if (!strcmp(name, "--session"))
		p->session = sval;
	else if (!strcmp(name, "--agent"))
		p->agent = sval;
	else if (!strcmp(name, "--worker"))
		p->worker = sval;
	else if (!strcmp(name, "--rank")) {
		p->has_rank = 1;
		p->rank = i;
	} else if (!strcmp(name, "--profile")) {
		p->has_profile = 1;
		p->profile = i;
	} else if (!strcmp(name, "--name"))
		p->name = sval;
	else if (!strcmp(name, "--search"))
		p->search = sval;
	else if (!strcmp(name, "--min-ttft-ms"))
		p->min_ttft_ms = d;
	else if (!strcmp(name, "--offset"))
		p->offset = i;
	else if (!strcmp(name, "--limit"))
		p->limit = i;
	else if (!strcmp(name, "--remote"))
		*remote = sval;
	else if (!strcmp(name, "--sql"))
		p->sql = sval;
	else if (!strcmp(name, "--timeout")) {
		p->has_timeout = 1;
		p->timeout = d;
	}
}

int cmd_query_main(int argc, char **argv)
{
	struct query_params p;
	const char *pos[3] = {NULL, NULL, NULL};
	const char *remote = NULL;
	int npos = 0, pretty = 0, only_pos = 0;
	char msg[ERR_MSG_MAX];

	query_params_init(&p);
	for (int k = 1; k < argc; k++) {
		const char *a = argv[k];
		const struct flag *f = NULL;
		const char *val = NULL;
		size_t nlen;

		if (only_pos || a[0] != '-' || !a[1]) {
			if (npos == 3)
				return fail(ERR_USAGE, "dsight query: too many "
				                       "arguments (see dsight query "
				                       "--help)");
			pos[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		}
		if (!strcmp(a, "--pretty")) {
			pretty = 1;
			continue;
		}
		if (!strcmp(a, "--points")) {
			p.points = 1;
			continue;
		}
		nlen = strcspn(a, "=");
		for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
			if (strlen(flags[i].name) == nlen &&
			    !strncmp(flags[i].name, a, nlen))
				f = &flags[i];
		if (!f) {
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
				         f->name);
				return fail(ERR_USAGE, msg);
			}
			val = argv[++k];
		}
		{
			double d = 0;
			int64_t i = 0;
			if (f->type == F_NUM && parse_num(val, &d)) {
				snprintf(msg, sizeof msg, "%s must be a number",
				         f->name);
				return fail(ERR_USAGE, msg);
			}
			if (!strcmp(f->name, "--timeout") &&
			    !(d > 0 && d <= QUERY_SQL_TIMEOUT_MAX))
				return fail(ERR_USAGE,
				            "--timeout must be > 0 and <= 30");
			if (f->type == F_INT && parse_int(val, &i)) {
				snprintf(msg, sizeof msg, "%s must be an integer",
				         f->name);
				return fail(ERR_USAGE, msg);
			}
			set_flag(&p, f->name, val, d, i, &remote);
		}
	}
	if (remote) {
		if (npos > 1)
			return fail(ERR_USAGE,
			            "dsight query: give either DATASET or --remote "
			            "ADDR, not both");
		p.kind = pos[0];
		return cmd_query_remote(remote, &p, pretty);
	}
	if (npos == 0)
		return fail(ERR_USAGE, "dsight query: missing DATASET (see dsight "
		                       "query --help)");
	if (npos > 2)
		return fail(ERR_USAGE, "dsight query: too many arguments (see "
		                       "dsight query --help)");
	p.kind = pos[1];
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
		rc = query_run(ds, &p, &out, &e);
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
