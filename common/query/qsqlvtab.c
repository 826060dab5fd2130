/* qsqlvtab: virtual tables over qsqlmem and the TEMP views (see
 * qsqlvtab.h). */
#include "query/qsqlvtab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/bsearchd.h"

/* Which table a vtab serves. */
enum vt_kind { VT_NVTX, VT_POINTS };

/* Columns of the two tables. */
enum { N_PROFILE, N_WORKER, N_RANK, N_TID, N_START, N_END, N_DURATION,
       N_NAME, N_SOURCE_ROW, N_ORDINAL, N_DEPTH, N_THREAD_NAME };
enum { P_SERIES, P_NAME, P_WORKER, P_RANK, P_TIME, P_VALUE, P_ORDINAL };

/* idxNum bits: the constraints used (their values in this order in argv)
 * and the group order. */
enum {
	USE_NAME = 1, USE_WORKER = 2, USE_KEY = 4, USE_LO = 8, USE_HI = 16,
	BY_WORKER = 32, BY_NAME_DESC = 64, USE_END_LO = 128, USE_END_HI = 256,
	/* an equality went to the lower bound: the upper bound is the same */
	EQ_LO = 1 << 9, EQ_END_LO = 1 << 10,
	/* rows in start (time) order, ascending or (with BY_START_DESC)
	 * descending: the groups' rows merged */
	BY_START = 1 << 22, BY_START_DESC = 1 << 23
};
/* Per bound (0 start >=, 1 start <=, 2 end >=, 3 end <=): EXACT, the
 * bound is a number the cursor compares exactly, so SQLite does not check
 * it again (omit); STRICT, the comparison is > or < rather than >= or <=. */
#define EXACT(b) (1 << (11 + 2 * (b)))
#define STRICT(b) (1 << (12 + 2 * (b)))
/* Per equality u (0 name, 1 worker, 2 profile/series): its right-hand side
 * is a literal, which the cursor compares exactly as SQLite would (see
 * same_as_sqlite), so SQLite does not check it again (omit). */
#define EXACT_EQ(u) (1 << (19 + (u)))
#define EXACT_MAX 9007199254740992.0 /* 2^53: integers doubles hold */

/* The constraint kinds, in the order of their values in argv. */
#define NUSES 7
static const int uses[NUSES] = {USE_NAME, USE_WORKER, USE_KEY, USE_LO,
                                USE_HI, USE_END_LO, USE_END_HI};

struct vt_aux {
	const struct qsqlmem *m;
	enum vt_kind kind;
};

struct vt {
	sqlite3_vtab base;
	const struct qsqlmem *m;
	enum vt_kind kind;
};

struct cur {
	sqlite3_vtab_cursor base;
	const struct vt *vt;
	const struct qsqlmem_group *groups;
	uint32_t *visit;   /* the groups to visit, in order */
	size_t nvisit, gi; /* gi: position in visit */
	size_t row, end;   /* the current row and the end of its group */
	/* BY_START: a heap of the visited groups' next rows by time (least
	 * first, or greatest with desc), then position in visit, so ties
	 * keep the scan order SQLite's stable sorter would keep; the top is
	 * the current row.  Descending, a group is read a run of equal times
	 * at a time, last run first, each run forwards: [rs, end) is the
	 * run, lo the group's first row in bounds. */
	struct hent { double t; uint32_t vpos; size_t row, end, lo, rs; } *heap;
	size_t nheap;
	int merged, desc;
	/* bounds on start/time and on an NVTX range's end, in the order of
	 * EXACT: a row is kept when its value is >= v (<= v for 1 and 3), or
	 * > v (< v) when strict */
	struct bnd { int on, strict; double v; } b[4];
};

