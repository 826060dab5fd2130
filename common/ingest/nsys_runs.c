/* nsys_runs: a table read in key order as a merge of its runs (see
 * nsys_runs.h). */
#include "ingest/nsys_runs.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/vec.h"

/* One run being read: its statement and the key of its current row. */
struct run {
	sqlite3_stmt *st;
	int bad;              /* the current row's key is not all integers */
	int64_t k[2], rowid;
};

struct nsys_runs {
	const struct nsys_export *x;
	const char *table;
	int nkey;
	sqlite3_stmt *sorted;   /* the fallback: one ORDER BY statement */
	struct run *runs;
	size_t nruns;
	size_t *heap;           /* indexes of runs with a current row */
	size_t nheap;
	int started;
};

/* ERR_DATA naming the export and table (returns it). */
static int sqlerr(const struct nsys_runs *r, int rc, const char *table,
                  struct err *e)
{
	char what[96];
	snprintf(what, sizeof what, "reading %s", table);
	return nsys_export_sqlerr(r->x, rc, what, e);
}

/* -1, 0, 1 as run a's current row orders before, with, after run b's. */
static int cmp(const struct nsys_runs *r, const struct run *a,
               const struct run *b)
{
	if (a->bad != b->bad)
		return a->bad ? -1 : 1;
	if (!a->bad)
		for (int i = 0; i < r->nkey; i++)
			if (a->k[i] != b->k[i])
				return a->k[i] < b->k[i] ? -1 : 1;
	return (a->rowid > b->rowid) - (a->rowid < b->rowid);
}

/* Reads the key of st's current row into u. */
static void load_key(int nkey, sqlite3_stmt *st, struct run *u)
{
	u->rowid = sqlite3_column_int64(st, 0);
	u->bad = 0;
	for (int i = 0; i < nkey; i++) {
		sqlite3_value *x = sqlite3_column_value(st, 1 + i);
		if (sqlite3_value_type(x) != SQLITE_INTEGER)
			u->bad = 1;
		u->k[i] = sqlite3_value_int64(x);
	}
}

/* The first pass: the rowids where runs start (*bounds, owned by the
 * caller); *n > NSYS_RUNS_MAX means too many.  It reads every row, also
 * those the filter drops: a run in order over all rows is in order over
 * the kept ones, and no filter is evaluated twice. */
static int find_runs(struct nsys_runs *r, const char *table, const char *keys,
                     int64_t **bounds, size_t *n, struct err *e)
{
	struct buf q;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;
	buf_init(&q, 0);
	buf_printf(&q, "SELECT rowid, %s FROM \"%s\" ORDER BY rowid", keys,
	           table);
	if (q.failed) {
		buf_free(&q);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	rc = sqlite3_prepare_v2(r->x->db, q.data, -1, &st, NULL);
	buf_free(&q);
	if (rc != SQLITE_OK)
		return sqlerr(r, rc, table, e);
	struct run prev = {0}, cur;
	int have = 0;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		load_key(r->nkey, st, &cur);
		if (cur.bad)
			continue;
		if (!have || cmp(r, &cur, &prev) < 0) {
			if (*n == NSYS_RUNS_MAX) {
				*n = NSYS_RUNS_MAX + 1; /* too many */
				rc = SQLITE_DONE;
				break;
			}
			if (vec_reserve(bounds, &cap, *n + 1, sizeof **bounds)) {
				sqlite3_finalize(st);
				return err_set(e, ERR_NOMEM, "out of memory");
			}
			(*bounds)[(*n)++] = have ? cur.rowid : INT64_MIN;
		}
		prev = cur;
		have = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sqlerr(r, rc, table, e);
	if (*n == 0) {
		/* no row with a key: one run still reads those without */
		if (vec_reserve(bounds, &cap, 1, sizeof **bounds))
			return err_set(e, ERR_NOMEM, "out of memory");
		(*bounds)[(*n)++] = INT64_MIN;
	}
	return 0;
}

int nsys_runs_open(const struct nsys_export *x, const char *table,
                   const char *keys, int nkey, const char *rest,
                   const char *where, struct nsys_runs **out, struct err *e)
{
	struct nsys_runs *r = calloc(1, sizeof *r);
	int64_t *bounds = NULL;
	size_t n = 0;
	struct buf q;
	int rc;
	*out = r;
	if (!r)
		return err_set(e, ERR_NOMEM, "out of memory");
	r->x = x;
	r->table = table;
	r->nkey = nkey;
	if ((rc = find_runs(r, table, keys, &bounds, &n, e)) != 0) {
		free(bounds);
		return rc;
	}
	buf_init(&q, 0);
	buf_printf(&q, "SELECT rowid, %s%s%s FROM \"%s\"", keys, rest ? ", " : "",
	           rest ? rest : "", table);
	if (n > NSYS_RUNS_MAX)
		buf_printf(&q, "%s%s ORDER BY %s, rowid", where ? " WHERE " : "",
		           where ? where : "", keys);
	else
		buf_printf(&q, " WHERE rowid BETWEEN ?1 AND ?2%s%s%s ORDER BY "
		           "rowid", where ? " AND (" : "", where ? where : "",
		           where ? ")" : "");
	if (q.failed) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	if (n > NSYS_RUNS_MAX) {
		rc = sqlite3_prepare_v2(x->db, q.data, -1, &r->sorted, NULL);
		if (rc != SQLITE_OK)
			rc = sqlerr(r, rc, table, e);
		goto out;
	}
	r->runs = calloc(n ? n : 1, sizeof *r->runs);
	r->heap = calloc(n ? n : 1, sizeof *r->heap);
	if (!r->runs || !r->heap) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		rc = sqlite3_prepare_v2(x->db, q.data, -1, &r->runs[i].st, NULL);
		if (rc != SQLITE_OK) {
			rc = sqlerr(r, rc, table, e);
			goto out;
		}
		r->nruns++;
		sqlite3_bind_int64(r->runs[i].st, 1, bounds[i]);
		sqlite3_bind_int64(r->runs[i].st, 2, i + 1 < n ? bounds[i + 1] - 1
		                                                : INT64_MAX);
	}
	rc = 0;
out:
	buf_free(&q);
	free(bounds);
	return rc;
}

