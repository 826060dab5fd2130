/* query_timeline: the timeline kind: time buckets over the window of
 * requests, NVTX ranges, CPU samples or metric points
 * (doc/query-semantics.md "timeline"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/text.h"
#include "query/qbucket.h"
#include "query/qstat.h"
#include "query/qtgpu.h"
#include "query/qjoin.h"
#include "query/qkinds.h"
#include "query/qmgroup.h"
#include "query/qrange.h"
#include "query/qtline.h"
#include "query/qtmetrics.h"
#include "query/qtsort.h"

static const char *const sources[] = {"requests", "nsys", "cpu", "metrics",
                                      "gpu", NULL};

int q_timeline_check(struct qctx *q)
{
	const struct query_params *p = q->p;
	const char *of = p->of ? p->of : "requests";
	int rc, known = 0;

	if (!p->has_bucket || !isfinite(p->bucket) || !(p->bucket > 0))
		return err_set(q->e, ERR_USAGE,
		               "timeline needs --bucket SECONDS > 0");
	/* without a join the window is known: count the buckets now */
	if (!(p->request_id && qjoin_applies(q->kind)) &&
	    (rc = q_timeline_count(q)))
		return rc;
	for (size_t k = 0; sources[k]; k++)
		known |= !strcmp(sources[k], of);
	if (!known)
		return err_set(q->e, ERR_USAGE,
		               "Unknown timeline source '%s'; choose from "
		               "requests, nsys, cpu, metrics, gpu",
		               of);
	return 0;
}

int q_timeline_count(struct qctx *q)
{
	struct qbucket bk;
	int rc = qbucket_init(&bk, q->start, q->end, q->p->bucket);
	qbucket_free(&bk);
	if (rc == 1)
		return err_set(q->e, ERR_USAGE,
		               "Too many buckets; the most is %d", QBUCKET_MAX);
	if (rc)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	return 0;
}

/* ---- requests ---- */

static int number(const json_t *r, const char *key, double *out)
{
	const json_t *v = json_object_get(r, key);
	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}

/* The per-bucket counts and sums one pass over the requests fills. */
struct rtally {
	const struct qbucket *bk;
	int64_t *arr, *done, *first;
	struct qsum *flight, *ttft;
	double *nttft;
};

/* q_each_request's fn: request r into the buckets, then let go of it. */
static int tally_request(void *ctx, const json_t *r, size_t order)
{
	struct rtally *t = ctx;
	const struct qbucket *bk = t->bk;
	size_t n = bk->n;
	double a, z, f, ms;
	long i;

	(void)order;
	if (!number(r, "start", &a) || !number(r, "end", &z))
		return 0;
	if ((i = qbucket_find(bk, a)) >= 0) {
		t->arr[i]++;
		if (number(r, "ttft_ms", &ms)) {
			t->nttft[i] += 1;
			qsum_add(&t->ttft[i], ms);
		}
	}
	if ((i = qbucket_find(bk, z)) >= 0)
		t->done[i]++;
	if (number(r, "first", &f) && (i = qbucket_find(bk, f)) >= 0)
		t->first[i]++;
	for (size_t j = qbucket_first_overlap(bk, a, z);
	     j < n && bk->b[j] <= z; j++) {
		double lo = a > bk->b[j] ? a : bk->b[j];
		double hi = z < bk->b[j + 1] ? z : bk->b[j + 1];
		if (hi > lo) /* a request never counts negative time */
			qsum_add(&t->flight[j], hi - lo);
	}
	return 0;
}