static int vt_connect(sqlite3 *db, void *aux, int argc,
                      const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
	const struct qsqlmem *m = ((const struct vt_aux *)aux)->m;
	enum vt_kind kind = ((const struct vt_aux *)aux)->kind;
	struct vt *v;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	/* the declared types are the file's views' column affinities */
	rc = sqlite3_declare_vtab(db, kind == VT_NVTX
	        ? "CREATE TABLE x(profile INTEGER, worker, rank, tid TEXT,"
	          " start REAL, \"end\" REAL, duration, name,"
	          " source_row INTEGER, ordinal INTEGER, depth, thread_name)"
	        : "CREATE TABLE x(series INTEGER, name, worker, rank,"
	          " time REAL, value, ordinal INTEGER)");
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	if (!(v = sqlite3_malloc(sizeof *v)))
		return SQLITE_NOMEM;
	memset(v, 0, sizeof *v);
	v->m = m;
	v->kind = kind;
	*out = &v->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *v)
{
	sqlite3_free(v);
	return SQLITE_OK;
}

static size_t vt_rows(const struct vt *v)
{
	return v->kind == VT_NVTX ? v->m->nvtx.n : v->m->points.n;
}

/* The column of a constraint kind in table kind. */
static int col_of(enum vt_kind kind, int use)
{
	switch (use) {
	case USE_NAME: return kind == VT_NVTX ? N_NAME : P_NAME;
	case USE_WORKER: return kind == VT_NVTX ? N_WORKER : P_WORKER;
	case USE_KEY: return kind == VT_NVTX ? N_PROFILE : P_SERIES;
	case USE_END_LO: case USE_END_HI: return kind == VT_NVTX ? N_END : -2;
	default: return kind == VT_NVTX ? N_START : P_TIME;
	}
}

static int is_binary(sqlite3_index_info *ii, int k)
{
	const char *coll = sqlite3_vtab_collation(ii, k);
	return !coll || !strcmp(coll, "BINARY");
}

/* Whether constraint k's right-hand side is a number the cursor can
 * compare exactly with a REAL column, as SQLite would. */
static int exact_rhs(sqlite3_index_info *ii, int k)
{
	sqlite3_value *x = NULL;
	double d;

	if (sqlite3_vtab_rhs_value(ii, k, &x) != SQLITE_OK || !x)
		return 0;
	switch (sqlite3_value_type(x)) {
	case SQLITE_INTEGER:
		d = (double)sqlite3_value_int64(x);
		return d >= -EXACT_MAX && d <= EXACT_MAX;
	case SQLITE_FLOAT:
		return !isnan(sqlite3_value_double(x));
	default:
		return 0;
	}
}

/* Whether equality constraint k has a literal right-hand side (then the
 * cursor compares it exactly: see same_as_sqlite). */
static int exact_eq(sqlite3_index_info *ii, int k)
{
	sqlite3_value *x = NULL;

	return sqlite3_vtab_rhs_value(ii, k, &x) == SQLITE_OK && x;
}

