/* memrows: compact in-memory rows of an evidence document (see memrows.h). */
#include "query/memrows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bsearchd.h"
#include "base/buf.h"
#include "ingest/evidence.h"
#include "base/num.h"
#include "base/vec.h"


struct bucket {
	int bucket;
	double maximum;
	size_t off, n; /* range of `order` */
};

struct mprof {
	/* events */
	size_t nev, capev;
	double *start, *end;
	int64_t *name, *ev_row;
	uint32_t *ev_tid;
	uint32_t *order; /* ordinals grouped by bucket, by (start, ordinal) */
	struct bucket *buckets;
	size_t nbuckets;
	/* samples */
	size_t nsm, capsm;
	double *sm_time;
	uint32_t *sm_tid;
	int64_t *sm_stack, *sm_row;
	int sm_sorted;
};

struct mseries {
	size_t n, cap;
	double *time;
	unsigned char *kind; /* enum num_kind */
	int64_t *iv;         /* NUM_INT value; NUM_BIG arena offset */
	double *dv;
	uint32_t *big_len;
	int64_t *src, *row;
	int sorted;
};

struct memrows {
	struct mprof *prof;
	size_t nprof;
	struct mseries *ser;
	size_t nser;
	/* interned thread ids */
	struct buf tids; /* NUL-separated texts */
	size_t *tid_off, *tid_len;
	size_t ntid, captid;
	uint32_t *hash; /* open addressing: id + 1, 0 = empty */
	size_t hcap;
	struct buf bigs; /* big integer digits */
};

static uint64_t hash_text(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t k = 0; k < n; k++)
		h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
	return h;
}

static int intern(struct memrows *m, const char *s, size_t n, uint32_t *id)
{
	size_t k;

	if (m->ntid * 2 >= m->hcap) {
		size_t nc = m->hcap ? m->hcap * 2 : 64;
		uint32_t *nh = calloc(nc, sizeof *nh);
		if (!nh)
			return -1;
		for (size_t i = 0; i < m->ntid; i++) {
			k = hash_text(m->tids.data + m->tid_off[i], m->tid_len[i]) &
			    (nc - 1);
			while (nh[k])
				k = (k + 1) & (nc - 1);
			nh[k] = (uint32_t)i + 1;
		}
		free(m->hash);
		m->hash = nh;
		m->hcap = nc;
	}
	k = hash_text(s, n) & (m->hcap - 1);
	while (m->hash[k]) {
		uint32_t i = m->hash[k] - 1;
		if (m->tid_len[i] == n &&
		    memcmp(m->tids.data + m->tid_off[i], s, n) == 0) {
			*id = i;
			return 0;
		}
		k = (k + 1) & (m->hcap - 1);
	}
	if (m->ntid == m->captid) {
		size_t nc = m->captid ? m->captid * 2 : 16;
		if (vec_resize(&m->tid_off, nc, sizeof *m->tid_off) ||
		    vec_resize(&m->tid_len, nc, sizeof *m->tid_len))
			return -1;
		m->captid = nc;
	}
	m->tid_off[m->ntid] = m->tids.len;
	m->tid_len[m->ntid] = n;
	buf_append(&m->tids, s, n);
	buf_putc(&m->tids, '\0');
	if (m->tids.failed)
		return -1;
	m->hash[k] = (uint32_t)m->ntid + 1;
	*id = (uint32_t)m->ntid++;
	return 0;
}

static struct mprof *profile_at(struct memrows *m, int64_t p)
{
	if (p < 0 || p > (int64_t)1 << 30)
		return NULL;
	if ((size_t)p >= m->nprof) {
		size_t nn = (size_t)p + 1;
		if (vec_resize(&m->prof, nn, sizeof *m->prof))
			return NULL;
		memset(m->prof + m->nprof, 0, (nn - m->nprof) * sizeof *m->prof);
		for (size_t k = m->nprof; k < nn; k++)
			m->prof[k].sm_sorted = 1;
		m->nprof = nn;
	}
	return &m->prof[p];
}

