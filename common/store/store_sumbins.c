/* store_sumbins: per-second bins of CPU samples and metric points (see
 * store_sumbins.h for the layout and why they are exact). */
#include "store/store_sumbins.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/qsum.h"
#include "base/vec.h"
#include "store/store_sumio.h"

/* Bins per profile or series at most; point bins allocated for every
 * series together at most (the build's extra memory stays bounded: about
 * 100 bytes a point bin, 110 MB in all). */
#define BINS_MAX (1 << 22)
#define POINT_BINS_MAX (1 << 20)
/* The width written (seconds). */
static const double width = 1.0;

struct sample_acc {
	int64_t *count; /* per bin */
	size_t nbins;
	int bad;
};

/* A number held in 16 bytes (a bin's min or max): an integer, a real, or
 * the digits of an integer beyond 64 bits (owned, malloc). */
struct cnum {
	union {
		int64_t i;
		double d;
		char *big;
	} u;
	uint32_t big_len;
	uint8_t kind; /* enum num_kind */
};

/* One bin of a series: non-null values only. */
struct point_bin {
	struct qsum sum;
	int64_t samples;
	int64_t min_ord, max_ord;
	struct cnum min, max;
};

struct series_acc {
	struct point_bin *bins;
	size_t nbins;
	int bad;
};

struct store_sumbins_acc {
	struct sample_acc *prof;
	size_t nprof;
	struct series_acc *ser;
	size_t nser;
	size_t point_bins; /* allocated, every series together */
};

struct store_sumbins_acc *store_sumbins_acc_new(void)
{
	return calloc(1, sizeof(struct store_sumbins_acc));
}

static void free_big(struct cnum *n)
{
	if (n->kind == NUM_BIG)
		free(n->u.big);
	n->kind = NUM_NULL;
}

/* The number c holds (big digits borrowed from c). */
static struct num cnum_get(const struct cnum *c)
{
	struct num n;

	memset(&n, 0, sizeof n);
	n.kind = (enum num_kind)c->kind;
	if (n.kind == NUM_INT) {
		n.i = c->u.i;
		n.d = (double)n.i;
	} else if (n.kind == NUM_BIG) {
		n.big = c->u.big;
		n.big_len = c->big_len;
		n.d = num_to_double(&n);
	} else {
		n.d = c->u.d;
	}
	return n;
}

static void drop_series(struct store_sumbins_acc *a, struct series_acc *s)
{
	for (size_t b = 0; b < s->nbins; b++) {
		qsum_free(&s->bins[b].sum);
		free_big(&s->bins[b].min);
		free_big(&s->bins[b].max);
	}
	a->point_bins -= s->nbins;
	free(s->bins);
	s->bins = NULL;
	s->nbins = 0;
	s->bad = 1;
}

void store_sumbins_acc_free(struct store_sumbins_acc *a)
{
	if (!a)
		return;
	for (size_t k = 0; k < a->nprof; k++)
		free(a->prof[k].count);
	for (size_t k = 0; k < a->nser; k++)
		drop_series(a, &a->ser[k]);
	free(a->prof);
	free(a->ser);
	free(a);
}

int store_sumbins_sample(struct store_sumbins_acc *a, int64_t profile,
                         double time, struct err *e)
{
	struct sample_acc *p;
	int64_t bin;

	if (profile < 0)
		return 0;
	if (vec_reserve_zero(&a->prof, &a->nprof, (size_t)profile + 1,
	                     sizeof *a->prof))
		return err_set(e, ERR_NOMEM, "out of memory summarising samples");
	p = &a->prof[profile];
	if (p->bad || !(time >= 0))
		return 0; /* NaN or before every bin: no window bins serve */
	bin = store_sumio_bin(time, width, BINS_MAX);
	if (bin < 0) {
		free(p->count);
		p->count = NULL;
		p->nbins = 0;
		p->bad = 1;
		return 0;
	}
	if (vec_reserve_zero(&p->count, &p->nbins, (size_t)bin + 1,
	                     sizeof *p->count))
		return err_set(e, ERR_NOMEM, "out of memory summarising samples");
	p->count[bin]++;
	return 0;
}

/* *held = v, big digits copied; -1 out of memory or digits too long. */
static int hold(struct cnum *held, const struct num *v)
{
	char *big = NULL;
	if (v->kind == NUM_BIG) {
		if (v->big_len > UINT32_MAX ||
		    !(big = malloc(v->big_len ? v->big_len : 1)))
			return -1;
		memcpy(big, v->big, v->big_len);
	}
	free_big(held);
	held->kind = (uint8_t)v->kind;
	if (big) {
		held->u.big = big;
		held->big_len = (uint32_t)v->big_len;
	} else if (v->kind == NUM_INT) {
		held->u.i = v->i;
	} else {
		held->u.d = v->d;
	}
	return 0;
}

