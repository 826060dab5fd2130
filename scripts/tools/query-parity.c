/*
 * query-parity: runs every query kind against both backends of one capture
 * and checks that the answers are byte-identical: the in-memory backend,
 * the SQLite backend with its build-time summaries, and the SQLite backend
 * without them (dataset_set_summaries).
 *
 *   query-parity DOCUMENT [CACHE] [--random N] [--seed S] [--kinds K,...]
 *                [--every K]
 *
 * DOCUMENT is an evidence document (in-memory backend).  CACHE is its
 * trace-data.sqlite (a report directory works too); without it a cache is
 * written to a temporary file with store_write.  Runs the fixed parameter
 * sets of the query issue, each kind's own filters, then N (default 250)
 * random windows and filters, among them sort keys (valid and not),
 * request joins with every phase, fields, and several values per worker,
 * session, agent and name (some naming nothing, so notes are compared
 * too).  Prints TAP lines (one per kind and group) and exits 1 on any
 * difference.  --kinds runs only the kinds listed (comma-separated);
 * --every K only every K-th fixed set of each kind (a sample for the
 * sanitizer build, where each query costs several times more).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "query/dataset.h"
#include "base/err.h"
#include "base/vec.h"
#include "ingest/evidence.h"
#include "query/qorder.h"
#include "query/query.h"
#include "store/store_write.h"

struct ctx {
	struct dataset *mem, *sql;
	const json_t *cat;
	double duration;
	int failures;
	long compared;
	long every, fixed_seen; /* --every: run fixed set k when k % every == 0 */
	/* event/sample/point boundary times to pick windows from */
	double *times;
	size_t ntimes, captimes;
	unsigned long long rng;
};