static int requests_series(struct qctx *q, const struct qbucket *bk)
{
	size_t n = bk->n, nr = 0;
	int64_t *cnt = calloc(3 * (n ? n : 1), sizeof *cnt);
	struct rtally t = {bk, cnt, cnt + n, cnt + 2 * n, qtline_new_sums(n),
	                   qtline_new_sums(n), calloc(n ? n : 1, sizeof(double))};
	double *len = calloc(n ? n : 1, sizeof *len);
	int rc = 0;

	if (!cnt || !t.flight || !t.ttft || !len || !t.nttft)
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	/* one pass, each request folded as it comes: a million requests are
	 * never all in memory */
	if (!rc)
		rc = q_each_request(q, STORE_TIMES, tally_request, &t, &nr);
	if (!rc && (qtline_sums_failed(t.flight, n) ||
	            qtline_sums_failed(t.ttft, n)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		struct qitem it;
		for (size_t i = 0; i < n; i++)
			len[i] = qbucket_length(bk, i);
		buf_puts(q->out, "{\"key\":null");
		qtline_series_open(q, &it);
		qtline_int_array(&it, "arrivals", t.arr, n);
		qtline_int_array(&it, "completions", t.done, n);
		qtline_int_array(&it, "first_tokens", t.first, n);
		qtline_quotient_array(&it, "in_flight", t.flight, len, n);
		qtline_quotient_array(&it, "ttft_ms_mean", t.ttft, t.nttft, n);
		qtline_series_close(&it);
	}
	free(cnt);
	qtline_free_sums(t.flight, n);
	qtline_free_sums(t.ttft, n);
	free(len);
	free(t.nttft);
	return rc;
}

/* ---- nsys ---- */

/* Per-bucket cells of one or more series. */
struct cells {
	const struct qbucket *bk;
	int64_t *count;    /* nseries * n */
	struct qsum *active;
	size_t nseries;
	/* the current profile: name index -> series slot (-1: none); NULL =
	 * every row goes to slot 0 */
	const int64_t *slot_of_name;
	size_t nnames;
	const unsigned char *name_ok; /* NULL: no name filter */
	const struct qbucket_bins *bins; /* the build-time bins being read */
	/* the edge scans around them: 1 keeps the rows starting before
	 * edge_at, 2 those starting at or after it, 0 all */
	int edge;
	double edge_at;
};

/* Adds range row to the buckets it overlaps in series slot. */
static void add_range(struct cells *c, size_t slot,
                      const struct row_event *row)
{
	const struct qbucket *bk = c->bk;
	size_t n = bk->n;
	for (size_t j = qbucket_first_overlap(bk, row->start, row->end);
	     j < n && bk->b[j] <= row->end; j++) {
		double lo = row->start > bk->b[j] ? row->start : bk->b[j];
		double hi = row->end < bk->b[j + 1] ? row->end : bk->b[j + 1];
		c->count[slot * n + j]++;
		qsum_add(&c->active[slot * n + j], hi - lo);
	}
}

static int on_range(void *ctx, int64_t ordinal,
                    const struct row_event *row)
{
	struct cells *c = ctx;
	int in_dict = row->name >= 0 && (uint64_t)row->name < c->nnames;
	size_t slot = 0;

	(void)ordinal;
	if ((c->edge == 1 && !(row->start < c->edge_at)) ||
	    (c->edge == 2 && !(row->start >= c->edge_at)))
		return 0;
	if (c->name_ok && (!in_dict || !c->name_ok[row->name]))
		return 0;
	if (c->slot_of_name) {
		int64_t s = in_dict ? c->slot_of_name[row->name]
		                    : c->slot_of_name[c->nnames];
		if (s < 0)
			return 0;
		slot = (size_t)s;
	}
	add_range(c, slot, row);
	return 0;
}

/* q_nsys_groups_hook: a matching row of group (= its cells' slot). */
static int on_grouped_range(void *ctx, int64_t group,
                            const struct row_event *row)
{
	struct cells *c = ctx;
	if (group < 0 || (size_t)group >= c->nseries)
		return 0; /* cannot happen: slots cover every possible name */
	add_range(c, (size_t)group, row);
	return 0;
}

static void emit_cells(struct qctx *q, const struct cells *c, size_t slot)
{
	size_t n = c->bk->n;
	struct qitem it;
	qtline_series_open(q, &it);
	qtline_int_array(&it, "overlapping", &c->count[slot * n], n);
	qtline_sum_array(&it, "active", &c->active[slot * n], n);
	qtline_series_close(&it);
}

/* The contained ranges of one bin (of one name, or of every name: -2),
 * into the bucket holding the bin: each overlaps that bucket only, with
 * its whole duration inside (store/store_sumnames.h). */
static int on_range_bin(void *ctx, int64_t bin, int64_t name, int64_t count,
                        const double *dur, size_t ndur)
{
	struct cells *c = ctx;
	size_t i = qbucket_bin_bucket(c->bk, c->bins, bin), n = c->bk->n;
	int in_dict = name >= 0 && (uint64_t)name < c->nnames;
	int64_t slot = 0;

	if (c->name_ok && name != -2 && (!in_dict || !c->name_ok[name]))
		return 0;
	if (c->slot_of_name &&
	    (slot = c->slot_of_name[in_dict ? (size_t)name : c->nnames]) < 0)
		return 0;
	c->count[(size_t)slot * n + i] += count;
	for (size_t k = 0; k < ndur; k++)
		qsum_add(&c->active[(size_t)slot * n + i], dur[k]);
	return 0;
}

/* A range the bins list (it touches a bin edge): added as a row. */
static int on_range_cross(void *ctx, int64_t name, double start, double end)
{
	struct row_event row = row_event_of(name, start, end);

	return on_range(ctx, -1, &row);
}

/* One profile's series from the build-time bins when the buckets are made
 * of whole bins: the bins inside [start, rest), the crossing ranges one by
 * one, and scans of [start, start] for the ranges starting before the
 * window and of [rest, end] for those starting at or after rest: every
 * overlapping range is counted once, and the sums are exact.  *have 0 when
 * the buckets do not align or the profile has no bins (scan instead). */
static int nsys_binned(struct qctx *q, int64_t profile, struct cells *c,
                       int *have)
{
	static const double widths[] = {10.0, 1.0};
	struct qbucket_bins pl;
	int rc = 0;

	*have = 0;
	for (size_t k = 0; !rc && !*have && !qrange_on(q) && k < 2; k++)
		if (qbucket_bins(c->bk, widths[k], &pl)) {
			const struct store_sumnames_visit v = {
				NULL, on_range_bin, on_range_cross, c};
			const struct row_bins b = {profile, widths[k], pl.i0,
			                           pl.i1};
			c->bins = &pl;
			rc = dataset_range_bins(q->ds, &b,
			                        c->name_ok || c->slot_of_name, have,
			                        &v, q->e);
		}
	if (!rc && *have) {
		struct row_window left = {q->start, q->start, 0};
		struct row_window right = {pl.rest, q->end, 0};
		c->edge = 1;
		c->edge_at = q->start;
		rc = dataset_events(q->ds, profile, &left, on_range, c, q->e);
		c->edge = 2;
		c->edge_at = pl.rest;
		if (!rc)
			rc = dataset_events(q->ds, profile, &right, on_range, c,
			                    q->e);
	}
	c->edge = 0;
	c->bins = NULL;
	return rc;
}

static int cells_init(struct qctx *q, struct cells *c,
                      const struct qbucket *bk, size_t nseries)
{
	memset(c, 0, sizeof *c);
	c->bk = bk;
	c->nseries = nseries;
	c->count = calloc(nseries * bk->n + 1, sizeof *c->count);
	c->active = qtline_new_sums(nseries * bk->n);
	if (!c->count || !c->active)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	return 0;
}

static void cells_free(struct cells *c)
{
	free(c->count);
	qtline_free_sums(c->active, c->nseries * c->bk->n);
}


/* One series per selected profile. */
static int nsys_by_profile(struct qctx *q, const struct qbucket *bk,
                           size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct row_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	size_t *idx = NULL, n = 0, from, to, nn = 0;
	struct q_needle *nd = NULL;
	int rc = q_name_needles(q, &nd, &nn);

	if (!rc)
		rc = q_select_profiles(q, &idx, &n);
	if (!rc)
		qtline_series_head(q, n, total);
	q_page(q, n, &from, &to);
	for (size_t k = from; !rc && k < to; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		const json_t *names = json_object_get(pr, "names");
		unsigned char *ok = NULL;
		struct cells c;
		rc = cells_init(q, &c, bk, 1);
		c.nnames = json_array_size(names);
		if (!rc && nd && !(ok = q_match_names(names, nd, nn)))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		c.name_ok = ok;
		int have = 0;
		if (!rc)
			rc = nsys_binned(q, (int64_t)idx[k], &c, &have);
		if (!rc && !have)
			rc = qrange_events(q, (int64_t)idx[k], &w, on_range,
			                   &c);
		if (!rc && qtline_sums_failed(c.active, bk->n))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			jsonout_int(q->out, q_id(pr, idx[k]));
			emit_cells(q, &c, 0);
		}
		free(ok);
		cells_free(&c);
	}
	free(idx);
	q_name_needles_free(nd, nn);
	return rc;
}