static int vt_best_index(sqlite3_vtab *tab, sqlite3_index_info *ii)
{
	const struct vt *v = (const struct vt *)tab;
	int pick[NUSES] = {-1, -1, -1, -1, -1, -1, -1};
	int plan = 0, argv = 0;
	double rows = (double)vt_rows(v) + 1;

	for (int k = 0; k < ii->nConstraint; k++) {
		const struct sqlite3_index_constraint *c = &ii->aConstraint[k];
		unsigned char op = c->op;
		if (!c->usable)
			continue;
		for (int u = 0; u < NUSES; u++) {
			int lo = u == 3 || u == 5, hi = u == 4 || u == 6;
			if (c->iColumn != col_of(v->kind, uses[u]) || pick[u] >= 0)
				continue;
			if (u < 3 && op == SQLITE_INDEX_CONSTRAINT_EQ &&
			    is_binary(ii, k))
				pick[u] = k;
			else if (lo && (op == SQLITE_INDEX_CONSTRAINT_GT ||
			                    op == SQLITE_INDEX_CONSTRAINT_GE ||
			                    op == SQLITE_INDEX_CONSTRAINT_EQ))
				pick[u] = k;
			/* an equality is the lower bound's (one argv each) */
			else if (hi && (op == SQLITE_INDEX_CONSTRAINT_LT ||
			                    op == SQLITE_INDEX_CONSTRAINT_LE))
				pick[u] = k;
		}
	}
	if (v->kind == VT_POINTS)
		pick[1] = -1; /* a series' worker: few series, no gain */
	for (int u = 0; u < NUSES; u++) {
		int k = pick[u], bi = u - 3;
		unsigned char op;
		if (k < 0)
			continue;
		plan |= uses[u];
		ii->aConstraintUsage[k].argvIndex = ++argv;
		rows *= u == 0 ? 0.05 : u == 1 ? 0.1 : u == 2 ? 0.05
		        : u < 5 ? 0.3 : 0.5;
		if (u < 3) {
			/* else SQLite checks the equality again */
			if (exact_eq(ii, k)) {
				plan |= EXACT_EQ(u);
				ii->aConstraintUsage[k].omit = 1;
			}
			continue;
		}
		op = ii->aConstraint[k].op;
		if (op == SQLITE_INDEX_CONSTRAINT_EQ)
			plan |= u == 3 ? EQ_LO : EQ_END_LO;
		if (op == SQLITE_INDEX_CONSTRAINT_GT ||
		    op == SQLITE_INDEX_CONSTRAINT_LT)
			plan |= STRICT(bi);
		if (exact_rhs(ii, k)) {
			plan |= EXACT(bi);
			ii->aConstraintUsage[k].omit = 1;
		}
	}
	/* the groups in name order (ascending, or descending by name with a
	 * name's groups in their ascending order), or in worker then name
	 * order: the order asked for, exactly (SQLite may rely on a GROUP
	 * BY's order for an equal ORDER BY) */
	if (ii->nOrderBy == 1 &&
	    ii->aOrderBy[0].iColumn == col_of(v->kind, USE_NAME)) {
		ii->orderByConsumed = 1;
		if (ii->aOrderBy[0].desc)
			plan |= BY_NAME_DESC;
	} else if (ii->nOrderBy == 1 &&
	           ii->aOrderBy[0].iColumn == col_of(v->kind, USE_LO) &&
	           (v->kind == VT_NVTX || v->m->points.sorted)) {
		/* start (time): every group's rows are in that order, merged
		 * across groups */
		ii->orderByConsumed = 1;
		plan |= BY_START | (ii->aOrderBy[0].desc ? BY_START_DESC : 0);
	} else if (ii->nOrderBy == 2 && v->kind == VT_NVTX &&
	           ii->aOrderBy[0].iColumn == N_WORKER &&
	           ii->aOrderBy[1].iColumn == N_NAME &&
	           !ii->aOrderBy[0].desc && !ii->aOrderBy[1].desc) {
		ii->orderByConsumed = 1;
		plan |= BY_WORKER;
	}
	ii->idxNum = plan;
	ii->estimatedRows = (sqlite3_int64)rows + 1;
	ii->estimatedCost = rows + 1;
	return SQLITE_OK;
}

static int vt_open(sqlite3_vtab *tab, sqlite3_vtab_cursor **out)
{
	struct cur *c = sqlite3_malloc(sizeof *c);

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->vt = (const struct vt *)tab;
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cc)
{
	struct cur *c = (struct cur *)cc;
	free(c->visit);
	free(c->heap);
	sqlite3_free(c);
	return SQLITE_OK;
}

/* Whether a group's dictionary value v may equal the constraint value x:
 * a superset of SQLite's answer (it checks again). */
static int may_equal(const struct qsqlmem_val *v, sqlite3_value *x)
{
	if (sqlite3_value_type(x) != SQLITE_TEXT)
		return 1;
	if (v->type != SQLITE_TEXT)
		return v->type != SQLITE_NULL; /* affinity may convert it */
	return v->n == sqlite3_value_bytes(x) &&
	       !memcmp(v->s, sqlite3_value_text(x), (size_t)v->n);
}

/* Whether integer i and real d are the same number (SQLite compares them
 * exactly, not through a conversion). */