static unsigned long long rnd(struct ctx *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static double rnd01(struct ctx *c)
{
	return (double)(rnd(c) >> 11) / 9007199254740992.0;
}

static void list_text(const char *name, const struct qlist *l, char *out,
                      size_t n)
{
	size_t len = 0;
	out[0] = 0;
	for (size_t k = 0; k < l->n && len < n; k++)
		len += (size_t)snprintf(out + len, n - len, "%s%s%s",
		                        k ? "," : " ", k ? "" : name, l->v[k]);
}

static void describe(const struct query_params *p, char *out, size_t n)
{
	char lists[6][256];
	size_t len;
	list_text("workers=", &p->worker_list, lists[0], sizeof lists[0]);
	list_text("sessions=", &p->session_list, lists[1], sizeof lists[1]);
	list_text("agents=", &p->agent_list, lists[2], sizeof lists[2]);
	list_text("names=", &p->name_list, lists[3], sizeof lists[3]);
	list_text("sort=", &p->sort, lists[4], sizeof lists[4]);
	list_text("fields=", &p->fields, lists[5], sizeof lists[5]);
	len = (size_t)snprintf(out, n, "phase=%s%s%s%s%s%s%s ",
	                       p->phase ? p->phase : "-", lists[0], lists[1],
	                       lists[2], lists[3], lists[4], lists[5]);
	if (len >= n)
		return;
	out += len;
	n -= len;
	snprintf(out, n,
	         "kind=%s start=%s%.17g end=%s%.17g req=%s session=%s agent=%s "
	         "worker=%s rank=%s%lld profile=%s%lld name=%s search=%s "
	         "ttft=%.17g offset=%lld limit=%lld points=%d group_by=%s "
	         "bucket=%s%.17g of=%s",
	         p->kind ? p->kind : "-", p->has_start ? "" : "~", p->start,
	         p->has_end ? "" : "~", p->end,
	         p->request_id ? p->request_id : "-",
	         p->session ? p->session : "-", p->agent ? p->agent : "-",
	         p->worker ? p->worker : "-", p->has_rank ? "" : "~",
	         (long long)p->rank, p->has_profile ? "" : "~",
	         (long long)p->profile, p->name ? p->name : "-",
	         p->search ? p->search : "-", p->min_ttft_ms,
	         (long long)p->offset, (long long)p->limit, p->points,
	         p->group_by ? p->group_by : "-", p->has_bucket ? "" : "~",
	         p->bucket, p->of ? p->of : "-");
}

/* Runs p on the document and on the cache with its build-time summaries
 * on and off; returns 1 when all three agree. */
static int compare(struct ctx *c, const struct query_params *p)
{
	static const char *const label[2] = {"sqlite", "sqlite without summaries"};
	struct buf a, b[2];
	struct err ea, eb[2];
	int ra, rb[2], same = 1;

	buf_init(&a, 0);
	err_clear(&ea);
	ra = query_run(c->mem, p, &a, &ea);
	for (int k = 0; k < 2; k++) {
		buf_init(&b[k], 0);
		err_clear(&eb[k]);
		dataset_set_summaries(c->sql, k == 0);
		rb[k] = query_run(c->sql, p, &b[k], &eb[k]);
		if (ra || rb[k])
			same &= ra == rb[k] && !strcmp(ea.msg, eb[k].msg);
		else
			same &= a.len == b[k].len && !memcmp(a.data, b[k].data, a.len);
	}
	dataset_set_summaries(c->sql, 1);
	c->compared++;
	if (!same) {
		char d[2048];
		describe(p, d, sizeof d);
		c->failures++;
		if (c->failures <= 10) {
			printf("# DIFF %s\n", d);
			printf("#  memory: %d %s %.600s\n", ra, ea.msg,
			       a.data ? a.data : "");
			for (int k = 0; k < 2; k++)
				printf("#  %s: %d %s %.600s\n", label[k], rb[k],
				       eb[k].msg, b[k].data ? b[k].data : "");
		}
	}
	buf_free(&a);
	buf_free(&b[0]);
	buf_free(&b[1]);
	return same;
}

static const char *pick_string(struct ctx *c, const char *array,
                               const char *key)
{
	const json_t *arr = json_object_get(c->cat, array);
	size_t n = json_array_size(arr);
	const json_t *v;
	if (!n)
		return NULL;
	v = json_array_get(arr, rnd(c) % n);
	v = key ? json_object_get(v, key) : v;
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *substring(struct ctx *c, const char *s)
{
	size_t n = strlen(s), a, len;
	char *r;
	if (!n)
		return strdup("");
	a = rnd(c) % n;
	len = 1 + rnd(c) % (n - a);
	/* keep UTF-8 boundaries: move a and len off continuation bytes */
	while (a > 0 && ((unsigned char)s[a] & 0xC0) == 0x80)
		a--;
	while (a + len < n && ((unsigned char)s[a + len] & 0xC0) == 0x80)
		len++;
	r = strndup(s + a, len);
	/* upper-case ASCII half the time: matching is case-insensitive */
	if (r && rnd(c) % 2)
		for (char *q = r; *q; q++)
			if (*q >= 'a' && *q <= 'z')
				*q = (char)(*q - 32);
	return r;
}

static double pick_time(struct ctx *c)
{
	unsigned long long r = rnd(c) % 4;
	double t;
	if (r < 2 && c->ntimes)
		t = c->times[rnd(c) % c->ntimes];
	else if (r == 2)
		t = rnd01(c) * c->duration;
	else
		t = floor(rnd01(c) * c->duration);
	if (rnd(c) % 5 == 0)
		t = nextafter(t, rnd(c) % 2 ? INFINITY : -INFINITY);
	return t;
}

static void add_time(struct ctx *c, double t)
{
	if (!(t >= 0 && t <= c->duration))
		return;
	if (vec_reserve(&c->times, &c->captimes, c->ntimes + 1, sizeof *c->times))
		return;
	c->times[c->ntimes++] = t;
}

static int collect_event(void *ctx, int64_t ordinal,
                         const struct row_event *row)
{
	struct ctx *c = ctx;
	if (ordinal % 7 == 0 || c->ntimes < 4096) {
		add_time(c, row->start);
		add_time(c, row->end);
	}
	return c->ntimes > 200000;
}

static int collect_point(void *ctx, int64_t ordinal,
                         const struct row_point *row)
{
	struct ctx *c = ctx;
	if (ordinal % 5 == 0)
		add_time(c, row->time);
	return c->ntimes > 200000;
}

static void collect_times(struct ctx *c)
{
	struct err e;
	size_t np = json_array_size(json_object_get(c->cat, "profiles"));
	size_t ns = json_array_size(json_object_get(c->cat, "metrics"));
	for (size_t k = 0; k < np; k++)
		dataset_events(c->mem, (int64_t)k, NULL, collect_event, c, &e);
	for (size_t k = 0; k < ns && k < 50; k++)
		dataset_points(c->mem, (int64_t)k, NULL, collect_point, c, &e);
}

/* Builds a cache for doc at out with store_write. */
static int build_cache(const char *doc, const char *out, struct err *e)
{
	struct store_writer *w = NULL;
	struct row_sink sink;
	json_t *cat = NULL;
	char gen[STORE_GENERATION_LEN + 1];
	int rc = store_write_open(out, &w, e);
	if (rc)
		return rc;
	store_write_sink(w, &sink);
	rc = evidence_read(doc, &sink, &cat, NULL, e);
	if (!rc)
		rc = store_generation_new(gen, e);
	if (!rc)
		rc = store_write_finish(w, cat, gen, e);
	if (!rc)
		rc = store_write_settle(w, 0, e);
	store_write_close(w);
	json_decref(cat);
	return rc;
}

static const char *const start_key[] = {"-start", "duration"};
static const char *const end_keys[] = {"-end", "name", "-ttft_ms", "id"};
static const char *const foo_key[] = {"foo"};
static const char *const field_names[] = {"name", "start", "id",
                                          "samples", "nope"};
static const char *const worker_pair[] = {"frontend", "decode-0"};

static void fixed_sets(struct ctx *c, const char *kind, int *ok)
{
	struct query_params p;
	const char *req = pick_string(c, "requests", "id");
	const struct qlist keys1 = {start_key, 2}, keys2 = {end_keys, 4},
	                   bad_key = {foo_key, 1}, fields = {field_names, 5},
	                   two_workers = {worker_pair, 2};

#define RUN(setup)                                                         \
	do {                                                               \
		if (c->fixed_seen++ % c->every)                            \
			break;                                             \
		query_params_init(&p);                                     \
		p.kind = kind;                                             \
		p.request_id = req;                                        \
		setup;                                                     \
		*ok &= compare(c, &p);                                     \
	} while (0)
	RUN((void)0);
	RUN(p.has_start = p.has_end = 1; p.start = 3; p.end = 4);
	RUN(p.offset = 1; p.limit = 1);
	RUN(p.limit = 0);
	RUN(p.has_start = p.has_end = 1; p.start = 9.100000001; p.end = 9.2);
	RUN(p.worker = "decode-0"; p.has_rank = 1; p.rank = 0);
	RUN(p.points = 1);
	RUN(p.points = 1; p.has_start = 1; p.start = c->duration / 2);
	RUN(p.has_profile = 1; p.profile = 0);
	RUN(p.has_profile = 1; p.profile = 1; p.limit = 1000);
	RUN(p.has_rank = 1; p.rank = 1);
	RUN(p.name = "ÜNICODE");
	RUN(p.name = "forward");
	RUN(p.name = "num_requests_running");
	RUN(p.search = "SESS");
	RUN(p.min_ttft_ms = 900);
	RUN(p.session = "sess-A");
	RUN(p.agent = "agent-A");
	RUN(p.worker = "frontend");
	RUN(p.has_start = 1; p.start = -1);
	RUN(p.limit = 1001);
	RUN(p.min_ttft_ms = NAN);
	RUN(p.request_id = "no-such-request");
	RUN(p.offset = 1000000; p.limit = 5);
	/* whole-run pages around the depth read in start order */
	RUN(p.offset = 37; p.limit = 1000);
	RUN(p.offset = 9990; p.limit = 20);
	RUN(p.offset = 8999; p.limit = 1000);
	/* analysis parameters: sort, joins, fields, several values, notes */
	RUN(p.sort = keys1; p.limit = 5);
	RUN(p.sort = keys2; p.offset = 1);
	RUN(p.sort = bad_key);
	RUN(p.fields = fields);
	RUN(p.worker_list = two_workers);
	RUN(p.worker = "no-such-worker");
	RUN(p.session = "no-such-session"; p.agent = "no-such-agent");
	RUN(p.name = "no-such-series"; p.has_profile = 1; p.profile = 99);
	RUN(p.phase = "prefill");
	RUN(p.phase = "decode"; p.fields = fields);
	RUN(p.phase = "whole"; p.sort = keys2);
	RUN(p.phase = "nope");
	RUN(p.phase = "prefill"; p.request_id = NULL);
	RUN(p.phase = "decode"; p.worker = "decode-0");
	RUN(p.request_id = "req-004"; p.phase = "prefill");
	/* grouping and time buckets */
	{
		static const char *const by[] = {
			"name", "worker", "profile", "tid", "session", "agent",
			"status", "client_kind", "nope"};
		static const char *const sources[] = {"requests", "nsys", "cpu",
		                                      "metrics"};
		for (size_t f = 0; f < sizeof by / sizeof *by; f++) {
			RUN(p.group_by = by[f]);
			RUN(p.group_by = by[f]; p.fields = fields);
			RUN(p.group_by = by[f]; p.has_start = p.has_end = 1;
			    p.start = 3; p.end = 4; p.limit = 2; p.offset = 1);
		}
		for (size_t o = 0; o < 4; o++) {
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 1);
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 0.3;
			    p.group_by = "name");
			RUN(p.of = sources[o]; p.has_bucket = 1;
			    p.bucket = c->duration / 7; p.has_start = 1;
			    p.start = 0.1; p.limit = 1; p.offset = 1);
			/* whole seconds: the build-time bins answer */
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 2;
			    p.has_start = 1; p.start = 1; p.worker = "decode-0");
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 10;
			    p.has_start = p.has_end = 1; p.start = 2;
			    p.end = floor(c->duration * 0.75));
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 3;
			    p.name = "e"; p.limit = 1000);
			RUN(p.of = sources[o]; p.has_bucket = 1; p.bucket = 1;
			    p.has_start = p.has_end = 1; p.start = 0;
			    p.end = c->duration * 0.5 + 0.25);
		}
		/* whole-run name groups come from the name summaries */
		RUN(p.group_by = "name"; p.sort = keys2; p.limit = 1000);
		RUN(p.group_by = "name"; p.worker = "decode-0"; p.offset = 1);
		RUN(p.group_by = "name"; p.has_start = 1;
		    p.start = c->duration / 3);
		RUN(p.has_bucket = 1; p.bucket = c->duration / 20000);
		RUN(p.has_bucket = 1; p.bucket = 0);
		RUN(p.has_bucket = 1; p.bucket = NAN);
		RUN(p.has_bucket = 1; p.bucket = 1; p.of = "nope");
		RUN(p.has_bucket = 1; p.bucket = 1; p.of = "nsys";
		    p.group_by = "tid");
		RUN(p.has_bucket = 1; p.bucket = 0.5; p.of = "nsys";
		    p.group_by = "name"; p.phase = "prefill");
		RUN(p.has_bucket = 1; p.bucket = 0.5; p.phase = "decode";
		    p.fields = fields);
	}