static void sift_down(struct nsys_runs *r, size_t i)
{
	size_t *h = r->heap;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < r->nheap && cmp(r, &r->runs[h[l]], &r->runs[h[m]]) < 0)
			m = l;
		if (l + 1 < r->nheap &&
		    cmp(r, &r->runs[h[l + 1]], &r->runs[h[m]]) < 0)
			m = l + 1;
		if (m == i)
			return;
		size_t t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Steps run i: 1 with a row (its key loaded), 0 at its end. */
static int step_run(struct nsys_runs *r, size_t i, struct err *e)
{
	struct run *u = &r->runs[i];
	int rc = sqlite3_step(u->st);
	if (rc == SQLITE_ROW) {
		load_key(r->nkey, u->st, u);
		return 1;
	}
	if (rc != SQLITE_DONE) {
		sqlerr(r, rc, r->table, e);
		return -1;
	}
	return 0;
}

int nsys_runs_next(struct nsys_runs *r, sqlite3_stmt **row, struct err *e)
{
	int rc;
	if (r->sorted) {
		rc = sqlite3_step(r->sorted);
		if (rc == SQLITE_ROW) {
			*row = r->sorted;
			return 1;
		}
		if (rc != SQLITE_DONE) {
			sqlerr(r, rc, r->table, e);
			return -1;
		}
		return 0;
	}
	if (!r->started) {
		r->started = 1;
		for (size_t i = 0; i < r->nruns; i++) {
			if ((rc = step_run(r, i, e)) < 0)
				return rc;
			if (rc)
				r->heap[r->nheap++] = i;
		}
		for (size_t i = r->nheap; i-- > 0;)
			sift_down(r, i);
	} else if (r->nheap) {
		if ((rc = step_run(r, r->heap[0], e)) < 0)
			return rc;
		if (!rc)
			r->heap[0] = r->heap[--r->nheap];
		sift_down(r, 0);
	}
	if (!r->nheap)
		return 0;
	*row = r->runs[r->heap[0]].st;
	return 1;
}

int nsys_runs_count(const struct nsys_runs *r)
{
	return r->sorted ? 0 : (int)r->nruns;
}

void nsys_runs_close(struct nsys_runs *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->sorted);
	for (size_t i = 0; i < r->nruns; i++)
		sqlite3_finalize(r->runs[i].st);
	free(r->runs);
	free(r->heap);
	free(r);
}
