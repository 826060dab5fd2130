/* store_ordered: ranges in start order (see store_ordered.h). */
#include "store/store_ordered.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "base/vec.h"

static const char run_sql[] =
	"SELECT ordinal, start, end, name, tid, source_row FROM events "
	"INDEXED BY event_window WHERE profile = ?1 AND bucket = ?2 "
	"AND start >= ?3 AND start <= ?4 ORDER BY start";

struct store_ordered {
	struct store *s;
	sqlite3_stmt *buckets; /* (bucket, maximum) of a profile */
	sqlite3_stmt **pool;   /* one per run */
	size_t npool;
};

int store_ordered_open(struct store *s, struct store_ordered **out,
                       struct err *e)
{
	struct store_ordered *o = calloc(1, sizeof *o);

	*out = NULL;
	if (!o)
		return err_set(e, ERR_NOMEM, "out of memory");
	o->s = s;
	if (sqlite3_prepare_v3(store_db(s),
	                       "SELECT bucket, maximum FROM durations "
	                       "WHERE profile = ?1",
	                       -1, SQLITE_PREPARE_PERSISTENT, &o->buckets,
	                       NULL) != SQLITE_OK) {
		err_set(e, ERR_DATA, "cannot read durations: %s",
		        sqlite3_errmsg(store_db(s)));
		store_ordered_close(o);
		return ERR_DATA;
	}
	*out = o;
	return 0;
}

void store_ordered_close(struct store_ordered *o)
{
	if (!o)
		return;
	sqlite3_finalize(o->buckets);
	for (size_t k = 0; k < o->npool; k++)
		sqlite3_finalize(o->pool[k]);
	free(o->pool);
	free(o);
}

/* Statement k of the pool, prepared on first use. */
static sqlite3_stmt *pool_get(struct store_ordered *o, size_t k)
{
	if (vec_reserve_zero(&o->pool, &o->npool, k + 1, sizeof *o->pool))
		return NULL;
	if (!o->pool[k] &&
	    sqlite3_prepare_v3(store_db(o->s), run_sql, -1,
	                       SQLITE_PREPARE_PERSISTENT, &o->pool[k],
	                       NULL) != SQLITE_OK)
		return NULL;
	return o->pool[k];
}

struct run {
	sqlite3_stmt *st;
	double start; /* of the current row */
};

static void sift_down(struct run *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l].start < h[m].start)
			m = l;
		if (r < n && h[r].start < h[m].start)
			m = r;
		if (m == i)
			return;
		struct run t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Steps run r to its next row with end >= wstart: 1 row, 0 exhausted,
 * -1 error. */
static int advance(struct run *r, double wstart)
{
	int rc;

	while ((rc = sqlite3_step(r->st)) == SQLITE_ROW) {
		if (sqlite3_column_double(r->st, 2) >= wstart) {
			r->start = sqlite3_column_double(r->st, 1);
			return 1;
		}
	}
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_ordered_events(struct store_ordered *o, int64_t profile,
                         double wstart, double wend, row_event_fn fn,
                         void *ctx, struct err *e)
{
	sqlite3 *db = store_db(o->s);
	struct run *h = NULL;
	size_t n = 0, cap = 0;
	int rc, r;

	if ((rc = store_check_durations(o->s, profile, e)))
		return rc;
	sqlite3_bind_int64(o->buckets, 1, profile);
	while ((r = sqlite3_step(o->buckets)) == SQLITE_ROW) {
		double maximum = sqlite3_column_double(o->buckets, 1);
		double lower = nextafter(wstart - nextafter(maximum, INFINITY),
		                         -INFINITY);
		sqlite3_stmt *st;
		if (isnan(lower))
			lower = -INFINITY;
		if (vec_reserve(&h, &cap, n + 1, sizeof *h)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		st = pool_get(o, n);
		if (!st) {
			rc = err_set(e, ERR_DATA, "cannot read events: %s",
			             sqlite3_errmsg(db));
			break;
		}
		sqlite3_bind_int64(st, 1, profile);
		sqlite3_bind_int64(st, 2, sqlite3_column_int64(o->buckets, 0));
		sqlite3_bind_double(st, 3, lower);
		sqlite3_bind_double(st, 4, wend);
		h[n].st = st;
		n++;
	}
	sqlite3_reset(o->buckets);
	if (!rc && r != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "cannot read durations: %s",
		             sqlite3_errmsg(db));
	/* first rows, then heapify */
	size_t live = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		r = advance(&h[k], wstart);
		if (r < 0)
			rc = err_set(e, ERR_DATA, "cannot read events: %s",
			             sqlite3_errmsg(db));
		else if (r)
			h[live++] = h[k];
		else
			sqlite3_reset(h[k].st);
	}
	for (size_t k = live; k-- > 0;)
		sift_down(h, live, k);
	while (!rc && live) {
		struct row_event ev;
		int64_t ordinal;
		rc = store_event_decode(o->s, profile, h[0].st, &ordinal, &ev, e);
		if (rc || (rc = fn(ctx, ordinal, &ev)))
			break;
		r = advance(&h[0], wstart);
		if (r < 0) {
			rc = err_set(e, ERR_DATA, "cannot read events: %s",
			             sqlite3_errmsg(db));
			break;
		}
		if (!r) {
			sqlite3_reset(h[0].st);
			h[0] = h[--live];
		}
		sift_down(h, live, 0);
	}
	for (size_t k = 0; k < n; k++)
		if (h && h[k].st)
			sqlite3_reset(h[k].st);
	free(h);
	return rc;
}