static struct mseries *series_at(struct memrows *m, int64_t s)
{
	if (s < 0 || s > (int64_t)1 << 30)
		return NULL;
	if ((size_t)s >= m->nser) {
		size_t nn = (size_t)s + 1;
		if (vec_resize(&m->ser, nn, sizeof *m->ser))
			return NULL;
		memset(m->ser + m->nser, 0, (nn - m->nser) * sizeof *m->ser);
		for (size_t k = m->nser; k < nn; k++)
			m->ser[k].sorted = 1;
		m->nser = nn;
	}
	return &m->ser[s];
}

/* ---- sink ---- */

static int nomem(struct err *e)
{
	return err_set(e, ERR_NOMEM, "out of memory while loading rows");
}

static int sink_event(void *ctx, int64_t profile, int64_t ordinal,
                      const struct row_event *row, struct err *e)
{
	struct memrows *m = ctx;
	struct mprof *p = profile_at(m, profile);
	uint32_t tid;

	if (!p || ordinal != (int64_t)p->nev || p->nev >= UINT32_MAX - 1)
		return p ? err_set(e, ERR_DATA, "profiles[%lld].events: rows out "
		                                "of order",
		                   (long long)profile)
		         : nomem(e);
	if (p->nev == p->capev) {
		size_t nc = p->capev ? p->capev * 2 : 256;
		if (vec_resize(&p->start, nc, sizeof *p->start) ||
		    vec_resize(&p->end, nc, sizeof *p->end) ||
		    vec_resize(&p->name, nc, sizeof *p->name) ||
		    vec_resize(&p->ev_row, nc, sizeof *p->ev_row) ||
		    vec_resize(&p->ev_tid, nc, sizeof *p->ev_tid))
			return nomem(e);
		p->capev = nc;
	}
	if (intern(m, row->tid, row->tid_len, &tid))
		return nomem(e);
	/* + 0.0 folds -0.0 into 0.0, as a SQLite REAL column does. */
	p->start[p->nev] = row->start + 0.0;
	p->end[p->nev] = row->end + 0.0;
	p->name[p->nev] = row->name;
	p->ev_row[p->nev] = row->source_row;
	p->ev_tid[p->nev] = tid;
	p->nev++;
	return 0;
}

static int sink_sample(void *ctx, int64_t profile, int64_t ordinal,
                       const struct row_sample *row, struct err *e)
{
	struct memrows *m = ctx;
	struct mprof *p = profile_at(m, profile);
	uint32_t tid;

	if (!p || ordinal != (int64_t)p->nsm)
		return p ? err_set(e, ERR_DATA, "profiles[%lld].cpu.samples: rows "
		                                "out of order",
		                   (long long)profile)
		         : nomem(e);
	if (p->nsm == p->capsm) {
		size_t nc = p->capsm ? p->capsm * 2 : 256;
		if (vec_resize(&p->sm_time, nc, sizeof *p->sm_time) ||
		    vec_resize(&p->sm_tid, nc, sizeof *p->sm_tid) ||
		    vec_resize(&p->sm_stack, nc, sizeof *p->sm_stack) ||
		    vec_resize(&p->sm_row, nc, sizeof *p->sm_row))
			return nomem(e);
		p->capsm = nc;
	}
	if (intern(m, row->tid, row->tid_len, &tid))
		return nomem(e);
	if (p->nsm && row->time < p->sm_time[p->nsm - 1])
		p->sm_sorted = 0;
	p->sm_time[p->nsm] = row->time + 0.0; /* -0.0 as a REAL column reads */
	p->sm_tid[p->nsm] = tid;
	p->sm_stack[p->nsm] = row->stack;
	p->sm_row[p->nsm] = row->source_row;
	p->nsm++;
	return 0;
}