/* Keeps v (ordinal ord) in *held when it is smaller (sign -1) or larger
 * (sign 1) than it, or equal with a smaller ordinal (first: no value
 * yet).  -1 out of memory. */
static int keep(struct cnum *held, int64_t *held_ord, const struct num *v,
                int64_t ord, int sign, int first)
{
	struct num h = cnum_get(held);
	int c = first ? 0 : num_cmp(v, &h);
	if (first || c * sign > 0 || (c == 0 && ord < *held_ord)) {
		*held_ord = ord;
		return hold(held, v);
	}
	return 0;
}

int store_sumbins_point(struct store_sumbins_acc *a, int64_t series,
                        int64_t ordinal, double time, const struct num *v,
                        struct err *e)
{
	struct series_acc *s;
	struct point_bin *pb;
	int64_t bin;
	size_t old;

	if (series < 0)
		return 0;
	if (vec_reserve_zero(&a->ser, &a->nser, (size_t)series + 1,
	                     sizeof *a->ser))
		return err_set(e, ERR_NOMEM, "out of memory summarising points");
	s = &a->ser[series];
	if (s->bad || v->kind == NUM_NULL || !(time >= 0))
		return 0; /* nulls are not samples; NaN or negative: no bin */
	bin = store_sumio_bin(time, width, BINS_MAX);
	if (bin < 0) {
		drop_series(a, s);
		return 0;
	}
	old = s->nbins;
	if ((size_t)bin >= old) {
		size_t cap = old;
		if (vec_reserve_zero(&s->bins, &cap, (size_t)bin + 1,
		                     sizeof *s->bins))
			return err_set(e, ERR_NOMEM,
			               "out of memory summarising points");
		s->nbins = cap;
		a->point_bins += cap - old;
		if (a->point_bins > POINT_BINS_MAX) {
			drop_series(a, s); /* the budget is spent: scan it */
			return 0;
		}
	}
	pb = &s->bins[bin];
	if (keep(&pb->min, &pb->min_ord, v, ordinal, -1, !pb->samples) ||
	    keep(&pb->max, &pb->max_ord, v, ordinal, 1, !pb->samples))
		return err_set(e, ERR_NOMEM, "out of memory summarising points");
	pb->samples++;
	qsum_add(&pb->sum, num_to_double(v));
	if (qsum_failed(&pb->sum))
		return err_set(e, ERR_NOMEM, "out of memory summarising points");
	return 0;
}

/* ---- writing ---- */

static const char schema_sql[] =
	"CREATE TABLE dsight_summary_sample_bin_profiles (profile INTEGER,"
	" width REAL, PRIMARY KEY (profile, width)) WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_sample_bins (profile INTEGER, width REAL,"
	" bin INTEGER, samples INTEGER, PRIMARY KEY (profile, width, bin))"
	" WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_point_bin_series (series INTEGER,"
	" width REAL, PRIMARY KEY (series, width)) WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_point_bins (series INTEGER, width REAL,"
	" bin INTEGER, samples INTEGER, min, min_ordinal INTEGER,"
	" max, max_ordinal INTEGER, sum_parts BLOB,"
	" PRIMARY KEY (series, width, bin)) WITHOUT ROWID;";

enum { W_SPROF, W_SBIN, W_PSER, W_PBIN, W_COUNT };