#undef RUN
}

/* Storage for the random lists of one query. */
struct lists {
	const char *workers[3], *sessions[3], *agents[3], *names[3];
	const char *sort[3], *fields[4];
	char sortbuf[3][32];
};

/* up to 3 values: picked ones, sometimes one that names nothing */
static size_t pick_values(struct ctx *c, const char **out, const char *arr,
                          const char *key, const char *missing)
{
	size_t n = 1 + rnd(c) % 3;
	for (size_t k = 0; k < n; k++) {
		const char *v = rnd(c) % 5 ? pick_string(c, arr, key) : missing;
		out[k] = v && *v ? v : missing;
	}
	return n;
}

static const char *const any_fields[] = {
	"id", "start", "end", "name", "worker", "samples", "ttft_ms",
	"profile", "symbol", "span_count", "mean", "requests", "no-such-key"};

/* Random sort keys, joins, fields and several values per filter. */
static void random_analysis(struct ctx *c, const char *kind,
                            struct query_params *p, struct lists *l)
{
	const char *const *keys = qorder_keys(kind);
	static const char *const phases[] = {"prefill", "decode", "whole",
	                                     NULL};
	if (rnd(c) % 4 == 0) {
		p->worker = NULL;
		p->worker_list.v = l->workers;
		p->worker_list.n = pick_values(c, l->workers, "workers", "id",
		                               "no-such-worker");
	}
	if (rnd(c) % 5 == 0) {
		p->session = NULL;
		p->session_list.v = l->sessions;
		p->session_list.n = pick_values(c, l->sessions, "sessions", "id",
		                                "no-such-session");
	}
	if (rnd(c) % 5 == 0) {
		p->agent_list.v = l->agents;
		p->agent_list.n = pick_values(c, l->agents, "requests", "agent",
		                              "no-such-agent");
	}
	if (rnd(c) % 5 == 0) {
		p->name = NULL;
		p->name_list.v = l->names;
		p->name_list.n = pick_values(c, l->names, "metrics", "name",
		                             "no-such-series");
	}
	if (keys && rnd(c) % 2) {
		size_t nk = 0;
		while (keys[nk])
			nk++;
		p->sort.v = l->sort;
		p->sort.n = 1 + rnd(c) % 3;
		for (size_t k = 0; k < p->sort.n; k++) {
			snprintf(l->sortbuf[k], sizeof l->sortbuf[k], "%s%s",
			         rnd(c) % 2 ? "-" : "",
			         rnd(c) % 40 ? keys[rnd(c) % nk] : "nokey");
			l->sort[k] = l->sortbuf[k];
		}
	}
	if (rnd(c) % 4 == 0) {
		p->fields.v = l->fields;
		p->fields.n = 1 + rnd(c) % 4;
		for (size_t k = 0; k < p->fields.n; k++)
			l->fields[k] =
				any_fields[rnd(c) % (sizeof any_fields /
				                     sizeof *any_fields)];
	}
	if (rnd(c) % 3 == 0 && strcmp(kind, "request") &&
	    strcmp(kind, "lifecycle")) {
		/* a join: no window or worker (else it is check 4's error) */
		p->request_id = rnd(c) % 30 ? pick_string(c, "requests", "id")
		                            : "no-such-request";
		p->phase = phases[rnd(c) % 4];
		if (rnd(c) % 10) {
			p->has_start = p->has_end = 0;
			p->worker = NULL;
			p->worker_list.n = 0;
		}
	}
}