static int int_is_real(int64_t i, double d)
{
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
		return 0;
	return (int64_t)d == i && (double)(int64_t)d == d;
}

/* Whether number a (integer ai when aint, else real ad) equals value b;
 * a value that is not a number never does. */
static int num_equal(int aint, int64_t ai, double ad, sqlite3_value *b)
{
	switch (sqlite3_value_type(b)) {
	case SQLITE_INTEGER:
		return aint ? ai == sqlite3_value_int64(b)
		            : int_is_real(sqlite3_value_int64(b), ad);
	case SQLITE_FLOAT:
		return aint ? int_is_real(ai, sqlite3_value_double(b))
		            : ad == sqlite3_value_double(b);
	default:
		return 0;
	}
}

/*
 * Whether "column = x" holds for a group's value, exactly as SQLite decides
 * it under BINARY: name and worker are columns without affinity, so no
 * conversion (a text equals only a text of the same bytes, a number only an
 * equal number, NULL nothing); the key is an INTEGER column, so x gets
 * numeric affinity first ('3' and 3.0 equal 3).
 */
static int same_as_sqlite(const struct qsqlmem_val *v, int64_t key, int is_key,
                          sqlite3_value *x)
{
	if (is_key) {
		sqlite3_value_numeric_type(x);
		return num_equal(1, key, 0, x);
	}
	switch (v->type) {
	case SQLITE_TEXT:
		return sqlite3_value_type(x) == SQLITE_TEXT &&
		       v->n == sqlite3_value_bytes(x) &&
		       !memcmp(v->s, sqlite3_value_text(x), (size_t)v->n);
	case SQLITE_INTEGER: return num_equal(1, v->i, 0, x);
	case SQLITE_FLOAT: return num_equal(0, 0, v->d, x);
	default: return 0;
	}
}

/* Sets bound b from x: exactly (the plan's EXACT: x is a number, as
 * xBestIndex saw), or as a double one step looser than x (a superset:
 * SQLite checks the constraint again), unused when x is not a number. */
static int set_bound(struct bnd *b, sqlite3_value *x, int upper, int plan,
                     int bi)
{
	int t = sqlite3_value_type(x);
	double d;

	b->on = 0;
	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return (plan & EXACT(bi)) ? SQLITE_ERROR : SQLITE_OK;
	d = t == SQLITE_INTEGER ? (double)sqlite3_value_int64(x)
	                        : sqlite3_value_double(x);
	if (isnan(d))
		return (plan & EXACT(bi)) ? SQLITE_ERROR : SQLITE_OK;
	b->on = 1;
	b->strict = (plan & EXACT(bi)) && (plan & STRICT(bi));
	b->v = (plan & EXACT(bi)) ? d : nextafter(d, upper ? INFINITY
	                                                   : -INFINITY);
	return SQLITE_OK;
}

static const double *times(const struct cur *c)
{
	return c->vt->kind == VT_NVTX ? c->vt->m->nvtx.start
	                              : c->vt->m->points.time;
}

/* Whether value t meets bound b (NaN, SQLite's NULL, never does). */
static inline int in_lo(const struct bnd *b, double t)
{
	return !b->on || (b->strict ? t > b->v : t >= b->v);
}

static inline int in_hi(const struct bnd *b, double t)
{
	return !b->on || (b->strict ? t < b->v : t <= b->v);
}

/* Whether row i meets the bounds (exact ones are not checked again by
 * SQLite; a row skipped by a loose one cannot meet its constraint). */
static int row_ok(const struct cur *c, const double *t, size_t i)
{
	const double *end = c->vt->m->nvtx.end;

	return in_lo(&c->b[0], t[i]) && in_hi(&c->b[1], t[i]) &&
	       ((!c->b[2].on && !c->b[3].on) ||
	        (in_lo(&c->b[2], end[i]) && in_hi(&c->b[3], end[i])));
}

/* The rows [*a, *b) of group g the bounds allow, *a its first row that
 * meets them; 0 when there is none. */