/* Cells for at most this many (series x bucket) at once: a page of names
 * over many buckets is computed in chunks of names. */
#define CELLS_MAX ((size_t)1 << 20)

/* One series per name, names ranked by time inside the window. */
/* nsys_by_name in one scan, when the cells of every name the selected
 * profiles can hold fit CELLS_MAX: the groups and their buckets together.
 * *done 0 (nothing written) when they do not fit. */
static int by_name_one_scan(struct qctx *q, const struct qbucket *bk,
                            size_t *total, int *done)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct q_nvtx_groups gs;
	struct num *vals = NULL;
	size_t *order = NULL, *idx = NULL, np = 0, bound = 1, from, to;
	struct cells c;
	int rc = q_select_profiles(q, &idx, &np);

	*done = 0;
	for (size_t k = 0; !rc && k < np; k++)
		bound += json_array_size(json_object_get(
			json_array_get(profiles, idx[k]), "names"));
	free(idx);
	if (rc || bound > CELLS_MAX / bk->n)
		return rc;
	*done = 1;
	rc = cells_init(q, &c, bk, bound);
	if (!rc)
		rc = q_nsys_groups_hook(q, "name", on_grouped_range, &c, &gs);
	if (rc) {
		cells_free(&c);
		return rc;
	}
	rc = q_nvtx_groups_order(q, &gs, 0, &order, &vals);
	if (!rc && qtline_sums_failed(c.active, c.nseries * bk->n))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	if (!rc) {
		qtline_series_head(q, gs.n, total);
		q_page(q, gs.n, &from, &to);
		for (size_t k = from; k < to; k++) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			qkey_emit(q->out, &gs.keys.keys[order[k]]);
			emit_cells(q, &c, order[k]);
		}
	}
	cells_free(&c);
	free(order);
	free(vals);
	q_nvtx_groups_free(&gs);
	return rc;
}

