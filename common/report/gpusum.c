/* gpusum: GPU summary shards of the viewer (see gpusum.h). */
#include "report/gpusum.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"
#include "base/vec.h"
#include "store/store_gpu.h"
#include "store/store_late.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A track: device and stream, each null when the export had none. */
struct track {
	int64_t device, stream;
	int null_device, null_stream;
};

struct profile_sum {
	struct track *t;
	size_t n, cap;
	int binned;
	int rows;          /* scanned: the profile has GPU rows */
	int named, binned_s; /* the cache's name sums, per-second bins copied */
	int queued;        /* a kernel with a launch was seen */
	double qmin, qmax; /* its queue delays' bounds */
};

struct gpusum {
	struct profile_sum *p;
	size_t n;
	double duration;
};

/* The lane of (device, stream) in ps, appended when new; (size_t)-1 when
 * out of memory or over the bound. */
static size_t lane_of(struct profile_sum *ps, sqlite3_stmt *st, size_t *last)
{
	struct track k;
	k.null_device = sqlite3_column_type(st, 3) == SQLITE_NULL;
	k.null_stream = sqlite3_column_type(st, 4) == SQLITE_NULL;
	k.device = k.null_device ? 0 : sqlite3_column_int64(st, 3);
	k.stream = k.null_stream ? 0 : sqlite3_column_int64(st, 4);
#define SAME(a, b) ((a).device == (b).device && (a).stream == (b).stream && \
	(a).null_device == (b).null_device && (a).null_stream == (b).null_stream)
	if (*last < ps->n && SAME(ps->t[*last], k))
		return *last;
	for (size_t i = 0; i < ps->n; i++)
		if (SAME(ps->t[i], k))
			return *last = i;
#undef SAME
	if (ps->n >= LANESUM_MAX_LANES ||
	    vec_reserve(&ps->t, &ps->cap, ps->n + 1, sizeof *ps->t))
		return (size_t)-1;
	ps->t[ps->n] = k;
	return *last = ps->n++;
}

/* Widens the profile's queue delay bounds to q. */
static void queue(struct profile_sum *ps, double q)
{
	if (!ps->queued || q < ps->qmin)
		ps->qmin = q;
	if (!ps->queued || q > ps->qmax)
		ps->qmax = q;
	ps->queued = 1;
}

/* Whether any profile of catalog has GPU rows. */
static int any_gpu(const json_t *catalog)
{
	const json_t *pr;
	size_t i;
	json_array_foreach(json_object_get(catalog, "profiles"), i, pr)
		if (json_integer_value(json_object_get(json_object_get(pr, "gpu"),
		                                       "rows")) > 0)
			return 1;
	return 0;
}

static int flush(struct gpusum *s, struct lanesum *ls, struct shard_writer *w,
                 int64_t p, int skip, struct err *e)
{
	int written = 0, rc;
	if (p < 0)
		return 0;
	if (skip)
		lanesum_discard(ls);
	rc = lanesum_flush(ls, w, SHARD_GPUSUM, p * GPUSUM_STREAMS, &written, e);
	s->p[p].binned = written;
	return rc;
}