static int group_rows(const struct cur *c, const struct qsqlmem_group *g,
                      size_t *a, size_t *b)
{
	const double *t = times(c);

	*a = g->first;
	*b = g->first + g->count;
	if (g->sorted && c->b[0].on)
		*a = c->b[0].strict ? bsearchd_upper(t, *a, *b, c->b[0].v)
		                    : bsearchd_lower(t, *a, *b, c->b[0].v);
	if (g->sorted && c->b[1].on)
		*b = c->b[1].strict ? bsearchd_lower(t, *a, *b, c->b[1].v)
		                    : bsearchd_upper(t, *a, *b, c->b[1].v);
	while (*a < *b && !row_ok(c, t, *a))
		(*a)++;
	return *a < *b;
}

/* Positions the cursor on the first row of the visit list from gi on. */
static void seek_group(struct cur *c)
{
	while (c->gi < c->nvisit) {
		size_t a, b;
		if (group_rows(c, &c->groups[c->visit[c->gi]], &a, &b)) {
			c->row = a;
			c->end = b;
			return;
		}
		c->gi++;
	}
}

static int hent_less(const struct cur *c, const struct hent *x,
                     const struct hent *y)
{
	if (x->t != y->t)
		return c->desc ? x->t > y->t : x->t < y->t;
	return x->vpos < y->vpos;
}

/* Descending: moves e to the last run of equal times before e->rs (and
 * at or after e->lo) that has a row in bounds, on that row; 0 when none
 * is left. */
static int desc_seek(const struct cur *c, struct hent *e)
{
	const double *t = times(c);

	while (e->rs > e->lo) {
		size_t end = e->rs, s = end - 1;
		while (s > e->lo && t[s - 1] == t[end - 1])
			s--;
		e->rs = s;
		e->end = end;
		for (size_t i = s; i < end; i++)
			if (row_ok(c, t, i)) {
				e->row = i;
				e->t = t[i];
				return 1;
			}
	}
	return 0;
}

/* Restores the heap order from position k down. */
static void sift_down(struct cur *c, size_t k)
{
	struct hent *h = c->heap;

	for (;;) {
		size_t l = 2 * k + 1, m = k;
		struct hent tmp;
		if (l < c->nheap && hent_less(c, &h[l], &h[m]))
			m = l;
		if (l + 1 < c->nheap && hent_less(c, &h[l + 1], &h[m]))
			m = l + 1;
		if (m == k)
			return;
		tmp = h[k];
		h[k] = h[m];
		h[m] = tmp;
		k = m;
	}
}

/* Points the cursor at the heap's top (or past the end: gi = nvisit). */
static void heap_top(struct cur *c)
{
	if (!c->nheap) {
		c->gi = c->nvisit;
		return;
	}
	c->gi = c->heap[0].vpos;
	c->row = c->heap[0].row;
	c->end = c->heap[0].end;
}

/* BY_START: the heap of the visited groups' first rows.  0 or
 * SQLITE_NOMEM. */
static int merge_start(struct cur *c)
{
	const double *t = times(c);

	free(c->heap);
	c->nheap = 0;
	if (!(c->heap = malloc((c->nvisit ? c->nvisit : 1) * sizeof *c->heap)))
		return SQLITE_NOMEM;
	for (size_t k = 0; k < c->nvisit; k++) {
		size_t a, b;
		struct hent *e = &c->heap[c->nheap];
		if (!group_rows(c, &c->groups[c->visit[k]], &a, &b))
			continue;
		e->t = t[a];
		e->vpos = (uint32_t)k;
		e->row = a;
		e->end = b;
		e->lo = a;
		e->rs = b;
		if (!c->desc || desc_seek(c, e))
			c->nheap++;
	}
	for (size_t k = c->nheap / 2; k-- > 0;)
		sift_down(c, k);
	heap_top(c);
	return SQLITE_OK;
}

static int same_val(const struct qsqlmem_val *a, const struct qsqlmem_val *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case SQLITE_INTEGER: return a->i == b->i;
	case SQLITE_FLOAT: return a->d == b->d;
	case SQLITE_TEXT: return a->n == b->n && !memcmp(a->s, b->s, (size_t)a->n);
	default: return 1;
	}
}