static int nsys_by_name(struct qctx *q, const struct qbucket *bk,
                        size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	struct row_window w = {q->start, q->end,
	                           q->end - q->start >= q->duration / 2};
	struct q_nvtx_groups gs;
	struct num *vals = NULL;
	size_t *order = NULL, *idx = NULL, np = 0, from, to, chunk, nn = 0;
	int64_t *rank_of = NULL; /* group index -> page position, or -1 */
	struct q_needle *nd = NULL;
	struct qbucket_bins pl;
	int done = 0, rc = 0;

	/* buckets of whole bins of a cache: rank the names first (from the
	 * name summaries), then each chunk from the bins; else one scan when
	 * the cells fit */
	if (!dataset_has_cache(q->ds) || !qbucket_bins(bk, 1.0, &pl))
		rc = by_name_one_scan(q, bk, total, &done);

	if (rc || done)
		return rc;
	rc = q_nsys_groups(q, "name", &gs);
	if (rc)
		return rc;
	rc = q_nvtx_groups_order(q, &gs, 0, &order, &vals);
	if (!rc)
		qtline_series_head(q, gs.n, total);
	q_page(q, gs.n, &from, &to);
	chunk = CELLS_MAX / bk->n;
	if (!chunk)
		chunk = 1;
	if (!rc)
		rc = q_select_profiles(q, &idx, &np);
	if (!rc)
		rc = q_name_needles(q, &nd, &nn);
	if (!rc && !(rank_of = malloc((gs.n + 1) * sizeof *rank_of)))
		rc = err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t c0 = from; !rc && c0 < to; c0 += chunk) {
		size_t c1 = to - c0 < chunk ? to : c0 + chunk;
		struct cells c;
		for (size_t g = 0; g < gs.n; g++)
			rank_of[g] = -1;
		for (size_t k = c0; k < c1; k++)
			rank_of[order[k]] = (int64_t)(k - c0);
		rc = cells_init(q, &c, bk, c1 - c0);
		for (size_t k = 0; !rc && k < np; k++) {
			const json_t *pr = json_array_get(profiles, idx[k]);
			const json_t *names = json_object_get(pr, "names");
			size_t nnm = json_array_size(names);
			int64_t *slot = malloc((nnm + 1) * sizeof *slot);
			unsigned char *ok = NULL;
			if (!slot || (nd && !(ok = q_match_names(names, nd, nn)))) {
				free(slot);
				rc = err_set(q->e, ERR_NOMEM, "out of memory");
				break;
			}
			/* a name's group: its key's dictionary entry */
			for (size_t i = 0; i <= nnm; i++) {
				const json_t *v = json_array_get(names, i);
				int64_t g = i < nnm && json_is_string(v)
				        ? qkeys_find_str(&gs.keys,
				                         json_string_value(v),
				                         json_string_length(v))
				        : gs.keys.null_group;
				slot[i] = g >= 0 ? rank_of[g] : -1;
			}
			c.slot_of_name = slot;
			c.nnames = nnm;
			c.name_ok = ok;
			int have = 0;
			rc = nsys_binned(q, (int64_t)idx[k], &c, &have);
			if (!rc && !have)
				rc = qrange_events(q, (int64_t)idx[k], &w,
				                   on_range, &c);
			free(slot);
			free(ok);
		}
		if (!rc && qtline_sums_failed(c.active, c.nseries * bk->n))
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
		for (size_t k = c0; !rc && k < c1; k++) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			qkey_emit(q->out, &gs.keys.keys[order[k]]);
			emit_cells(q, &c, k - c0);
		}
		cells_free(&c);
	}
	free(rank_of);
	q_name_needles_free(nd, nn);
	free(idx);
	free(order);
	free(vals);
	q_nvtx_groups_free(&gs);
	return rc;
}