static const char *const write_sql[W_COUNT] = {
	"INSERT INTO dsight_summary_sample_bin_profiles VALUES (?1, ?2)",
	"INSERT INTO dsight_summary_sample_bins VALUES (?1, ?2, ?3, ?4)",
	"INSERT INTO dsight_summary_point_bin_series VALUES (?1, ?2)",
	("INSERT INTO dsight_summary_point_bins VALUES "
	 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
};

/* An integer as an SQLite INTEGER, a real as a REAL (the columns have
 * no affinity: -0.0 and 2.0 stay reals), an integer beyond 64 bits as the
 * TEXT of its digits. */
static void bind_num(sqlite3_stmt *st, int k, const struct num *n)
{
	if (n->kind == NUM_INT)
		sqlite3_bind_int64(st, k, n->i);
	else if (n->kind == NUM_BIG)
		sqlite3_bind_text(st, k, n->big, (int)n->big_len, SQLITE_STATIC);
	else
		sqlite3_bind_double(st, k, n->d);
}

static int write_samples(sqlite3 *db, sqlite3_stmt *const *st, size_t k,
                         const struct sample_acc *p, struct err *e)
{
	int rc = 0;

	for (size_t b = 0; p && b < p->nbins && !rc; b++) {
		if (!p->count[b])
			continue;
		sqlite3_bind_int64(st[W_SBIN], 1, (sqlite3_int64)k);
		sqlite3_bind_double(st[W_SBIN], 2, width);
		sqlite3_bind_int64(st[W_SBIN], 3, (sqlite3_int64)b);
		sqlite3_bind_int64(st[W_SBIN], 4, p->count[b]);
		rc = store_sumio_step(db, st[W_SBIN], e);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(st[W_SPROF], 1, (sqlite3_int64)k);
	sqlite3_bind_double(st[W_SPROF], 2, width);
	return store_sumio_step(db, st[W_SPROF], e);
}

static int write_points(sqlite3 *db, sqlite3_stmt *const *st, size_t k,
                        const struct series_acc *s, unsigned char **blob, size_t *cap, struct err *e)
{
	sqlite3_stmt *pb = st[W_PBIN];
	int rc = 0;

	for (size_t b = 0; s && b < s->nbins; b++)
		if (s->bins[b].sum.special)
			return 0; /* an infinite sum has no parts: scan */
	for (size_t b = 0; s && b < s->nbins && !rc; b++) {
		const struct point_bin *p = &s->bins[b];
		if (!p->samples)
			continue;
		sqlite3_bind_int64(pb, 1, (sqlite3_int64)k);
		sqlite3_bind_double(pb, 2, width);
		sqlite3_bind_int64(pb, 3, (sqlite3_int64)b);
		sqlite3_bind_int64(pb, 4, p->samples);
		struct num min = cnum_get(&p->min), max = cnum_get(&p->max);
		bind_num(pb, 5, &min);
		sqlite3_bind_int64(pb, 6, p->min_ord);
		bind_num(pb, 7, &max);
		sqlite3_bind_int64(pb, 8, p->max_ord);
		if (store_sumio_bind_parts(pb, 9, &p->sum, blob, cap))
			return err_set(e, ERR_NOMEM, "out of memory");
		rc = store_sumio_step(db, pb, e);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(st[W_PSER], 1, (sqlite3_int64)k);
	sqlite3_bind_double(st[W_PSER], 2, width);
	return store_sumio_step(db, st[W_PSER], e);
}

int store_sumbins_write(struct store_sumbins_acc *a, sqlite3 *db,
                        size_t nprof, size_t nser, struct err *e)
{
	sqlite3_stmt *st[W_COUNT] = {NULL};
	unsigned char *blob = NULL;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	for (int k = 0; k < W_COUNT && !rc; k++)
		if (sqlite3_prepare_v2(db, write_sql[k], -1, &st[k], NULL) !=
		    SQLITE_OK)
			rc = store_sumio_fail(db, e);
	for (size_t k = 0; k < nprof && !rc; k++) {
		const struct sample_acc *p = k < a->nprof ? &a->prof[k] : NULL;
		if (!p || !p->bad)
			rc = write_samples(db, st, k, p, e);
	}
	for (size_t k = 0; k < nser && !rc; k++) {
		const struct series_acc *s = k < a->nser ? &a->ser[k] : NULL;
		if (!s || !s->bad)
			rc = write_points(db, st, k, s, &blob, &cap, e);
	}
	for (int k = 0; k < W_COUNT; k++)
		sqlite3_finalize(st[k]);
	free(blob);
	return rc;
}

/* ---- reading ---- */

enum { R_SPROF, R_SBIN, R_PSER, R_PBIN, R_COUNT };

static const char *const read_sql[R_COUNT] = {
	"SELECT 1 FROM dsight_summary_sample_bin_profiles WHERE profile = ?1"
	" AND width = ?2",
	"SELECT bin, samples FROM dsight_summary_sample_bins WHERE"
	" profile = ?1 AND width = ?2 AND bin >= ?3 AND bin < ?4",
	"SELECT 1 FROM dsight_summary_point_bin_series WHERE series = ?1"
	" AND width = ?2",
	"SELECT bin, samples, min, min_ordinal, max, max_ordinal, sum_parts"
	" FROM dsight_summary_point_bins WHERE series = ?1 AND width = ?2"
	" AND bin >= ?3 AND bin < ?4",
};

struct store_sumbins {
	sqlite3 *db;
	sqlite3_stmt *st[R_COUNT];
	double *parts;
	size_t cap;
};

void store_sumbins_close(struct store_sumbins *s)
{
	if (!s)
		return;
	for (int k = 0; k < R_COUNT; k++)
		sqlite3_finalize(s->st[k]);
	free(s->parts);
	free(s);
}

int store_sumbins_open(sqlite3 *db, struct store_sumbins **out,
                       struct err *e)
{
	struct store_sumbins *s = calloc(1, sizeof *s);

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	s->db = db;
	for (int k = 0; k < R_COUNT; k++)
		if (sqlite3_prepare_v3(db, read_sql[k], -1,
		                       SQLITE_PREPARE_PERSISTENT, &s->st[k],
		                       NULL) != SQLITE_OK) {
			store_sumbins_close(s); /* an older cache: no bins */
			return 0;
		}
	*out = s;
	return 0;
}

static int rd_fail(struct store_sumbins *s, struct err *e)
{
	return err_set(e, ERR_DATA, "cannot read the summaries: %s",
	               sqlite3_errmsg(s->db));
}

/* Steps the membership lookup st for (item, w): 1 listed, 0 not, else
 * -(an ERR_* code). */
static int listed(struct store_sumbins *s, sqlite3_stmt *st, int64_t item,
                  double w, struct err *e)
{
	int rc;
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_double(st, 2, w);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : -rd_fail(s, e);
}

/* Binds (item, w, i0, i1) to the range query st. */
static void bind_range(sqlite3_stmt *st, int64_t item, double w, int64_t i0,
                       int64_t i1)
{
	sqlite3_bind_int64(st, 1, item);
	sqlite3_bind_double(st, 2, w);
	sqlite3_bind_int64(st, 3, i0);
	sqlite3_bind_int64(st, 4, i1);
}

/* One row of a range query, decoded and handed to the caller's fn. */
struct walk {
	store_sumbins_sample_fn sample_fn;
	store_sumbins_point_fn point_fn;
	void *ctx;
	int64_t item;
};

/* A stored min or max: an INTEGER, a finite REAL, or the digits of an
 * integer beyond 64 bits (out->big borrowed from st's row). */
static int column_num(sqlite3_stmt *st, int col, struct num *out)
{
	const char *t;

	memset(out, 0, sizeof *out);
	switch (sqlite3_column_type(st, col)) {
	case SQLITE_TEXT:
		t = (const char *)sqlite3_column_text(st, col);
		return t && !num_parse(t, (size_t)sqlite3_column_bytes(st, col),
		                       out) && out->kind == NUM_BIG ? 0 : -1;
	case SQLITE_INTEGER:
		out->kind = NUM_INT;
		out->i = sqlite3_column_int64(st, col);
		out->d = (double)out->i;
		return 0;
	case SQLITE_FLOAT:
		out->kind = NUM_REAL;
		out->d = sqlite3_column_double(st, col);
		return isfinite(out->d) ? 0 : -1;
	default:
		return -1;
	}
}

static int point_row(struct store_sumbins *s, sqlite3_stmt *st,
                     const struct walk *wk, struct err *e)
{
	struct store_sumbins_point p;
	long n = store_sumio_parts(st, 6, &s->parts, &s->cap, 0);

	p.bin = sqlite3_column_int64(st, 0);
	p.samples = sqlite3_column_int64(st, 1);
	p.min_ordinal = sqlite3_column_int64(st, 3);
	p.max_ordinal = sqlite3_column_int64(st, 5);
	if (n < 0 || p.samples < 1 || column_num(st, 2, &p.min) ||
	    column_num(st, 4, &p.max))
		return err_set(e, ERR_DATA, "dsight_summary_point_bins: the "
		               "bins of series %lld are malformed; the report was "
		               "altered: rebuild it", (long long)wk->item);
	p.sum = s->parts;
	p.nsum = (size_t)n;
	return wk->point_fn(wk->ctx, &p);
}

/* Walks the bins i0..i1-1 of item at width w with query st when the
 * membership lookup lst lists it (*have 1). */
static int walk_bins(struct store_sumbins *s, sqlite3_stmt *lst,
                     sqlite3_stmt *st, const struct row_bins *b, int *have,
                     const struct walk *wk, struct err *e)
{
	int rc = listed(s, lst, wk->item, b->width, e);

	*have = 0;
	if (rc <= 0)
		return -rc;
	bind_range(st, wk->item, b->width, b->i0, b->i1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = wk->point_fn ? point_row(s, st, wk, e)
		                  : wk->sample_fn(wk->ctx,
		                                  sqlite3_column_int64(st, 0),
		                                  sqlite3_column_int64(st, 1));
		if (rc) {
			sqlite3_reset(st);
			return rc;
		}
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return rd_fail(s, e);
	*have = 1;
	return 0;
}

int store_sumbins_samples(struct store_sumbins *s, const struct row_bins *b,
                          int *have, store_sumbins_sample_fn fn, void *ctx,
                          struct err *e)
{
	struct walk wk = {fn, NULL, ctx, b->id};
	*have = 0;
	if (!s)
		return 0;
	return walk_bins(s, s->st[R_SPROF], s->st[R_SBIN], b, have, &wk, e);
}

int store_sumbins_points(struct store_sumbins *s, const struct row_bins *b,
                         int *have, store_sumbins_point_fn fn, void *ctx,
                         struct err *e)
{
	struct walk wk = {NULL, fn, ctx, b->id};
	*have = 0;
	if (!s)
		return 0;
	return walk_bins(s, s->st[R_PSER], s->st[R_PBIN], b, have, &wk, e);
}