static int scan(struct gpusum *s, sqlite3 *db, struct shard_writer *w,
                struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct lanesum *ls = lanesum_new(s->duration);
	int64_t cur = -1;
	size_t last = 0;
	int rc, skip = 0;

	if (!ls)
		return err_set(e, ERR_NOMEM, "Out of memory for GPU summaries");
	if (sqlite3_prepare_v2(db, "SELECT profile, start, \"end\", device, stream,"
	                       " name, kind, launch_start FROM " STORE_GPU_TABLE
	                       " ORDER BY profile, ordinal", -1, &st, NULL) != SQLITE_OK) {
		lanesum_free(ls);
		return 0; /* another builder's cache: no GPU table */
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		double a = sqlite3_column_double(st, 1), b = sqlite3_column_double(st, 2);
		int64_t name = sqlite3_column_type(st, 5) == SQLITE_NULL
		               ? -1 : sqlite3_column_int64(st, 5);
		size_t lane;

		if (p < 0 || (uint64_t)p >= s->n) {
			sqlite3_finalize(st);
			lanesum_free(ls);
			return err_set(e, ERR_DATA, "GPU row of unknown profile %lld in the store",
			               (long long)p);
		}
		if (p != cur) {
			if (flush(s, ls, w, cur, skip, e)) {
				sqlite3_finalize(st);
				lanesum_free(ls);
				return e->code;
			}
			cur = p;
			skip = 0;
			last = 0;
		}
		s->p[p].rows = 1;
		if (sqlite3_column_int(st, 6) == 0 &&
		    sqlite3_column_type(st, 7) != SQLITE_NULL)
			queue(&s->p[p], a - sqlite3_column_double(st, 7));
		if (skip || !(b >= 0) || !(a <= s->duration))
			continue;
		lane = lane_of(&s->p[p], st, &last);
		if (lane == (size_t)-1 || lanesum_add(ls, lane, 0, name, a, b))
			skip = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		lanesum_free(ls);
		return err_set(e, ERR_DATA, "Cannot read GPU rows for summaries: %s",
		               sqlite3_errmsg(db));
	}
	rc = flush(s, ls, w, cur, skip, e);
	lanesum_free(ls);
	return rc;
}

/* Copies one profile's cache summaries into its names and bins streams. */
struct copy {
	struct shard_writer *w;
	struct buf row;
	int64_t stream;
	double duration;
	struct err *e;
};

static void put_parts(struct buf *b, const double *parts, size_t n)
{
	buf_putc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_putc(b, ',');
		jsonout_real(b, parts[i]);
	}
	buf_putc(b, ']');
}

/* One summary row [a, b, x, [parts]]: x is the real xr when is_real, else
 * the integer xi. */
static int put_sum(struct copy *c, int64_t a, int64_t b, int is_real, double xr,
                   int64_t xi, const double *parts, size_t nparts)
{
	buf_reset(&c->row);
	buf_putc(&c->row, '[');
	jsonout_int(&c->row, a);
	buf_putc(&c->row, ',');
	jsonout_int(&c->row, b);
	buf_putc(&c->row, ',');
	if (is_real)
		jsonout_real(&c->row, xr);
	else
		jsonout_int(&c->row, xi);
	buf_putc(&c->row, ',');
	put_parts(&c->row, parts, nparts);
	buf_putc(&c->row, ']');
	return shard_writer_add_text(c->w, SHARD_GPUSUM, c->stream, 0, c->duration,
	                             c->row.data, c->row.len, c->e) ? -1 : 0;
}

static int on_name(void *ctx, int64_t name, int64_t count, const double *parts,
                   size_t nparts, double max)
{
	return put_sum(ctx, name, count, 1, max, 0, parts, nparts);
}

static int on_bin(void *ctx, int64_t device, int64_t bin, int64_t kernels,
                  const double *parts, size_t nparts)
{
	return put_sum(ctx, device, bin, 0, 0, kernels, parts, nparts);
}

/* The cache's whole-run GPU summaries of the profiles with rows. */
static int copy_sums(struct gpusum *s, sqlite3 *db, struct shard_writer *w,
                     struct err *e)
{
	struct copy c = {w, {0}, 0, s->duration, e};
	int rc = 0;
	buf_init(&c.row, 0);
	for (size_t p = 0; p < s->n && !rc; p++) {
		struct profile_sum *ps = &s->p[p];
		int have = 0;
		if (!ps->rows)
			continue;
		c.stream = (int64_t)(p * GPUSUM_STREAMS + GPUSUM_NAMES);
		rc = store_gpu_sum_names(db, (int64_t)p, s->duration, &have, on_name, &c, e);
		ps->named = !rc && have;
		c.stream = (int64_t)(p * GPUSUM_STREAMS + GPUSUM_BINS);
		if (!rc)
			rc = store_gpu_sum_bins(db, (int64_t)p, s->duration, INT64_MAX, &have,
			                        on_bin, &c, e);
		ps->binned_s = !rc && have;
	}
	if (rc == -1)
		rc = e->code; /* a shard writer failure, e filled */
	buf_free(&c.row);
	return rc;
}