/* ---- cpu ---- */

struct sample_cells {
	const struct qbucket *bk;
	int64_t *samples;
	struct qbucket_bins bins;
};

static int on_sample(void *ctx, int64_t ordinal,
                     const struct row_sample *row)
{
	struct sample_cells *c = ctx;
	long i = qbucket_find(c->bk, row->time);
	(void)ordinal;
	if (i >= 0)
		c->samples[i]++;
	return 0;
}

static int on_sample_bin(void *ctx, int64_t bin, int64_t samples)
{
	struct sample_cells *c = ctx;
	c->samples[qbucket_bin_bucket(c->bk, &c->bins, bin)] += samples;
	return 0;
}

/* The samples of profile into c: from the build-time bins inside
 * [start, rest) and a scan of [rest, end] when the buckets are made of
 * whole bins, else from a scan of the window. */
static int cpu_cells(struct qctx *q, int64_t profile, struct sample_cells *c)
{
	struct row_window w = {q->start, q->end, q_wide(q)};
	int have = 0, rc = 0;

	if (qbucket_bins(c->bk, 1.0, &c->bins)) {
		const struct row_bins b = {profile, 1.0, c->bins.i0, c->bins.i1};
		rc = dataset_sample_bins(q->ds, &b, &have, on_sample_bin, c, q->e);
	}
	if (!rc && have)
		w = (struct row_window){c->bins.rest, q->end, 0};
	if (!rc)
		rc = dataset_samples(q->ds, profile, &w, on_sample, c, q->e);
	return rc;
}