static int sink_point(void *ctx, int64_t series, int64_t ordinal,
                      const struct row_point *row, struct err *e)
{
	struct memrows *m = ctx;
	struct mseries *s = series_at(m, series);
	size_t k;

	if (!s || ordinal != (int64_t)s->n)
		return s ? err_set(e, ERR_DATA,
		                   "metrics[%lld].points: rows out of order",
		                   (long long)series)
		         : nomem(e);
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		if (vec_resize(&s->time, nc, sizeof *s->time) ||
		    vec_resize(&s->kind, nc, sizeof *s->kind) ||
		    vec_resize(&s->iv, nc, sizeof *s->iv) ||
		    vec_resize(&s->dv, nc, sizeof *s->dv) ||
		    vec_resize(&s->big_len, nc, sizeof *s->big_len) ||
		    vec_resize(&s->src, nc, sizeof *s->src) ||
		    vec_resize(&s->row, nc, sizeof *s->row))
			return nomem(e);
		s->cap = nc;
	}
	k = s->n;
	if (k && row->time < s->time[k - 1])
		s->sorted = 0;
	s->time[k] = row->time + 0.0; /* -0.0 as a REAL column reads */
	s->kind[k] = (unsigned char)row->value.kind;
	s->iv[k] = row->value.i;
	s->dv[k] = row->value.d;
	s->big_len[k] = 0;
	if (row->value.kind == NUM_BIG) {
		if (row->value.big_len >= UINT32_MAX)
			return nomem(e);
		s->iv[k] = (int64_t)m->bigs.len;
		s->big_len[k] = (uint32_t)row->value.big_len;
		buf_append(&m->bigs, row->value.big, row->value.big_len);
		if (m->bigs.failed)
			return nomem(e);
	}
	s->src[k] = row->source_id;
	s->row[k] = row->source_row;
	s->n++;
	return 0;
}

/* ---- bucket order ---- */

