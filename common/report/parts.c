/* parts: the single-file page split by time (see parts.h). */
#include "report/parts.h"
#include "store/store_ext.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"
#include "base/vec.h"
#include "report/html.h"
#include "report/partcost.h"
#include "report/rowscan.h"
#include "report/shard.h"
#include "store/store_late.h"

#include <sqlite3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fixed text html.c wraps around each embedded shard's base64. */
#define SHARD_WRAP_BYTES \
	(sizeof "<script type=\"application/octet-stream\" id=\"dsight-shard-" - 1 + \
	 64 + 2 + sizeof "</script>\n" - 1)

static uint64_t embed_cost(const json_t *desc)
{
	uint64_t n = (uint64_t)json_integer_value(json_object_get(desc, "bytes"));
	return (n + 2) / 3 * 4 + SHARD_WRAP_BYTES;
}

/* Each chunk array of the core, in a fixed order: per profile events then
 * CPU samples, then per series points.  f(ctx, chunks, kind). */
enum { K_EVENTS, K_SAMPLES, K_POINTS };
typedef void (*chunks_fn)(void *ctx, const json_t *chunks, int kind);

static void each_chunks(const json_t *core, chunks_fn f, void *ctx)
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(core, "profiles"), i, v) {
		f(ctx, json_object_get(v, "event_chunks"), K_EVENTS);
		f(ctx, json_object_get(json_object_get(v, "cpu"), "chunks"), K_SAMPLES);
		f(ctx, json_object_get(v, "gpu_chunks"), K_EVENTS);
	}
	json_array_foreach(json_object_get(core, "metrics"), i, v)
		f(ctx, json_object_get(v, "chunks"), K_POINTS);
}

static void add_cost(void *ctx, const json_t *chunks, int kind)
{
	size_t i;
	json_t *d;
	(void)kind;
	json_array_foreach(chunks, i, d)
		*(uint64_t *)ctx += embed_cost(d);
}

uint64_t parts_page_bound(const json_t *core, uint64_t base)
{
	uint64_t total = base;
	size_t i, l;
	json_t *v, *lv;
	each_chunks(core, add_cost, &total);
	/* the GPU summaries a one-page report embeds (parts omit them) */
	json_array_foreach(json_object_get(core, "profiles"), i, v) {
		const json_t *gs = json_object_get(v, "gpu_summary");
		add_cost(&total, json_object_get(gs, "names"), K_EVENTS);
		add_cost(&total, json_object_get(gs, "bins"), K_EVENTS);
		json_array_foreach(json_object_get(gs, "levels"), l, lv)
			add_cost(&total, json_object_get(lv, "chunks"), K_EVENTS);
	}
	return total;
}

/* ---- slicing ----------------------------------------------------------- */

/* The rows' weight (partcost) in page bytes: ratio per byte of shard text. */
struct hist {
	const struct partcost *c;
	long end_ms;
	double ratio; /* page bytes per decoded byte */
};

static double slice_cost(const struct hist *h, long a, long b)
{
	return h->ratio * (double)partcost_slice(h->c, a, b);
}

/* Largest b in (a, end] with cost(a, b) <= limit (cost grows with b);
 * a + 1 when none. */