int gpusum_build(struct gpusum **out, struct shard_writer *w,
                 const char *sqlite_path, const json_t *catalog,
                 double duration, const cancel_flag *cancel,
                 struct err *e)
{
	size_t n = json_array_size(json_object_get(catalog, "profiles"));
	struct gpusum *s = calloc(1, sizeof *s);
	sqlite3 *db = NULL;
	int rc;

	*out = NULL;
	if (!s || !(s->p = calloc(n ? n : 1, sizeof *s->p))) {
		free(s);
		return err_set(e, ERR_NOMEM, "Out of memory for GPU summaries");
	}
	s->n = n;
	s->duration = duration;
	if (!(duration > 0) || !isfinite(duration) || !any_gpu(catalog)) {
		*out = s;
		return 0;
	}
	if (store_late_open_reader(sqlite_path, &db) != SQLITE_OK) {
		err_set(e, ERR_DATA, "Cannot open %s for GPU summaries: %s", sqlite_path,
		        db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		gpusum_free(s);
		return ERR_DATA;
	}
	cancel_sqlite(db, cancel);
	rc = scan(s, db, w, e);
	if (!rc)
		rc = copy_sums(s, db, w, e);
	sqlite3_close(db);
	if (rc) {
		gpusum_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The name of device d in the profile's gpu.devices, or null. */
static json_t *device_name(const json_t *pr, int64_t d)
{
	const json_t *dv;
	size_t i;
	json_array_foreach(json_object_get(json_object_get(pr, "gpu"), "devices"), i, dv)
		if (json_integer_value(json_object_get(dv, "id")) == d &&
		    json_is_string(json_object_get(dv, "name")))
			return json_copy(json_object_get(dv, "name"));
	return json_null();
}

static json_t *tracks_json(const struct profile_sum *ps, const json_t *pr)
{
	json_t *a = json_array();
	for (size_t i = 0; i < ps->n; i++) {
		const struct track *t = &ps->t[i];
		json_t *o = json_object();
		json_object_set_new(o, "device", t->null_device ? json_null()
		                                                : json_integer(t->device));
		json_object_set_new(o, "stream", t->null_stream ? json_null()
		                                                : json_integer(t->stream));
		json_object_set_new(o, "name", t->null_device ? json_null()
		                                              : device_name(pr, t->device));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *gpusum_profile_json(const struct gpusum *s,
                            const struct shard_writer *w, size_t p,
                            const json_t *profile)
{
	const struct profile_sum *ps;
	json_t *o;
	if (!s || p >= s->n || !s->p[p].rows)
		return NULL;
	ps = &s->p[p];
	o = lanesum_json(s->duration, w, SHARD_GPUSUM, (int64_t)(p * GPUSUM_STREAMS));
	if (ps->binned)
		json_object_set_new(o, "tracks", tracks_json(ps, profile));
	else
		json_object_del(o, "levels");
	if (ps->named)
		json_object_set_new(o, "names", shard_writer_descs_json(
			w, SHARD_GPUSUM, (int64_t)(p * GPUSUM_STREAMS + GPUSUM_NAMES)));
	if (ps->binned_s)
		json_object_set_new(o, "bins", shard_writer_descs_json(
			w, SHARD_GPUSUM, (int64_t)(p * GPUSUM_STREAMS + GPUSUM_BINS)));
	if (ps->queued) {
		json_t *q = json_array();
		json_array_append_new(q, json_real(ps->qmin));
		json_array_append_new(q, json_real(ps->qmax));
		json_object_set_new(o, "queue_delay", q);
	}
	return o;
}

void gpusum_free(struct gpusum *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->p[i].t);
	free(s->p);
	free(s);
}