static int cmp_start(const void *a, const void *b, void *arg)
{
	const struct mprof *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double sx = p->start[x], sy = p->start[y];
	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int build_buckets(struct mprof *p)
{
	size_t nb = ROW_BUCKET_MAX - ROW_BUCKET_MIN + 1;
	size_t *count = calloc(nb, sizeof *count);
	double *maxd = malloc(nb * sizeof *maxd);
	size_t *pos = calloc(nb, sizeof *pos);
	int rc = -1;

	if (!count || !maxd || !pos)
		goto out;
	p->order = malloc((p->nev ? p->nev : 1) * sizeof *p->order);
	if (!p->order)
		goto out;
	for (size_t k = 0; k < p->nev; k++) {
		int b = row_bucket(p->start[k], p->end[k]) - ROW_BUCKET_MIN;
		double d = p->end[k] - p->start[k];
		if (!count[b]++ || d > maxd[b])
			maxd[b] = d;
	}
	for (size_t b = 0; b < nb; b++)
		if (count[b])
			p->nbuckets++;
	p->buckets = calloc(p->nbuckets ? p->nbuckets : 1, sizeof *p->buckets);
	if (!p->buckets)
		goto out;
	{
		size_t off = 0, i = 0;
		for (size_t b = 0; b < nb; b++) {
			if (!count[b])
				continue;
			p->buckets[i].bucket = (int)b + ROW_BUCKET_MIN;
			p->buckets[i].maximum = maxd[b];
			p->buckets[i].off = off;
			p->buckets[i].n = count[b];
			pos[b] = off;
			off += count[b];
			i++;
		}
	}
	for (size_t k = 0; k < p->nev; k++) {
		int b = row_bucket(p->start[k], p->end[k]) - ROW_BUCKET_MIN;
		p->order[pos[b]++] = (uint32_t)k;
	}
	for (size_t i = 0; i < p->nbuckets; i++) {
		uint32_t *o = p->order + p->buckets[i].off;
		size_t n = p->buckets[i].n;
		int sorted = 1;
		for (size_t k = 1; k < n && sorted; k++)
			if (p->start[o[k]] < p->start[o[k - 1]])
				sorted = 0;
		if (!sorted)
			qsort_r(o, n, sizeof *o, cmp_start, p);
	}
	rc = 0;
out:
	free(count);
	free(maxd);
	free(pos);
	return rc;
}

/* ---- load / free ---- */

int memrows_load(const char *path, json_t **catalog, struct memrows **out,
                 struct err *e)
{
	struct memrows *m = calloc(1, sizeof *m);
	struct row_sink sink;
	int rc;

	*out = NULL;
	*catalog = NULL;
	if (!m)
		return nomem(e);
	buf_init(&m->tids, 0);
	buf_init(&m->bigs, 0);
	memset(&sink, 0, sizeof sink);
	sink.ctx = m;
	sink.event = sink_event;
	sink.sample = sink_sample;
	sink.point = sink_point;
	rc = evidence_read(path, &sink, catalog, NULL, e);
	if (rc) {
		memrows_free(m);
		return rc;
	}
	for (size_t k = 0; k < m->nprof; k++) {
		if (build_buckets(&m->prof[k])) {
			json_decref(*catalog);
			*catalog = NULL;
			memrows_free(m);
			return nomem(e);
		}
	}
	*out = m;
	return 0;
}

void memrows_free(struct memrows *m)
{
	if (!m)
		return;
	for (size_t k = 0; k < m->nprof; k++) {
		struct mprof *p = &m->prof[k];
		free(p->start);
		free(p->end);
		free(p->name);
		free(p->ev_row);
		free(p->ev_tid);
		free(p->order);
		free(p->buckets);
		free(p->sm_time);
		free(p->sm_tid);
		free(p->sm_stack);
		free(p->sm_row);
	}
	for (size_t k = 0; k < m->nser; k++) {
		struct mseries *s = &m->ser[k];
		free(s->time);
		free(s->kind);
		free(s->iv);
		free(s->dv);
		free(s->big_len);
		free(s->src);
		free(s->row);
	}
	free(m->prof);
	free(m->ser);
	free(m->tid_off);
	free(m->tid_len);
	free(m->hash);
	buf_free(&m->tids);
	buf_free(&m->bigs);
	free(m);
}

/* ---- scans ---- */

static int emit_event(const struct memrows *m, const struct mprof *p,
                      size_t k, row_event_fn fn, void *ctx)
{
	struct row_event ev;
	ev.start = p->start[k];
	ev.end = p->end[k];
	ev.name = p->name[k];
	ev.tid = m->tids.data + m->tid_off[p->ev_tid[k]];
	ev.tid_len = m->tid_len[p->ev_tid[k]];
	ev.source_row = p->ev_row[k];
	return fn(ctx, (int64_t)k, &ev);
}

int memrows_events(const struct memrows *m, int64_t profile,
                   const struct row_window *w, row_event_fn fn, void *ctx)
{
	int has_window = w != NULL;
	double wstart = w ? w->start : 0, wend = w ? w->end : 0;
	const struct mprof *p;
	int rc;

	if (profile < 0 || (size_t)profile >= m->nprof)
		return 0;
	p = &m->prof[profile];
	if (!has_window) {
		for (size_t k = 0; k < p->nev; k++)
			if ((rc = emit_event(m, p, k, fn, ctx)))
				return rc;
		return 0;
	}
	for (size_t i = 0; i < p->nbuckets; i++) {
		const struct bucket *b = &p->buckets[i];
		const uint32_t *o = p->order + b->off;
		double lower = nextafter(wstart - nextafter(b->maximum, INFINITY),
		                         -INFINITY);
		size_t lo = 0, hi = b->n;
		if (isnan(lower))
			lower = -INFINITY;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (p->start[o[mid]] < lower)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k < b->n && p->start[o[k]] <= wend; k++) {
			if (p->end[o[k]] >= wstart &&
			    (rc = emit_event(m, p, o[k], fn, ctx)))
				return rc;
		}
	}
	return 0;
}

int memrows_event_at(const struct memrows *m, int64_t profile,
                     int64_t ordinal, row_event_fn fn, void *ctx)
{
	const struct mprof *p;
	if (profile < 0 || (size_t)profile >= m->nprof)
		return 0;
	p = &m->prof[profile];
	if (ordinal < 0 || (size_t)ordinal >= p->nev)
		return 0;
	return emit_event(m, p, (size_t)ordinal, fn, ctx);
}