static long cut_after(const struct hist *h, long a, double limit)
{
	long lo = a + 1, hi = h->end_ms;
	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2;
		if (slice_cost(h, a, mid) <= limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ---- routing rows to the parts' shard writers ---------------------------- */

struct route {
	sqlite3_stmt *carried; /* the points at a series' last time before ?2 */
	int64_t series;        /* the series being routed, -1 before any */
	struct shard_writer **w;
	const long *cuts; /* nparts + 1 */
	size_t nparts;
	uint64_t (*n)[SHARD_KINDS]; /* per part rows by kind */
};

/* First part whose closed slice reaches t (t <= its end). */
static size_t first_part(const struct route *r, double t)
{
	size_t lo = 0, hi = r->nparts - 1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t <= (double)r->cuts[mid + 1] / 1000.0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Last part whose closed slice starts at or before t. */
static size_t last_part(const struct route *r, double t)
{
	size_t lo = 0, hi = r->nparts - 1;
	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;
		if ((double)r->cuts[mid] / 1000.0 <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * A series' value carried into part k > 0: the points at its latest time
 * before t_k, so a setting's value at any window start inside the slice is
 * exact.  Added ahead of the series' rows in the slice (they are earlier).
 */
static int add_carried(struct route *r, int64_t series, struct err *e)
{
	for (size_t k = 1; k < r->nparts; k++) {
		sqlite3_stmt *st = r->carried;
		int s;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, series);
		sqlite3_bind_double(st, 2, (double)r->cuts[k] / 1000.0);
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			double t = sqlite3_column_double(st, 0);
			int rc = shard_writer_add_text(
				r->w[k], SHARD_POINTS, series, t, t,
				(const char *)sqlite3_column_text(st, 1),
				(size_t)sqlite3_column_bytes(st, 1), e);
			if (rc)
				return rc;
			r->n[k][SHARD_POINTS]++;
		}
		if (s != SQLITE_DONE)
			return err_set(e, ERR_DATA, "Cannot read the staged points: %s",
			               sqlite3_errmsg(sqlite3_db_handle(st)));
	}
	return 0;
}

static int route_row(void *ctx, enum shard_kind kind, int64_t index,
                     double start, double end, const char *text, size_t len,
                     struct err *e)
{
	struct route *r = ctx;
	if (kind == SHARD_POINTS && index != r->series) {
		int rc = add_carried(r, index, e);
		if (rc)
			return rc;
		r->series = index;
	}
	size_t k0 = first_part(r, start), k1 = last_part(r, end);
	for (size_t k = k0; k <= k1; k++) {
		int rc = shard_writer_add_text(r->w[k], kind, index, start, end,
		                               text, len, e);
		if (rc)
			return rc;
		r->n[k][kind]++;
	}
	return 0;
}

/* ---- one part ---------------------------------------------------------- */

/* The part's core: a new object sharing core's unchanged values, with the
 * part writer's chunks, its requests and their sessions. */
static json_t *part_core(const json_t *core, const struct shard_writer *w,
                         double a, double b, double t1, size_t k, size_t nparts,
                         uint64_t *nrequests)
{
	json_t *root = json_copy((json_t *)core), *v, *arr, *sess;
	json_t *keep = json_object();
	size_t i;

	if (!root || !keep)
		goto nomem;
	arr = json_array();
	json_array_foreach(json_object_get(core, "profiles"), i, v) {
		json_t *p = json_copy(v), *cpu = json_object_get(v, "cpu");
		json_object_del(p, "nvtx_summary"); /* its shards are the page's */
		json_object_del(p, "gpu_summary"); /* whole-run: the page's */
		if (json_is_object(json_object_get(v, "gpu")))
			json_object_set_new(p, "gpu_chunks",
			                    shard_writer_descs_json(w, SHARD_GPU, (int64_t)i));
		json_object_set_new(p, "event_chunks",
		                    shard_writer_descs_json(w, SHARD_EVENTS, (int64_t)i));
		if (json_is_object(cpu)) {
			json_t *cc = json_copy(cpu);
			json_object_del(cc, "stack_sums"); /* the page's */
			json_object_set_new(cc, "chunks",
			                    shard_writer_descs_json(w, SHARD_SAMPLES, (int64_t)i));
			json_object_set_new(p, "cpu", cc);
		}
		json_array_append_new(arr, p);
	}
	if (json_object_get(core, "profiles"))
		json_object_set_new(root, "profiles", arr);
	else
		json_decref(arr);
	arr = json_array();
	json_array_foreach(json_object_get(core, "metrics"), i, v) {
		json_t *s = json_copy(v);
		json_object_del(s, "summary_chunks"); /* the page's metric summaries */
		json_object_del(s, "fine_group");
		json_object_set_new(s, "chunks",
		                    shard_writer_descs_json(w, SHARD_POINTS, (int64_t)i));
		json_array_append_new(arr, s);
	}
	json_object_del(root, "metric_summary");
	if (json_object_get(core, "metrics"))
		json_object_set_new(root, "metrics", arr);
	else
		json_decref(arr);

	/* requests by start: [a, b), the first part from -inf, the last to +inf */
	arr = json_array();
	json_array_foreach(json_object_get(core, "requests"), i, v) {
		double s = json_number_value(json_object_get(v, "start"));
		if ((k > 0 && s < a) || (k + 1 < nparts && s >= b))
			continue;
		json_array_append(arr, v);
		const char *sid = json_string_value(json_object_get(v, "session"));
		if (sid)
			json_object_set_new(keep, sid, json_true());
	}
	*nrequests = json_array_size(arr);
	if (json_object_get(core, "requests"))
		json_object_set_new(root, "requests", arr);
	else
		json_decref(arr);
	sess = json_object_get(core, "sessions");
	if (json_is_array(sess)) {
		arr = json_array();
		json_array_foreach(sess, i, v) {
			const char *sid = json_string_value(json_object_get(v, "id"));
			if (sid && json_object_get(keep, sid))
				json_array_append(arr, v);
		}
		json_object_set_new(root, "sessions", arr);
	}

	json_t *delivery = json_copy(json_object_get(core, "delivery"));
	json_t *part = json_pack("{s:I, s:I, s:[f,f], s:s}", "index", (json_int_t)k + 1,
	                         "count", (json_int_t)nparts, "range", a, t1,
	                         "list", "index.html");
	if (!delivery || !part)
		goto nomem_part;
	json_object_set_new(delivery, "part", part);
	json_object_set_new(root, "delivery", delivery);
	json_decref(keep);
	return root;
nomem_part:
	json_decref(delivery);
	json_decref(part);
nomem:
	json_decref(keep);
	json_decref(root);
	return NULL;
}

/* ---- the list page and parts.json --------------------------------------- */

static void html_text(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': buf_puts(b, "&amp;"); break;
		case '<': buf_puts(b, "&lt;"); break;
		case '>': buf_puts(b, "&gt;"); break;
		case '"': buf_puts(b, "&quot;"); break;
		default: buf_putc(b, *s);
		}
	}
}

static int write_buf(const char *path, const struct buf *b, struct err *e)
{
	FILE *f;
	if (b->failed)
		return err_set(e, ERR_NOMEM, "Out of memory writing %s", path);
	f = fopen(path, "wb");
	if (!f)
		return err_sys(e, ERR_DATA, "Cannot create %s", path);
	size_t n = fwrite(b->data, 1, b->len, f);
	if (fclose(f) != 0 || n != b->len)
		return err_sys(e, ERR_DATA, "Cannot write %s", path);
	return 0;
}

static int write_list(const char *dir, const json_t *core, const json_t *parts,
                      uint64_t *bytes, struct err *e)
{
	struct buf b;
	char path[4096];
	size_t i;
	json_t *p;
	const char *job = json_string_value(json_object_get(json_object_get(core, "meta"), "job"));
	int rc;

	buf_init(&b, 0);
	buf_puts(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	html_text(&b, job ? job : "dsight report");
	buf_puts(&b, " — parts</title>\n<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}"
	             "table{border-collapse:collapse}td,th{padding:4px 12px;border-bottom:1px solid #ddd;text-align:right}"
	             "td:first-child,th:first-child{text-align:left}</style></head>\n<body>\n<h1>");
	html_text(&b, job ? job : "dsight report");
	buf_printf(&b, "</h1>\n<p id=\"dsight-parts-note\">This single-file report is split by time into %zu "
	           "self-contained parts (each opens on its own, also from a local file). "
	           "A part answers exactly for the requests that start in its slice and "
	           "for every range, sample, point and GPU row that touches it.</p>\n"
	           "<table id=\"dsight-parts\">\n<tr><th>Part</th><th>Slice (s)</th><th>Size (MB)</th>"
	           "<th>Requests</th><th>NVTX ranges</th><th>CPU samples</th><th>Metric points</th>"
	           "<th>GPU rows</th></tr>\n",
	           json_array_size(parts));
	json_array_foreach(parts, i, p) {
		const char *file = json_string_value(json_object_get(p, "file"));
		json_t *r = json_object_get(p, "range");
		buf_puts(&b, "<tr><td><a href=\"");
		html_text(&b, file);
		buf_puts(&b, "\">");
		html_text(&b, file);
		buf_printf(&b, "</a></td><td>%.3f – %.3f</td><td>%.2f</td><td>%lld</td>"
		           "<td>%lld</td><td>%lld</td><td>%lld</td><td>%lld</td></tr>\n",
		           json_number_value(json_array_get(r, 0)),
		           json_number_value(json_array_get(r, 1)),
		           (double)json_integer_value(json_object_get(p, "bytes")) / 1e6,
		           (long long)json_integer_value(json_object_get(p, "requests")),
		           (long long)json_integer_value(json_object_get(p, "events")),
		           (long long)json_integer_value(json_object_get(p, "samples")),
		           (long long)json_integer_value(json_object_get(p, "points")),
		           (long long)json_integer_value(json_object_get(p, "gpu")));
	}
	buf_puts(&b, "</table>\n<p>parts.json lists the same slices; trace-data.json.gz "
	             "holds the whole document for <code>dsight query</code>.</p>\n</body></html>\n");
	snprintf(path, sizeof path, "%s/index.html", dir);
	rc = write_buf(path, &b, e);
	*bytes = b.len;
	buf_free(&b);
	return rc;
}

static int write_parts_json(const char *dir, json_t *parts, struct err *e)
{
	struct buf b;
	char path[4096];
	json_t *doc = json_pack("{s:i, s:O}", "version", 1, "parts", parts);
	int rc;

	if (!doc)
		return err_set(e, ERR_NOMEM, "Out of memory writing parts.json");
	buf_init(&b, 0);
	jsonout_tree(&b, doc, 1);
	buf_putc(&b, '\n');
	json_decref(doc);
	snprintf(path, sizeof path, "%s/parts.json", dir);
	rc = write_buf(path, &b, e);
	buf_free(&b);
	return rc;
}

/* ---- driver ------------------------------------------------------------ */

/* Page bytes per decoded shard byte, from the one-page shards. */
static void add_ratio(void *ctx, const json_t *chunks, int kind)
{
	double *t = ctx;
	size_t i;
	json_t *d;
	(void)kind;
	json_array_foreach(chunks, i, d) {
		t[0] += (double)embed_cost(d);
		t[1] += (double)json_integer_value(json_object_get(d, "decoded_bytes"));
	}
}

/* Chooses the cuts: cuts[0] = 0 < ... < cuts[n] = h->end_ms. */
static int choose_cuts(const struct hist *h, double limit, long **out,
                       size_t *n, struct err *e)
{
	long *cuts = NULL;
	size_t ncuts = 0, cap = 0;

	for (long a = 0;;) {
		if (vec_reserve(&cuts, &cap, ncuts + 2, sizeof *cuts)) {
			free(cuts);
			return err_set(e, ERR_NOMEM, "Out of memory slicing the parts");
		}
		cuts[ncuts++] = a;
		if (a >= h->end_ms)
			break;
		/* a millisecond alone over the limit: its own part, extended
		 * while that costs nothing more (the build warns) */
		double one = slice_cost(h, a, a + 1);
		a = cut_after(h, a, one > limit ? one : limit);
	}
	*out = cuts;
	*n = ncuts;
	return 0;
}

/* The split being written: the job, its cuts and what is listed so far
 * (list and r are filled part by part). */
struct split {
	const struct parts_job *job;
	sqlite3_stmt *count; /* requests starting in a slice, or NULL */
	const long *cuts;    /* nparts + 1 slice bounds in milliseconds */
	size_t nparts;
	json_t *list;
	struct parts_result *r;
};

/* Writes part k (its shards in w, its row counts n) and lists it. */
static int write_part(struct split *sp, size_t k, const struct shard_writer *w,
                      const uint64_t n[SHARD_KINDS], struct err *e)
{
	const struct parts_job *job = sp->job;
	const long *cuts = sp->cuts;
	size_t nparts = sp->nparts;
	sqlite3_stmt *count = sp->count;
	struct parts_result *r = sp->r;
	uint64_t budget = job->budget;
	struct html_stats hs;
	uint64_t nreq = 0;
	char file[32], path[4096];
	double t0 = (double)cuts[k] / 1000.0;
	double t1 = k + 1 == nparts ? job->duration
	                            : (double)cuts[k + 1] / 1000.0;
	json_t *pc = part_core(job->core, w, t0, (double)cuts[k + 1] / 1000.0,
	                       t1, k, nparts, &nreq);
	int rc;

	if (!pc)
		return err_set(e, ERR_NOMEM, "Out of memory building part %zu", k + 1);
	if (count) {
		/* collections streamed from the store: every request is in the
		 * page; count those starting in the slice */
		sqlite3_reset(count);
		sqlite3_bind_int(count, 1, k == 0);
		sqlite3_bind_double(count, 2, t0);
		sqlite3_bind_int(count, 3, k + 1 == nparts);
		sqlite3_bind_double(count, 4, (double)cuts[k + 1] / 1000.0);
		if (sqlite3_step(count) == SQLITE_ROW)
			nreq = (uint64_t)sqlite3_column_int64(count, 0);
	}
	snprintf(file, sizeof file, "part-%03zu.html", k + 1);
	snprintf(path, sizeof path, "%s/%s", job->dir, file);
	rc = html_write_from(path, pc, job->shard_dir, job->sqlite_path, &hs, e);
	json_decref(pc);
	if (rc)
		return rc;
	json_array_append_new(sp->list, json_pack(
		"{s:s, s:[f,f], s:I, s:I, s:I, s:I, s:I, s:I}", "file", file,
		"range", t0, t1, "bytes", (json_int_t)hs.bytes,
		"requests", (json_int_t)nreq, "events", (json_int_t)n[SHARD_EVENTS],
		"samples", (json_int_t)n[SHARD_SAMPLES], "points", (json_int_t)n[SHARD_POINTS],
		"gpu", (json_int_t)n[SHARD_GPU]));
	if (hs.bytes > r->max_bytes)
		r->max_bytes = hs.bytes;
	if (hs.bytes > budget && r->oversized++ == 0)
		snprintf(r->warning, sizeof r->warning,
		         "%s is %.1f MB, over the --max-part-size-mb budget of "
		         "%.1f MB: its slice [%.3f, %.3f] s cannot be cut finer "
		         "(one millisecond holds more than the budget); it is "
		         "kept whole in a part of its own", file,
		         (double)hs.bytes / 1e6, (double)budget / 1e6, t0, t1);
	return 0;
}

int parts_write(const struct parts_job *job, struct parts_result *r,
                struct err *e)
{
	const json_t *core = job->core;
	const char *sqlite_path = job->sqlite_path;
	uint64_t base = job->base, budget = job->budget;
	double duration = job->duration;
	const cancel_flag *cancel = job->cancel;
	struct hist h = {0};
	struct partcost *own = NULL;
	struct route rt = {0};
	struct split sp = {0};
	sqlite3 *db = NULL;
	sqlite3_stmt *count = NULL;
	long *cuts = NULL;
	size_t ncuts = 0, nparts = 0;
	json_t *list = NULL;
	double ratio[2] = {0, 0};
	int rc = 0;

	memset(r, 0, sizeof *r);
	if (budget == 0 || parts_page_bound(core, base) <= budget)
		return 0;
	if (!(duration > 0) || !isfinite(duration) || duration > 1e8)
		return err_set(e, ERR_DATA, "meta.duration: expected a finite number > 0");
	if (base >= budget) {
		char want[JSONOUT_REAL_MAX];
		jsonout_format_real(want, (double)budget / 1e6);
		return err_set(e, ERR_USAGE,
		               "--max-part-size-mb %s is below the %.3f MB of viewer "
		               "and catalog that every part holds; raise it or pass 0",
		               want, (double)base / 1e6);
	}
	if (store_late_open_reader(sqlite_path, &db) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot open %s: %s", sqlite_path,
		             db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	cancel_sqlite(db, cancel); /* the scans stop with SQLITE_INTERRUPT */
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM " STORE_EXT_REQUESTS
	                       " WHERE (?1 OR start >= ?2) AND (?3 OR start < ?4)",
	                       -1, &count, NULL) != SQLITE_OK)
		count = NULL; /* a store without streamed collections */
	each_chunks(core, add_ratio, ratio);
	h.ratio = ratio[1] > 0 ? ratio[0] / ratio[1] : 1.0;
	h.c = job->cost;
	if (!h.c && (rc = partcost_scan(sqlite_path, core, duration, cancel,
	                                &own, e)))
		goto out;
	if (own)
		h.c = own;
	h.end_ms = h.c->end_ms;
	/* 10% of the rows' share for shard framing and compression that varies
	 * along the run (smaller shards compress less) */
	if ((rc = choose_cuts(&h, ((double)budget - (double)base) * 0.90, &cuts,
	                      &ncuts, e)))
		goto out;
	nparts = ncuts - 1;
	rt.cuts = cuts;
	rt.nparts = nparts;
	rt.series = -1;
	if (sqlite3_prepare_v2(db, "SELECT time, payload FROM points WHERE series = ?1"
	                       " AND time = (SELECT max(time) FROM points"
	                       " WHERE series = ?1 AND time < ?2) ORDER BY ordinal",
	                       -1, &rt.carried, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot read the staged points: %s",
		             sqlite3_errmsg(db));
		goto out;
	}
	rt.w = calloc(nparts, sizeof *rt.w);
	rt.n = calloc(nparts, sizeof *rt.n);
	if (!rt.w || !rt.n) {
		rc = err_set(e, ERR_NOMEM, "Out of memory slicing the parts");
		goto out;
	}
	for (size_t k = 0; k < nparts; k++) {
		struct shard_writer_opts o = {0};
		o.dir = job->shard_dir;
		if ((rc = shard_writer_open(&rt.w[k], &o, e)))
			goto out;
	}
	if ((rc = rowscan_all(db, core, route_row, &rt, e)))
		goto out;
	list = json_array();
	sp.job = job;
	sp.count = count;
	sp.cuts = cuts;
	sp.nparts = nparts;
	sp.list = list;
	sp.r = r;
	for (size_t k = 0; k < nparts; k++)
		if ((cancel_requested(cancel) &&
		     (rc = err_set(e, ERR_DATA, "interrupted"))) ||
		    (rc = shard_writer_finish(rt.w[k], e)) ||
		    (rc = write_part(&sp, k, rt.w[k], rt.n[k], e)))
			goto out;
	r->parts = nparts;
	if ((rc = write_parts_json(job->dir, list, e)) ||
	    (rc = write_list(job->dir, core, list, &r->index_bytes, e)))
		goto out;
out:
	for (size_t k = 0; rt.w && k < nparts; k++)
		shard_writer_free(rt.w[k]);
	free(rt.w);
	free(rt.n);
	sqlite3_finalize(rt.carried);
	sqlite3_finalize(count);
	json_decref(list);
	free(cuts);
	partcost_free(own);
	sqlite3_close(db);
	return rc;
}