/* Random --group-by / timeline parameters (valid most of the time); with
 * a group_by, sort keys are drawn from the group keys. */
static void random_grouping(struct ctx *c, struct query_params *p)
{
	static const char *const nsys_f[] = {"name", "worker", "profile", "tid"};
	static const char *const req_f[] = {"session", "agent", "worker",
	                                    "status", "client_kind"};
	static const char *const sources[] = {"requests", "nsys", "cpu",
	                                      "metrics"};
	int timeline = p->kind && !strcmp(p->kind, "timeline");

	/* group sort keys; "nokey" last, so only a draw at the end has it */
	static const char *const nsys_s[] = {
		"-clipped_total", "count", "-duration_max", "key", "-key",
		"duration_mean", "-duration_total", "-count", "nokey"};
	static const char *const req_s[] = {
		"-ttft_ms.p99", "count", "-input_tokens", "key", "output_tokens",
		"duration.p50", "-duration.max", "ttft_ms.mean", "-key",
		"-ttft_ms.min", "nokey"};

	if (p->kind && !strcmp(p->kind, "nsys") && rnd(c) % 2)
		p->group_by = nsys_f[rnd(c) % 4];
	if (p->kind && !strcmp(p->kind, "requests") && rnd(c) % 2)
		p->group_by = req_f[rnd(c) % 5];
	if (p->group_by && p->sort.n) {
		int req = !strcmp(p->kind, "requests");
		size_t nk = req ? sizeof req_s / sizeof *req_s
		                : sizeof nsys_s / sizeof *nsys_s;
		size_t at = rnd(c) % (nk - 1), n = 1 + rnd(c) % 3;
		p->sort.v = (req ? req_s : nsys_s) + at;
		p->sort.n = at + n <= nk ? n : nk - at;
	}
	if (!timeline)
		return;
	p->of = sources[rnd(c) % 4];
	if (!strcmp(p->of, "nsys") && rnd(c) % 2)
		p->group_by = "name";
	if (rnd(c) % 3 == 0) {
		/* buckets of whole seconds from a whole second: the build-time
		 * bins answer (unless the request joins); the end anywhere */
		static const double widths[] = {1, 2, 3, 5, 10, 20, 30, 60};
		double s = floor(rnd01(c) * c->duration * 0.9);
		double e = rnd(c) % 2 ? c->duration
		                      : s + rnd01(c) * (c->duration - s);
		if (rnd(c) % 3 == 0)
			e = floor(e);
		if (rnd(c) % 4 == 0) {
			s = 0;
			p->has_start = p->has_end = 0;
		} else {
			p->has_start = p->has_end = 1;
			p->start = s;
			p->end = e > s ? e : s;
		}
		p->has_bucket = 1;
		p->bucket = widths[rnd(c) % 8];
		return;
	}
	if (rnd(c) % 20) {
		double s = p->has_start ? p->start : 0;
		double e = p->has_end ? p->end : c->duration;
		unsigned long long r = rnd(c) % 4;
		p->has_bucket = 1;
		if (r == 0) /* a width that does not divide the window */
			p->bucket = (e - s) / (1 + (double)(rnd(c) % 3000)) * 1.0001;
		else if (r == 1)
			p->bucket = (e - s) / (double)(1 + rnd(c) % 40);
		else if (r == 2)
			p->bucket = 0.1 * (double)(1 + rnd(c) % 30);
		else
			p->bucket = rnd01(c) * (e - s) + 1e-9;
	}
}

