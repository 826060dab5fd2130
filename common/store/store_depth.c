/* store_depth: NVTX nesting depth (see store_depth.h). */
#include "store/store_depth.h"

#include <stdlib.h>
#include <string.h>

#include "base/strdict.h"
#include "base/vec.h"

/* One range of the profile being read. */
struct range {
	double start, end;
	int64_t ordinal;
	size_t thread; /* its thread's id in the profile */
};

/* An end and the range it belongs to, for ranking the ends. */
struct ranked {
	double end;
	size_t k;
};

/* The ranges of one profile and the scratch of the counts (reused). */
struct work {
	struct range *r, *byth; /* stored order; grouped by thread */
	size_t n, cap, bycap;
	size_t *start;          /* per thread: its first index in byth */
	size_t scap;
	struct ranked *byend;   /* one thread's ends, sorted */
	size_t bcap;
	size_t *rank;           /* per range: how many ends are below its end */
	size_t rcap;
	int *tree;              /* Fenwick tree over the ranks */
	size_t tcap;
	struct strdict tids;    /* the profile's tid texts -> thread ids */
};

static int cmp_end(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->end;
	double y = ((const struct ranked *)b)->end;
	return (x > y) - (x < y);
}

/* Containment order: start ascending, end descending, stored order. */
static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

/*
 * Writes the depths of one thread's n ranges r, in containment order:
 * every range that contains r[k] comes before it, and a range before r[k]
 * contains it exactly when its end is >= r[k].end.  So depth = k - (the
 * ranges before that end below r[k].end), counted with a Fenwick tree over
 * the ranks of the ends.
 */
static int thread_depths(struct work *w, const struct range *r, size_t n,
                         int64_t profile, sqlite3_stmt *ins, sqlite3 *db,
                         struct err *e)
{
	if (vec_reserve(&w->byend, &w->bcap, n, sizeof *w->byend) ||
	    vec_reserve(&w->rank, &w->rcap, n, sizeof *w->rank) ||
	    vec_reserve(&w->tree, &w->tcap, n + 1, sizeof *w->tree))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	for (size_t k = 0; k < n; k++) {
		w->byend[k].end = r[k].end;
		w->byend[k].k = k;
	}
	qsort(w->byend, n, sizeof *w->byend, cmp_end);
	for (size_t i = 0, first = 0; i < n; i++) {
		if (i && w->byend[i].end != w->byend[i - 1].end)
			first = i;
		w->rank[w->byend[i].k] = first;
	}
	memset(w->tree, 0, (n + 1) * sizeof *w->tree);
	for (size_t k = 0; k < n; k++) {
		int64_t lower = 0, depth;
		for (size_t i = w->rank[k]; i > 0; i -= i & -i)
			lower += w->tree[i];
		for (size_t i = w->rank[k] + 1; i <= n; i += i & -i)
			w->tree[i]++;
		depth = (int64_t)k - lower;
		if (!depth)
			continue;
		sqlite3_bind_int64(ins, 1, profile);
		sqlite3_bind_int64(ins, 2, r[k].ordinal);
		sqlite3_bind_int64(ins, 3, depth);
		int rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		if (rc != SQLITE_DONE)
			return err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
			               sqlite3_errmsg(db));
	}
	return 0;
}

/* Groups the profile's ranges by thread (stably: the stored order, start
 * ascending and end descending, then needs no sort), orders any thread
 * that is not in containment order, and writes the depths. */
static int profile_depths(struct work *w, int64_t profile, sqlite3_stmt *ins,
                          sqlite3 *db, struct err *e)
{
	size_t nth = w->tids.count + 1; /* the last: rows without a tid */
	int rc = 0;

	if (!w->n)
		return 0;
	if (vec_reserve(&w->byth, &w->bycap, w->n, sizeof *w->byth) ||
	    vec_reserve(&w->start, &w->scap, nth + 1, sizeof *w->start))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	memset(w->start, 0, (nth + 1) * sizeof *w->start);
	for (size_t k = 0; k < w->n; k++)
		w->start[w->r[k].thread + 1]++;
	for (size_t t = 0; t < nth; t++)
		w->start[t + 1] += w->start[t];
	for (size_t k = 0; k < w->n; k++)
		w->byth[w->start[w->r[k].thread]++] = w->r[k];
	for (size_t t = 0, from = 0; t < nth && !rc; t++) {
		size_t to = w->start[t], m = to - from;
		struct range *seg = w->byth + from;
		for (size_t k = 1; k < m; k++)
			if (cmp_range(&seg[k - 1], &seg[k]) > 0) {
				qsort(seg, m, sizeof *seg, cmp_range);
				break;
			}
		rc = thread_depths(w, seg, m, profile, ins, db, e);
		from = to;
	}
	w->n = 0;
	strdict_free(&w->tids);
	strdict_init(&w->tids);
	return rc;
}

/* Adds the row of st (profile, tid, start, end, ordinal) to the profile
 * being read. */
static int add_range(struct work *w, sqlite3_stmt *st, struct err *e)
{
	struct range *r;
	size_t thread = SIZE_MAX;

	if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
		const void *tid = sqlite3_column_blob(st, 1);
		int64_t id = strdict_intern(&w->tids, tid ? tid : "",
		                            (size_t)sqlite3_column_bytes(st, 1),
		                            NULL);
		if (id < 0)
			return err_set(e, ERR_NOMEM, "out of memory");
		thread = (size_t)id;
	}
	if (vec_reserve(&w->r, &w->cap, w->n + 1, sizeof *w->r))
		return err_set(e, ERR_NOMEM, "out of memory");
	r = &w->r[w->n++];
	r->start = sqlite3_column_double(st, 2);
	r->end = sqlite3_column_double(st, 3);
	r->ordinal = sqlite3_column_int64(st, 4);
	r->thread = thread;
	return 0;
}

/* Rows without a tid were given SIZE_MAX: their thread is the last. */
static void place_untid(struct work *w)
{
	for (size_t k = 0; k < w->n; k++)
		if (w->r[k].thread == SIZE_MAX)
			w->r[k].thread = w->tids.count;
}

int store_depth_write(sqlite3 *db, struct err *e)
{
	static const char *const create =
		"CREATE TABLE " STORE_DEPTH_TABLE " (profile INTEGER,"
		" ordinal INTEGER, depth INTEGER, PRIMARY KEY (profile, ordinal))"
		" WITHOUT ROWID";
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct work w;
	int64_t profile = 0;
	int rc = 0, step;

	memset(&w, 0, sizeof w);
	strdict_init(&w.tids);
	/* the primary key's order: no sort */
	if (sqlite3_exec(db, create, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "SELECT profile, tid, start, \"end\", ordinal"
	                       " FROM events WHERE start IS NOT NULL"
	                       " AND \"end\" IS NOT NULL ORDER BY profile, ordinal",
	                       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO " STORE_DEPTH_TABLE
	                       " VALUES (?1, ?2, ?3)", -1, &ins, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
		goto done;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (w.n && sqlite3_column_int64(st, 0) != profile) {
			place_untid(&w);
			if ((rc = profile_depths(&w, profile, ins, db, e)))
				goto done;
		}
		profile = sqlite3_column_int64(st, 0);
		if ((rc = add_range(&w, st, e)))
			goto done;
	}
	if (step != SQLITE_DONE) {
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
		goto done;
	}
	place_untid(&w);
	rc = profile_depths(&w, profile, ins, db, e);
done:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	strdict_free(&w.tids);
	free(w.r);
	free(w.byth);
	free(w.start);
	free(w.byend);
	free(w.rank);
	free(w.tree);
	return rc;
}