static int cpu_series(struct qctx *q, const struct qbucket *bk,
                      size_t *total)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t *idx = NULL, n = 0, m = 0, from, to;
	int rc = q_select_profiles(q, &idx, &n);

	for (size_t k = 0; !rc && k < n; k++) /* keep those with CPU data */
		if (json_is_object(json_object_get(
			    json_array_get(profiles, idx[k]), "cpu")))
			idx[m++] = idx[k];
	if (!rc)
		qtline_series_head(q, m, total);
	q_page(q, m, &from, &to);
	for (size_t k = from; !rc && k < to; k++) {
		const json_t *pr = json_array_get(profiles, idx[k]);
		struct sample_cells c = {bk, calloc(bk->n, sizeof(int64_t)),
		                         {0, 0, 0, 0, 0}};
		if (!c.samples) {
			rc = err_set(q->e, ERR_NOMEM, "out of memory");
			break;
		}
		rc = cpu_cells(q, (int64_t)idx[k], &c);
		if (!rc) {
			if (k > from)
				buf_putc(q->out, ',');
			buf_puts(q->out, "{\"key\":");
			struct qitem it;
			jsonout_int(q->out, q_id(pr, idx[k]));
			qtline_series_open(q, &it);
			qtline_int_array(&it, "samples", c.samples, bk->n);
			qtline_series_close(&it);
		}
		free(c.samples);
	}
	free(idx);
	return rc;
}

/* ---- the response ---- */

static int timeline_plain(struct qctx *q)
{
	const char *of = q->p->of ? q->p->of : "requests";
	struct qbucket bk;
	struct buf *b = q->out;
	size_t total = 0;
	int rc;

	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	rc = qbucket_init(&bk, q->start, q->end, q->p->bucket);
	if (rc)
		return err_set(q->e, rc == 1 ? ERR_USAGE : ERR_NOMEM,
		               rc == 1 ? "Too many buckets; the most is 10000"
		                       : "out of memory");
	buf_puts(b, "{\"of\":");
	jsonout_cstr(b, of);
	buf_puts(b, ",\"bucket\":");
	jsonout_real(b, q->p->bucket);
	buf_puts(b, ",\"range\":[");
	jsonout_real(b, q->start);
	buf_putc(b, ',');
	jsonout_real(b, q->end);
	buf_puts(b, "],\"buckets\":[");
	for (size_t i = 0; i < bk.n; i++) {
		if (i)
			buf_putc(b, ',');
		jsonout_real(b, bk.b[i]);
	}
	buf_puts(b, "],");
	if (!strcmp(of, "requests")) {
		qtline_series_head(q, 1, &total);
		if (q->p->offset == 0 && q->p->limit > 0)
			rc = requests_series(q, &bk);
	} else if (!strcmp(of, "nsys")) {
		if (q->p->group_by && !strcmp(q->p->group_by, "name"))
			rc = nsys_by_name(q, &bk, &total);
		else
			rc = nsys_by_profile(q, &bk, &total);
	} else if (!strcmp(of, "cpu")) {
		rc = cpu_series(q, &bk, &total);
	} else if (!strcmp(of, "gpu")) {
		rc = qtgpu_series(q, &bk, &total);
	} else if (q->p->group_by) {
		rc = qmgroup_timeline(q, &bk, &total);
	} else {
		rc = qtmetrics_series(q, &bk, &total);
	}
	qbucket_free(&bk);
	if (rc)
		return rc;
	buf_putc(b, ']');
	qjoin_emit(q);
	if (q->p->group_by && (!strcmp(of, "nsys") || !strcmp(of, "metrics"))) {
		buf_puts(b, ",\"group_by\":");
		jsonout_cstr(b, q->p->group_by);
	}
	q_list_close(q, total);
	return 0;
}

int query_timeline(struct qctx *q)
{
	if (q->order.n)
		return qtsort_run(q, timeline_plain);
	return timeline_plain(q);
}