static void random_set(struct ctx *c, const char *kind, int *ok)
{
	struct query_params p;
	struct lists lists;
	char *name = NULL, *search = NULL;
	const char *s;

	query_params_init(&p);
	p.kind = kind;
	if (rnd(c) % 8) {
		double a = pick_time(c), b = pick_time(c);
		if (a > b) {
			double t = a;
			a = b;
			b = t;
		}
		if (a == b)
			b = nextafter(b, INFINITY);
		if (rnd(c) % 6 == 0 && b > a + 1)
			b = a + 1;
		p.has_start = p.has_end = 1;
		p.start = a;
		p.end = b;
	}
	if (rnd(c) % 3 == 0)
		p.worker = pick_string(c, "workers", "id");
	if (rnd(c) % 3 == 0) {
		p.has_rank = 1;
		p.rank = (int64_t)(rnd(c) % 3);
	}
	if (rnd(c) % 4 == 0) {
		p.has_profile = 1;
		p.profile = (int64_t)(rnd(c) % 4);
	}
	if (rnd(c) % 3 == 0) {
		s = rnd(c) % 2 ? pick_string(c, "metrics", "name") : NULL;
		if (!s) {
			const json_t *pr = json_array_get(
				json_object_get(c->cat, "profiles"),
				rnd(c) % (json_array_size(json_object_get(
						  c->cat, "profiles")) +
				          1));
			const json_t *names = json_object_get(pr, "names");
			const json_t *v = json_array_get(
				names, rnd(c) % (json_array_size(names) + 1));
			if (json_is_string(v))
				s = json_string_value(v);
		}
		if (s)
			name = rnd(c) % 2 ? substring(c, s) : strdup(s);
		p.name = name;
	}
	if (rnd(c) % 4 == 0) {
		/* a part of any searched field: id, session, agent, a worker */
		static const char *const keys[] = {"id", "session", "agent"};
		unsigned f = (unsigned)(rnd(c) % 4);
		s = f < 3 ? pick_string(c, "requests", keys[f])
		          : pick_string(c, "workers", "id");
		if (s)
			search = substring(c, s);
		p.search = search;
	}
	if (rnd(c) % 5 == 0)
		p.session = pick_string(c, "sessions", "id");
	if (rnd(c) % 6 == 0)
		p.min_ttft_ms = rnd01(c) * 3000;
	if (rnd(c) % 3 == 0)
		p.offset = (int64_t)(rnd(c) % 20);
	if (rnd(c) % 3 == 0)
		p.limit = (int64_t)(rnd(c) % 30);
	p.points = rnd(c) % 2;
	if (!strcmp(kind, "request") || !strcmp(kind, "lifecycle"))
		p.request_id = pick_string(c, "requests", "id");
	random_analysis(c, kind, &p, &lists);
	random_grouping(c, &p);
	*ok &= compare(c, &p);
	free(name);
	free(search);
}