int memrows_samples(const struct memrows *m, int64_t profile,
                    const struct row_window *w, row_sample_fn fn, void *ctx)
{
	int has_window = w != NULL;
	double wstart = w ? w->start : 0, wend = w ? w->end : 0;
	const struct mprof *p;
	size_t k = 0;
	int rc;

	if (profile < 0 || (size_t)profile >= m->nprof)
		return 0;
	p = &m->prof[profile];
	if (has_window && p->sm_sorted)
		k = bsearchd_lower(p->sm_time, 0, p->nsm, wstart);
	for (; k < p->nsm; k++) {
		struct row_sample sm;
		double t = p->sm_time[k];
		if (has_window) {
			if (t > wend) {
				if (p->sm_sorted)
					break;
				continue;
			}
			if (t < wstart)
				continue;
		}
		sm.time = t;
		sm.tid = m->tids.data + m->tid_off[p->sm_tid[k]];
		sm.tid_len = m->tid_len[p->sm_tid[k]];
		sm.stack = p->sm_stack[k];
		sm.source_row = p->sm_row[k];
		if ((rc = fn(ctx, (int64_t)k, &sm)))
			return rc;
	}
	return 0;
}

static int emit_point(const struct memrows *m, const struct mseries *s,
                      size_t k, row_point_fn fn, void *ctx)
{
	struct row_point pt;
	memset(&pt, 0, sizeof pt);
	pt.time = s->time[k];
	pt.value.kind = (enum num_kind)s->kind[k];
	pt.value.d = s->dv[k];
	if (pt.value.kind == NUM_BIG) {
		pt.value.big = m->bigs.data + s->iv[k];
		pt.value.big_len = s->big_len[k];
	} else {
		pt.value.i = s->iv[k];
	}
	pt.source_id = s->src[k];
	pt.source_row = s->row[k];
	return fn(ctx, (int64_t)k, &pt);
}

int memrows_points(const struct memrows *m, int64_t series,
                   const struct row_window *w, row_point_fn fn, void *ctx)
{
	int has_window = w != NULL;
	double wstart = w ? w->start : 0, wend = w ? w->end : 0;
	const struct mseries *s;
	size_t k = 0;
	int rc;

	if (series < 0 || (size_t)series >= m->nser)
		return 0;
	s = &m->ser[series];
	if (has_window && s->sorted)
		k = bsearchd_lower(s->time, 0, s->n, wstart);
	for (; k < s->n; k++) {
		double t = s->time[k];
		if (has_window) {
			if (t > wend) {
				if (s->sorted)
					break;
				continue;
			}
			if (t < wstart)
				continue;
		}
		if ((rc = emit_point(m, s, k, fn, ctx)))
			return rc;
	}
	return 0;
}

int memrows_points_before(const struct memrows *m, int64_t series, double t,
                          row_point_fn fn, void *ctx)
{
	const struct mseries *s;
	double at = -INFINITY;
	int found = 0, rc;
	size_t k, from = 0, to;

	if (series < 0 || (size_t)series >= m->nser)
		return 0;
	s = &m->ser[series];
	if (s->sorted) {
		to = bsearchd_lower(s->time, 0, s->n, t);
		if (to == 0)
			return 0;
		at = s->time[to - 1];
		from = bsearchd_lower(s->time, 0, to, at);
		for (k = from; k < to; k++)
			if ((rc = emit_point(m, s, k, fn, ctx)))
				return rc;
		return 0;
	}
	for (k = 0; k < s->n; k++) {
		if (s->time[k] < t && (!found || s->time[k] > at)) {
			at = s->time[k];
			found = 1;
		}
	}
	if (!found)
		return 0;
	for (k = 0; k < s->n; k++)
		if (s->time[k] == at && (rc = emit_point(m, s, k, fn, ctx)))
			return rc;
	return 0;
}