/* Fills out with the ng groups in the plan's order: worker then name;
 * descending name, a name's groups in their ascending order (blocks of
 * equal names, the last block first); or ascending name. */
static void order_groups(const struct qsqlmem *m, const struct qsqlmem_group *g,
                         size_t ng, int plan, uint32_t *out)
{
	size_t n = 0, end = ng;

	if (plan & BY_WORKER) {
		memcpy(out, m->nvtx.by_worker, ng * sizeof *out);
		return;
	}
	if (!(plan & BY_NAME_DESC)) {
		for (size_t k = 0; k < ng; k++)
			out[k] = (uint32_t)k;
		return;
	}
	while (end > 0) {
		size_t start = end - 1;
		while (start > 0 && same_val(&g[start - 1].name, &g[end - 1].name))
			start--;
		for (size_t k = start; k < end; k++)
			out[n++] = (uint32_t)k;
		end = start;
	}
}

static int vt_filter(sqlite3_vtab_cursor *cc, int plan, const char *s,
                     int argc, sqlite3_value **argv)
{
	struct cur *c = (struct cur *)cc;
	const struct qsqlmem *m = c->vt->m;
	int nvtx = c->vt->kind == VT_NVTX;
	size_t ng = nvtx ? m->nvtx.ng : m->points.ng;
	sqlite3_value *x[NUSES] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
	int a = 0;

	(void)s;
	for (int u = 0; u < NUSES; u++)
		if ((plan & uses[u]) && a < argc)
			x[u] = argv[a++];
	c->groups = nvtx ? m->nvtx.g : m->points.g;
	free(c->visit);
	c->visit = malloc((ng ? ng : 1) * sizeof *c->visit);
	if (!c->visit)
		return SQLITE_NOMEM;
	c->nvisit = c->gi = 0;
	/* an equality on start (end) is its lower bound and its upper */
	if (plan & EQ_LO)
		x[4] = x[3];
	if (plan & EQ_END_LO)
		x[6] = x[5];
	for (int bi = 0; bi < 4; bi++) {
		int ebi = (bi == 1 && (plan & EQ_LO)) ||
		          (bi == 3 && (plan & EQ_END_LO)) ? bi - 1 : bi;
		int p = plan;
		if (ebi != bi) /* the equality's exactness, never strict */
			p = (p & EXACT(ebi)) ? (p | EXACT(bi)) & ~STRICT(bi)
			                     : p & ~EXACT(bi);
		c->b[bi].on = 0;
		if (x[3 + bi] && set_bound(&c->b[bi], x[3 + bi], bi & 1, p, bi))
			return SQLITE_ERROR;
	}
	order_groups(m, c->groups, ng, plan, c->visit);
	for (size_t k = 0; k < ng; k++) {
		uint32_t gi = c->visit[k];
		const struct qsqlmem_group *g = &c->groups[gi];
		if (x[0] && !((plan & EXACT_EQ(0))
		                  ? same_as_sqlite(&g->name, 0, 0, x[0])
		                  : may_equal(&g->name, x[0])))
			continue;
		if (x[1] && !((plan & EXACT_EQ(1))
		                  ? same_as_sqlite(&g->worker, 0, 0, x[1])
		                  : may_equal(&g->worker, x[1])))
			continue;
		if (x[2] && ((plan & EXACT_EQ(2))
		                 ? !same_as_sqlite(NULL, g->key, 1, x[2])
		                 : sqlite3_value_type(x[2]) == SQLITE_INTEGER &&
		                       g->key != sqlite3_value_int64(x[2])))
			continue;
		c->visit[c->nvisit++] = gi;
	}
	c->merged = (plan & BY_START) != 0;
	c->desc = (plan & BY_START_DESC) != 0;
	if (c->merged)
		return merge_start(c);
	seek_group(c);
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cc)
{
	struct cur *c = (struct cur *)cc;
	const double *t = times(c);

	while (++c->row < c->end && !row_ok(c, t, c->row))
		;
	if (c->merged) {
		/* the top's group moves on to its next row (descending: in
		 * its run, or the run before), or leaves */
		if (c->row < c->end) {
			c->heap[0].row = c->row;
			c->heap[0].t = t[c->row];
		} else if (!c->desc || !desc_seek(c, &c->heap[0])) {
			c->heap[0] = c->heap[--c->nheap];
		}
		sift_down(c, 0);
		heap_top(c);
		return SQLITE_OK;
	}
	if (c->row >= c->end) {
		c->gi++;
		seek_group(c);
	}
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cc)
{
	const struct cur *c = (const struct cur *)cc;
	return c->gi >= c->nvisit;
}