/* Whether name is an entry of the comma-separated list. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c;
	struct err e;
	const char *doc = NULL, *cache = NULL, *kinds = NULL;
	char tmpdir[] = "/tmp/query-parity-XXXXXX", tmpcache[64] = "";
	long nrandom = 250;
	int rc = 0;

	memset(&c, 0, sizeof c);
	c.rng = 0x9E3779B97F4A7C15ull;
	c.every = 1;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--random") && k + 1 < argc)
			nrandom = atol(argv[++k]);
		else if (!strcmp(argv[k], "--kinds") && k + 1 < argc)
			kinds = argv[++k];
		else if (!strcmp(argv[k], "--every") && k + 1 < argc)
			c.every = atol(argv[++k]);
		else if (!strcmp(argv[k], "--seed") && k + 1 < argc)
			c.rng = strtoull(argv[++k], NULL, 0) | 1;
		else if (!doc)
			doc = argv[k];
		else if (!cache)
			cache = argv[k];
	}
	if (c.every < 1)
		c.every = 1;
	if (!doc) {
		fputs("usage: query-parity DOCUMENT [CACHE] [--random N] "
		      "[--seed S] [--kinds K,...] [--every K]\n",
		      stderr);
		return 2;
	}
	err_clear(&e);
	if (!cache) {
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			return 1;
		}
		snprintf(tmpcache, sizeof tmpcache, "%s/trace-data.sqlite",
		         tmpdir);
		if (build_cache(doc, tmpcache, &e)) {
			printf("not ok - build a cache for %s: %s\n", doc, e.msg);
			unlink(tmpcache);
			rmdir(tmpdir);
			return 1;
		}
		cache = tmpcache;
	}
	if (dataset_open(doc, &c.mem, &e) || dataset_open(cache, &c.sql, &e)) {
		printf("not ok - open %s / %s: %s\n", doc, cache, e.msg);
		rc = 1;
		goto out;
	}
	c.cat = dataset_catalog(c.mem);
	c.duration = json_number_value(
		json_object_get(json_object_get(c.cat, "meta"), "duration"));
	collect_times(&c);
	for (size_t ki = 0; ki < query_kind_count; ki++) {
		const char *const *k = &query_kind_table[ki].name;
		int ok = 1;
		long before = c.compared;
		if (kinds && !listed(kinds, *k))
			continue;
		fixed_sets(&c, *k, &ok);
		printf("%s - parity %s: fixed sets (%ld queries)\n",
		       ok ? "ok" : "not ok", *k, c.compared - before);
		ok = 1;
		before = c.compared;
		for (long r = 0; r < nrandom; r++)
			random_set(&c, *k, &ok);
		printf("%s - parity %s: %ld random windows/filters\n",
		       ok ? "ok" : "not ok", *k, c.compared - before);
	}
	{
		int ok = 1;
		fixed_sets(&c, "no-such-kind", &ok);
		printf("%s - parity unknown kind\n", ok ? "ok" : "not ok");
	}
	printf("# %ld queries compared, %d differences\n", c.compared,
	       c.failures);
	rc = c.failures ? 1 : 0;
out:
	dataset_close(c.mem);
	dataset_close(c.sql);
	free(c.times);
	if (tmpcache[0]) {
		unlink(tmpcache);
		rmdir(tmpdir);
	}
	return rc;
}
