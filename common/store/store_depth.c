/* store_depth: NVTX nesting depth (see store_depth.h). */
#include "store/store_depth.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* One range of the thread being read, in containment order. */
struct range {
	double end;
	int64_t ordinal;
};

/* An end and the range it belongs to, for ranking the ends. */
struct ranked {
	double end;
	size_t k;
};

/* The ranges of one thread and the scratch of the count. */
struct thread {
	struct range *r;
	size_t n, cap;
	struct ranked *byend; /* the ends, sorted */
	size_t bcap;
	size_t *rank;         /* per range: how many ends are below its end */
	size_t rcap;
	int *tree;            /* Fenwick tree over the ranks */
	size_t tcap;
};

static int cmp_end(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->end;
	double y = ((const struct ranked *)b)->end;
	return (x > y) - (x < y);
}

/* t->rank[k] = the number of ranges of the thread whose end is below
 * range k's end. */
static void rank_ends(struct thread *t)
{
	for (size_t k = 0; k < t->n; k++) {
		t->byend[k].end = t->r[k].end;
		t->byend[k].k = k;
	}
	qsort(t->byend, t->n, sizeof *t->byend, cmp_end);
	for (size_t i = 0, first = 0; i < t->n; i++) {
		if (i && t->byend[i].end != t->byend[i - 1].end)
			first = i;
		t->rank[t->byend[i].k] = first;
	}
}

/*
 * Writes the depths of the thread's ranges, read in the order start
 * ascending, end descending, ordinal ascending: every range that contains
 * r comes before it, and a range before r contains it exactly when its
 * end is >= r.end.  So depth = (ranges before) - (ranges before that end
 * below r.end), counted with a Fenwick tree over the ranks of the ends.
 */
static int flush(struct thread *t, int64_t profile, sqlite3_stmt *ins,
                 sqlite3 *db, struct err *e)
{
	size_t n = t->n;

	if (!n)
		return 0;
	if (vec_reserve(&t->byend, &t->bcap, n, sizeof *t->byend) ||
	    vec_reserve(&t->rank, &t->rcap, n, sizeof *t->rank) ||
	    vec_reserve(&t->tree, &t->tcap, n + 1, sizeof *t->tree))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	rank_ends(t);
	memset(t->tree, 0, (n + 1) * sizeof *t->tree);
	for (size_t k = 0; k < n; k++) {
		size_t rank = t->rank[k];
		int64_t lower = 0;
		for (size_t i = rank; i > 0; i -= i & -i)
			lower += t->tree[i];
		int64_t depth = (int64_t)k - lower;
		for (size_t i = rank + 1; i <= n; i += i & -i)
			t->tree[i]++;
		if (!depth)
			continue;
		sqlite3_bind_int64(ins, 1, profile);
		sqlite3_bind_int64(ins, 2, t->r[k].ordinal);
		sqlite3_bind_int64(ins, 3, depth);
		int rc = sqlite3_step(ins);
		sqlite3_reset(ins);
		if (rc != SQLITE_DONE)
			return err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
			               sqlite3_errmsg(db));
	}
	t->n = 0;
	return 0;
}

/* Whether the row's profile and tid (columns 0 and 1) differ from the
 * thread being read. */
static int new_thread(sqlite3_stmt *st, int64_t profile, const char *tid,
                      int tid_null, int first)
{
	int null = sqlite3_column_type(st, 1) == SQLITE_NULL;
	const char *t = (const char *)sqlite3_column_text(st, 1);

	if (first || sqlite3_column_int64(st, 0) != profile || null != tid_null)
		return 1;
	return !null && strcmp(t ? t : "", tid ? tid : "");
}

int store_depth_write(sqlite3 *db, struct err *e)
{
	static const char *const create =
		"CREATE TABLE " STORE_DEPTH_TABLE " (profile INTEGER,"
		" ordinal INTEGER, depth INTEGER, PRIMARY KEY (profile, ordinal))"
		" WITHOUT ROWID";
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct thread t;
	char *tid = NULL;
	int64_t profile = 0;
	int rc = 0, step, first = 1, tid_null = 0;

	memset(&t, 0, sizeof t);
	if (sqlite3_exec(db, create, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "SELECT profile, tid, \"end\", ordinal FROM events"
	                       " WHERE start IS NOT NULL AND \"end\" IS NOT NULL"
	                       " ORDER BY profile, tid, start, \"end\" DESC,"
	                       " ordinal",
	                       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO " STORE_DEPTH_TABLE
	                       " VALUES (?1, ?2, ?3)", -1, &ins, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
		goto done;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (new_thread(st, profile, tid, tid_null, first)) {
			const char *s;
			if ((rc = flush(&t, profile, ins, db, e)))
				goto done;
			free(tid);
			tid_null = sqlite3_column_type(st, 1) == SQLITE_NULL;
			s = (const char *)sqlite3_column_text(st, 1);
			tid = strdup(s ? s : "");
			if (!tid) {
				rc = err_set(e, ERR_NOMEM, "out of memory");
				goto done;
			}
			profile = sqlite3_column_int64(st, 0);
			first = 0;
		}
		if (vec_reserve(&t.r, &t.cap, t.n + 1, sizeof *t.r)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto done;
		}
		t.r[t.n].end = sqlite3_column_double(st, 2);
		t.r[t.n].ordinal = sqlite3_column_int64(st, 3);
		t.n++;
	}
	if (step != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
	else
		rc = flush(&t, profile, ins, db, e);
done:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	free(tid);
	free(t.r);
	free(t.byend);
	free(t.rank);
	free(t.tree);
	return rc;
}