static void put_val(sqlite3_context *ctx, const struct qsqlmem_val *v)
{
	switch (v->type) {
	case SQLITE_INTEGER: sqlite3_result_int64(ctx, v->i); break;
	case SQLITE_FLOAT: sqlite3_result_double(ctx, v->d); break;
	case SQLITE_TEXT:
		/* the texts are NUL-terminated: a length of -1 tells SQLite
		 * so, and sqlite3_column_text then need not copy the text to
		 * add a terminator (a malloc per value read); a text with a
		 * NUL inside keeps its length */
		sqlite3_result_text(ctx, v->s, strlen(v->s) == (size_t)v->n
		                                       ? -1 : v->n, SQLITE_STATIC);
		break;
	default: sqlite3_result_null(ctx);
	}
}

static void nvtx_column(const struct cur *c, sqlite3_context *ctx, int k)
{
	const struct qsqlmem_nvtx *t = &c->vt->m->nvtx;
	const struct qsqlmem_group *g = &c->groups[c->visit[c->gi]];
	size_t i = c->row;

	switch (k) {
	case N_PROFILE: sqlite3_result_int64(ctx, g->key); break;
	case N_WORKER: put_val(ctx, &g->worker); break;
	case N_RANK: put_val(ctx, &g->rank); break;
	case N_TID:
		if (t->tid[i] == UINT32_MAX)
			sqlite3_result_null(ctx);
		else
			put_val(ctx, &t->tids[t->tid[i]]);
		break;
	case N_START: sqlite3_result_double(ctx, t->start[i]); break;
	case N_END: sqlite3_result_double(ctx, t->end[i]); break;
	case N_DURATION: {
		/* SQLite's subtraction of two reals (NaN is NULL) */
		double d = t->end[i] - t->start[i];
		if (isnan(d))
			sqlite3_result_null(ctx);
		else
			sqlite3_result_double(ctx, d);
		break;
	}
	case N_NAME: put_val(ctx, &g->name); break;
	case N_SOURCE_ROW: sqlite3_result_int64(ctx, t->source_row[i]); break;
	case N_DEPTH: sqlite3_result_int64(ctx, t->depth[i]); break;
	case N_THREAD_NAME:
		if (t->thread[i] == UINT32_MAX)
			sqlite3_result_null(ctx);
		else
			put_val(ctx, &t->threads[t->thread[i]]);
		break;
	default: sqlite3_result_int64(ctx, t->ordinal[i]);
	}
}

static void points_column(const struct cur *c, sqlite3_context *ctx, int k)
{
	const struct qsqlmem_points *t = &c->vt->m->points;
	const struct qsqlmem_group *g = &c->groups[c->visit[c->gi]];
	size_t i = c->row;

	switch (k) {
	case P_SERIES: sqlite3_result_int64(ctx, g->key); break;
	case P_NAME: put_val(ctx, &g->name); break;
	case P_WORKER: put_val(ctx, &g->worker); break;
	case P_RANK: put_val(ctx, &g->rank); break;
	case P_TIME: sqlite3_result_double(ctx, t->time[i]); break;
	case P_VALUE:
		if (t->vtype[i] == SQLITE_INTEGER)
			sqlite3_result_int64(ctx, t->ival[i]);
		else if (t->vtype[i] == SQLITE_FLOAT)
			sqlite3_result_double(ctx, t->dval[i]);
		else
			sqlite3_result_null(ctx);
		break;
	default: sqlite3_result_int64(ctx, t->ordinal[i]);
	}
}

static int vt_column(sqlite3_vtab_cursor *cc, sqlite3_context *ctx, int k)
{
	const struct cur *c = (const struct cur *)cc;

	if (c->vt->kind == VT_NVTX)
		nvtx_column(c, ctx, k);
	else
		points_column(c, ctx, k);
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cc, sqlite3_int64 *out)
{
	*out = (sqlite3_int64)((const struct cur *)cc)->row;
	return SQLITE_OK;
}

/* Eponymous-only (no xCreate): the tables exist on every connection the
 * module is registered on, and nothing is written to a schema. */
static const sqlite3_module vt_module = {
	.iVersion = 0,
	.xConnect = vt_connect,
	.xBestIndex = vt_best_index,
	.xDisconnect = vt_disconnect,
	.xOpen = vt_open,
	.xClose = vt_close,
	.xFilter = vt_filter,
	.xNext = vt_next,
	.xEof = vt_eof,
	.xColumn = vt_column,
	.xRowid = vt_rowid,
};

/* The views: the file's definitions with the typed tables, their
 * dictionary joins and the depth and thread-name subqueries replaced by
 * the virtual tables; what those do not hold is read from the file with
 * the same expressions. */
static const char views_sql[] =
	"CREATE TEMP VIEW nvtx AS SELECT v.profile AS profile,"
	" v.worker AS worker, v.rank AS rank, v.tid AS tid, v.start AS start,"
	" v.\"end\" AS \"end\", v.duration AS duration, v.name AS name,"
	" v.source_row AS source_row, v.ordinal AS ordinal,"
	" v.depth AS depth, v.thread_name AS thread_name"
	" FROM main.dsight_mem_nvtx AS v;"
	"CREATE TEMP VIEW metric_points AS SELECT pt.series AS series,"
	" pt.name AS name, pt.worker AS worker, pt.rank AS rank,"
	" pt.time AS time, pt.value AS value,"
	" CASE typeof(pt.value) WHEN 'integer' THEN CAST(pt.value AS TEXT)"
	" WHEN 'real' THEN (SELECT v.payload -> '$[1]' FROM main.points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) END"
	" AS value_text,"
	" (SELECT json_extract(v.payload, '$[2]') FROM main.points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) AS source_id,"
	" (SELECT json_extract(v.payload, '$[3]') FROM main.points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) AS source_row"
	" FROM main.dsight_mem_points AS pt;"
	/* made ready before the authorizer: first uses touch the schema */
	"SELECT 1 FROM nvtx, metric_points LIMIT 0;";

int qsqlvtab_install(sqlite3 *db, const struct qsqlmem *m, struct err *e)
{
	/* the modules' aux: the columns and the kind, one per table; the
	 * nvtx module owns the block (SQLite frees it on close, or when its
	 * registration fails) */
	struct vt_aux *aux = sqlite3_malloc(2 * sizeof *aux);

	if (!aux)
		return err_set(e, ERR_NOMEM, "out of memory");
	aux[0].m = aux[1].m = m;
	aux[0].kind = VT_NVTX;
	aux[1].kind = VT_POINTS;
	if (sqlite3_create_module_v2(db, "dsight_mem_points", &vt_module,
	                             &aux[1], NULL) != SQLITE_OK) {
		sqlite3_free(aux);
		return err_set(e, ERR_DATA, "cannot set up the sql engine: %s",
		               sqlite3_errmsg(db));
	}
	if (sqlite3_create_module_v2(db, "dsight_mem_nvtx", &vt_module, aux,
	                             sqlite3_free) != SQLITE_OK ||
	    sqlite3_exec(db, views_sql, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot set up the sql engine: %s",
		               sqlite3_errmsg(db));
	return 0;
}
