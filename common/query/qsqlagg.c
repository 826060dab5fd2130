/* qsqlagg: grouped aggregates computed over the in-memory columns (see
 * qsqlagg.h). */
#include "query/qsqlagg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bsearchd.h"
#include "base/vec.h"

#define EXACT_MAX 9007199254740992.0 /* 2^53: integers doubles hold */

/* One aggregate's state: SQLite 3.40's SumCtx, count and min/max best. */
struct acc {
	int64_t n, isum;
	double rsum;
	int approx, overflow;
	struct qsqlmem_val best; /* type 0: none yet */
};

/* An output group: a run of groups with equal keys, and the bucket. */
struct slot {
	uint32_t run;
	int bnull;
	int64_t b;
	int64_t rows;
};

struct exec {
	const struct qsqlmem *m;
	const struct qsqlshape *s;
	struct qsqlfn_clock *clock;
	const struct qsqlmem_group *g;
	size_t ng;
	const double *t;          /* start or time */
	uint32_t *kept, *run_of, *run_rep;
	size_t nkept, nruns;
	int bucket;               /* the bucket key, or -1 */
	int agg[QSQLSHAPE_ITEMS]; /* the items that are aggregates */
	int nagg;
	struct slot *slots;
	struct acc *accs;         /* nslots * nagg */
	size_t nslots, cap;
	uint32_t *hash;           /* slot + 1 by (run, bucket); 0: free */
	size_t hcap;
	unsigned ticks;
};

static int type_class(int t)
{
	switch (t) {
	case SQLITE_NULL: return 0;
	case SQLITE_INTEGER: case SQLITE_FLOAT: return 1;
	case SQLITE_TEXT: return 2;
	default: return 3;
	}
}

/* SQLite's comparison of an integer with a real (sqlite3IntFloatCompare
 * where long double is wider than double). */
static int int_real_cmp(int64_t i, double r)
{
	long double x = (long double)i;
	return x < r ? -1 : x > r ? 1 : 0;
}

/* SQLite's order of two values under BINARY: NULL, numbers, texts. */
static int val_cmp(const struct qsqlmem_val *a, const struct qsqlmem_val *b)
{
	int ca = type_class(a->type), cb = type_class(b->type), c;

	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (ca == 0)
		return 0;
	if (ca == 1) {
		if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER)
			return a->i < b->i ? -1 : a->i > b->i;
		if (a->type == SQLITE_FLOAT && b->type == SQLITE_FLOAT)
			return a->d < b->d ? -1 : a->d > b->d;
		return a->type == SQLITE_INTEGER ? int_real_cmp(a->i, b->d)
		                                 : -int_real_cmp(b->i, a->d);
	}
	c = memcmp(a->s, b->s, (size_t)(a->n < b->n ? a->n : b->n));
	return c ? c : a->n < b->n ? -1 : a->n > b->n;
}

/* The same type and the same value, bit for bit. */
static int identical(const struct qsqlmem_val *a, const struct qsqlmem_val *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case SQLITE_INTEGER: return a->i == b->i;
	case SQLITE_FLOAT: return !memcmp(&a->d, &b->d, sizeof a->d);
	case SQLITE_TEXT:
		return a->n == b->n && !memcmp(a->s, b->s, (size_t)a->n);
	default: return 1;
	}
}

static struct qsqlmem_val real_val(double d)
{
	struct qsqlmem_val v = {SQLITE_FLOAT, 0, d, NULL, 0};
	if (isnan(d)) /* SQLite stores a NaN result as NULL */
		v.type = SQLITE_NULL;
	return v;
}

static struct qsqlmem_val int_val(int64_t i)
{
	struct qsqlmem_val v = {SQLITE_INTEGER, i, 0, NULL, 0};
	return v;
}

/* A group's value of a group-level column. */
static struct qsqlmem_val group_val(const struct qsqlmem_group *g, int col)
{
	switch (col) {
	case QC_NAME: return g->name;
	case QC_WORKER: return g->worker;
	case QC_RANK: return g->rank;
	default: return int_val(g->key);
	}
}

/* Row i's value of a row-level column. */
static struct qsqlmem_val row_val(const struct exec *x, int col, size_t i)
{
	const struct qsqlmem_nvtx *n = &x->m->nvtx;
	const struct qsqlmem_points *p = &x->m->points;
	struct qsqlmem_val v = {SQLITE_NULL, 0, 0, NULL, 0};

	switch (col) {
	case QC_T: return real_val(x->t[i]);
	case QC_END: return real_val(n->end[i]);
	case QC_DURATION: return real_val(n->end[i] - n->start[i]);
	case QC_SOURCE_ROW: return int_val(n->source_row[i]);
	case QC_DEPTH: return int_val(n->depth[i]);
	case QC_ORDINAL:
		return int_val(x->s->table == QS_NVTX ? n->ordinal[i]
		                                      : p->ordinal[i]);
	default:
		if (p->vtype[i] == SQLITE_INTEGER)
			return int_val(p->ival[i]);
		if (p->vtype[i] == SQLITE_FLOAT)
			return real_val(p->dval[i]);
		return v;
	}
}

/* Whether "v op lit" holds as SQLite decides it (the literal is a number
 * or, for the columns without affinity, a text; NULL never compares). */
static int holds(const struct qsqlmem_val *v, const struct qsqlshape_cond *c)
{
	int r;

	if (v->type == SQLITE_NULL || type_class(v->type) != type_class(c->v.type))
		return 0;
	r = val_cmp(v, &c->v);
	switch (c->op) {
	case QO_EQ: return r == 0;
	case QO_LT: return r < 0;
	case QO_LE: return r <= 0;
	case QO_GT: return r > 0;
	default: return r >= 0;
	}
}

/* The groups whose group-level values meet the conditions. */
static int keep_groups(struct exec *x)
{
	const struct qsqlshape *s = x->s;

	if (!(x->kept = malloc((x->ng ? x->ng : 1) * sizeof *x->kept)))
		return 0;
	for (size_t k = 0; k < x->ng; k++) {
		int ok = 1;
		for (int c = 0; c < s->nconds && ok; c++)
			if (QC_GROUP_LEVEL(s->conds[c].col)) {
				struct qsqlmem_val v =
				        group_val(&x->g[k], s->conds[c].col);
				ok = holds(&v, &s->conds[c]);
			}
		if (ok)
			x->kept[x->nkept++] = (uint32_t)k;
	}
	return 1;
}

/* -1, 0 or 1 as the group-level key values of groups a and b compare. */
static int keys_cmp(const struct exec *x, uint32_t a, uint32_t b)
{
	for (int k = 0; k < x->s->nkeys; k++) {
		struct qsqlmem_val va, vb;
		int c;
		if (x->s->keys[k].bucket)
			continue;
		va = group_val(&x->g[a], x->s->keys[k].col);
		vb = group_val(&x->g[b], x->s->keys[k].col);
		if ((c = val_cmp(&va, &vb)))
			return c;
	}
	return 0;
}

/* A kept group and the executor (qsort_r is not C11). */
struct gref {
	const struct exec *x;
	uint32_t gi;
};

/* By group-level key values, then by index (a stable order). */
static int by_keys(const void *pa, const void *pb)
{
	const struct gref *a = pa, *b = pb;
	int c = keys_cmp(a->x, a->gi, b->gi);

	return c ? c : a->gi < b->gi ? -1 : a->gi > b->gi;
}

/* Runs: the kept groups whose group-level keys compare equal.  0 when
 * the values of a run are not identical (SQLite's choice of the value it
 * shows is not reproduced), or out of memory. */
static int make_runs(struct exec *x)
{
	struct gref *order = malloc((x->nkept ? x->nkept : 1) * sizeof *order);
	int ok = 1;

	x->run_of = calloc(x->ng ? x->ng : 1, sizeof *x->run_of);
	x->run_rep = malloc((x->nkept ? x->nkept : 1) * sizeof *x->run_rep);
	if (!order || !x->run_of || !x->run_rep) {
		free(order);
		return 0;
	}
	for (size_t k = 0; k < x->nkept; k++) {
		order[k].x = x;
		order[k].gi = x->kept[k];
	}
	qsort(order, x->nkept, sizeof *order, by_keys);
	for (size_t k = 0; k < x->nkept && ok; k++) {
		uint32_t gi = order[k].gi, rep;
		if (k == 0 || keys_cmp(x, x->run_rep[x->nruns - 1], gi))
			x->run_rep[x->nruns++] = gi;
		rep = x->run_rep[x->nruns - 1];
		x->run_of[gi] = (uint32_t)(x->nruns - 1);
		for (int j = 0; j < x->s->nkeys && ok; j++) {
			struct qsqlmem_val a, b;
			if (x->s->keys[j].bucket)
				continue;
			a = group_val(&x->g[rep], x->s->keys[j].col);
			b = group_val(&x->g[gi], x->s->keys[j].col);
			ok = identical(&a, &b);
		}
	}
	free(order);
	if (x->s->nkeys == 0 && x->nruns == 0)
		x->nruns = 1; /* no GROUP BY: one row, even over no rows */
	return ok;
}

/* A new slot for (run, bucket); 0 past QSQLAGG_GROUPS_MAX or out of
 * memory. */
static int add_slot(struct exec *x, uint32_t run, int bnull, int64_t b)
{
	struct slot *sl;
	size_t nagg = (size_t)x->nagg;

	if (x->nslots == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		if (cap > QSQLAGG_GROUPS_MAX ||
		    vec_resize(&x->slots, cap, sizeof *x->slots) ||
		    vec_resize(&x->accs, cap * (nagg ? nagg : 1), sizeof *x->accs))
			return 0;
		x->cap = cap;
	}
	sl = &x->slots[x->nslots];
	sl->run = run;
	sl->bnull = bnull;
	sl->b = b;
	sl->rows = 0;
	if (nagg)
		memset(&x->accs[x->nslots * nagg], 0, nagg * sizeof *x->accs);
	x->nslots++;
	return 1;
}

static size_t hash_at(uint32_t run, int bnull, int64_t b, size_t cap)
{
	uint64_t h = ((uint64_t)run << 1 | (uint64_t)bnull) *
	             0x9e3779b97f4a7c15ULL ^ (uint64_t)b;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (cap - 1);
}

/* The slot of (run, bucket), made when new; SIZE_MAX when it cannot be. */
static size_t bucket_slot(struct exec *x, uint32_t run, int bnull, int64_t b)
{
	size_t i;

	if (2 * (x->nslots + 1) > x->hcap) {
		size_t cap = x->hcap ? 2 * x->hcap : 1024;
		uint32_t *h = calloc(cap, sizeof *h);
		if (!h)
			return SIZE_MAX;
		for (size_t k = 0; k < x->nslots; k++) {
			const struct slot *sl = &x->slots[k];
			i = hash_at(sl->run, sl->bnull, sl->b, cap);
			while (h[i])
				i = (i + 1) & (cap - 1);
			h[i] = (uint32_t)k + 1;
		}
		free(x->hash);
		x->hash = h;
		x->hcap = cap;
	}
	i = hash_at(run, bnull, b, x->hcap);
	while (x->hash[i]) {
		const struct slot *sl = &x->slots[x->hash[i] - 1];
		if (sl->run == run && sl->bnull == bnull && sl->b == b)
			return x->hash[i] - 1;
		i = (i + 1) & (x->hcap - 1);
	}
	if (!add_slot(x, run, bnull, b))
		return SIZE_MAX;
	x->hash[i] = (uint32_t)x->nslots;
	return x->nslots - 1;
}

/* SQLite's CAST of a real to INT (doubleToInt64). */
static int64_t real_to_int(double r)
{
	if (r <= -9223372036854775808.0)
		return INT64_MIN;
	if (r >= 9223372036854775807.0)
		return INT64_MAX;
	return (int64_t)r;
}

/* Adds v to an aggregate of function fn, as SQLite's step does. */
static void step(struct acc *a, enum qsqlshape_fn fn,
                 const struct qsqlmem_val *v)
{
	if (v->type == SQLITE_NULL)
		return;
	a->n++;
	switch (fn) {
	case QF_SUM: case QF_TOTAL: case QF_AVG:
		if (v->type == SQLITE_INTEGER) {
			a->rsum += (double)v->i;
			if (!(a->approx | a->overflow) &&
			    __builtin_add_overflow(a->isum, v->i, &a->isum))
				a->approx = a->overflow = 1;
		} else {
			a->rsum += v->d;
			a->approx = 1;
		}
		break;
	case QF_MIN: case QF_MAX:
		/* the first of equal values stays */
		if (!a->best.type || (fn == QF_MAX ? val_cmp(&a->best, v) < 0
		                                   : val_cmp(&a->best, v) > 0))
			a->best = *v;
		break;
	default:
		break;
	}
}

/* The narrowest [*a, *b) of group g that the conditions on the time
 * column allow (binary search in a group sorted by it). */
static void narrow(const struct exec *x, const struct qsqlmem_group *g,
                   size_t *a, size_t *b)
{
	*a = g->first;
	*b = g->first + g->count;
	if (!g->sorted)
		return;
	for (int k = 0; k < x->s->nconds; k++) {
		const struct qsqlshape_cond *c = &x->s->conds[k];
		double v;
		if (c->col != QC_T)
			continue;
		if (c->v.type == SQLITE_INTEGER) {
			if (c->v.i < -(int64_t)EXACT_MAX || c->v.i > (int64_t)EXACT_MAX)
				continue;
			v = (double)c->v.i;
		} else {
			v = c->v.d;
		}
		if (c->op == QO_GE || c->op == QO_EQ)
			*a = bsearchd_lower(x->t, *a, *b, v);
		if (c->op == QO_GT)
			*a = bsearchd_upper(x->t, *a, *b, v);
		if (c->op == QO_LE || c->op == QO_EQ)
			*b = bsearchd_upper(x->t, *a, *b, v);
		if (c->op == QO_LT)
			*b = bsearchd_lower(x->t, *a, *b, v);
	}
}

/* Whether row i meets the row-level conditions. */
static int row_ok(const struct exec *x, size_t i)
{
	for (int c = 0; c < x->s->nconds; c++)
		if (!QC_GROUP_LEVEL(x->s->conds[c].col)) {
			struct qsqlmem_val v = row_val(x, x->s->conds[c].col, i);
			if (!holds(&v, &x->s->conds[c]))
				return 0;
		}
	return 1;
}

/* Adds the rows of the kept groups, in scan order; QSQLAGG_* or 0. */
static int scan(struct exec *x)
{
	const struct qsqlshape *s = x->s;
	const struct qsqlshape_expr *bk = x->bucket >= 0 ? &s->keys[x->bucket]
	                                                 : NULL;

	if (qsqlfn_clock_expired(x->clock))
		return QSQLAGG_STOPPED;
	if (!bk)
		for (size_t r = 0; r < x->nruns; r++)
			if (!add_slot(x, (uint32_t)r, 0, 0))
				return QSQLAGG_DECLINED;
	for (size_t k = 0; k < x->nkept; k++) {
		const struct qsqlmem_group *g = &x->g[x->kept[k]];
		uint32_t run = x->run_of[x->kept[k]];
		size_t a, b, sl = run;
		int have = 0; /* sl is the slot of the last row's bucket */
		narrow(x, g, &a, &b);
		for (size_t i = a; i < b; i++) {
			if (!(++x->ticks & 0xffff) &&
			    qsqlfn_clock_expired(x->clock))
				return QSQLAGG_STOPPED;
			if (s->nconds && !row_ok(x, i))
				continue;
			if (bk) {
				struct qsqlmem_val v = row_val(x, bk->col, i);
				double q = v.d / bk->div;
				int bnull = v.type == SQLITE_NULL || isnan(q);
				int64_t bv = bnull ? 0 : real_to_int(q);
				/* rows in time order mostly stay in one bucket */
				if (!have || x->slots[sl].bnull != bnull ||
				    x->slots[sl].b != bv || x->slots[sl].run != run)
					sl = bucket_slot(x, run, bnull, bv);
				if (sl == SIZE_MAX)
					return QSQLAGG_DECLINED;
				have = 1;
			}
			x->slots[sl].rows++;
			for (int j = 0; j < x->nagg; j++) {
				const struct qsqlshape_expr *e = &s->items[x->agg[j]];
				struct qsqlmem_val v;
				if (e->fn == QF_COUNT_STAR)
					continue;
				v = row_val(x, e->col, i);
				step(&x->accs[sl * (size_t)x->nagg + (size_t)j],
				     e->fn, &v);
			}
		}
	}
	return 0;
}

/* The value aggregate j of slot sl shows; 0 when SQLite would fail it
 * (an integer sum that overflowed). */
static int final(const struct exec *x, size_t sl, int j,
                 struct qsqlmem_val *out)
{
	const struct acc *a = &x->accs[sl * (size_t)x->nagg + (size_t)j];
	struct qsqlmem_val null = {SQLITE_NULL, 0, 0, NULL, 0};

	switch (x->s->items[x->agg[j]].fn) {
	case QF_COUNT_STAR: *out = int_val(x->slots[sl].rows); return 1;
	case QF_COUNT: *out = int_val(a->n); return 1;
	case QF_SUM:
		if (a->n && a->overflow)
			return 0;
		*out = !a->n ? null : a->approx ? real_val(a->rsum)
		                                : int_val(a->isum);
		return 1;
	case QF_TOTAL: *out = real_val(a->rsum); return 1;
	case QF_AVG:
		*out = a->n ? real_val(a->rsum / (double)a->n) : null;
		return 1;
	default:
		*out = a->best.type ? a->best : null;
		return 1;
	}
}

/* The value key k of slot sl has. */
static struct qsqlmem_val key_val(const struct exec *x, size_t sl, int k)
{
	const struct slot *s = &x->slots[sl];
	struct qsqlmem_val null = {SQLITE_NULL, 0, 0, NULL, 0};

	if (x->s->keys[k].bucket)
		return s->bnull ? null : int_val(s->b);
	return group_val(&x->g[x->run_rep[s->run]], x->s->keys[k].col);
}

/* An output row while the answer is ordered: its values (the items, then
 * the keys) and its position in group order. */
struct outrow {
	const struct qsqlshape *s;
	const struct qsqlmem_val *v;
	size_t pos;
	int by_order; /* 0: by the GROUP BY keys; 1: by the ORDER BY terms */
};

static int by_output(const void *pa, const void *pb)
{
	const struct outrow *a = pa, *b = pb;
	const struct qsqlshape *s = a->s;
	int ni = s->nitems, c;

	if (!a->by_order) {
		/* with as many ORDER BY terms as keys, SQLite sorts the k-th
		 * key in the direction of the k-th term (the ORDER BY may then
		 * need no sort of its own) */
		for (int k = 0; k < s->nkeys; k++)
			if ((c = val_cmp(&a->v[ni + k], &b->v[ni + k])))
				return s->norder == s->nkeys && s->order[k].desc ? -c : c;
	} else {
		for (int k = 0; k < s->norder; k++) {
			const struct qsqlshape_order *o = &s->order[k];
			int at = o->item >= 0 ? o->item : ni + o->key;
			if ((c = val_cmp(&a->v[at], &b->v[at])))
				return o->desc ? -c : c;
		}
	}
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Fills out from the slots: group order, then the ORDER BY (stable: ties
 * keep group order, as SQLite's sorter and its sequence numbers do),
 * then OFFSET and LIMIT. */
static int answer(struct exec *x, struct qsqlagg_result *out)
{
	const struct qsqlshape *s = x->s;
	int width = s->nitems + s->nkeys;
	size_t n = 0, from, count, cap = x->nslots ? x->nslots : 1;
	struct qsqlmem_val *vals = malloc(cap * (size_t)width * sizeof *vals);
	struct outrow *rows = malloc(cap * sizeof *rows);
	int rc = QSQLAGG_DECLINED;

	if (!vals || !rows)
		goto done;
	for (size_t sl = 0; sl < x->nslots; sl++) {
		struct qsqlmem_val *v = vals + n * (size_t)width;
		/* a group all of whose rows the WHERE dropped is no group (no
		 * GROUP BY: the one row stays) */
		if (s->nkeys && !x->slots[sl].rows)
			continue;
		for (int k = 0; k < s->nkeys; k++)
			v[s->nitems + k] = key_val(x, sl, k);
		for (int k = 0, j = 0; k < s->nitems; k++)
			if (s->item_key[k] >= 0)
				v[k] = v[s->nitems + s->item_key[k]];
			else if (!final(x, sl, j++, &v[k]))
				goto done;
		rows[n].s = s;
		rows[n].v = v;
		rows[n].pos = n;
		rows[n].by_order = 0;
		n++;
	}
	qsort(rows, n, sizeof *rows, by_output);
	if (s->norder) {
		for (size_t k = 0; k < n; k++) {
			rows[k].pos = k;
			rows[k].by_order = 1;
		}
		qsort(rows, n, sizeof *rows, by_output);
	}
	from = (uint64_t)s->offset < n ? (size_t)s->offset : n;
	count = n - from;
	if (s->limit >= 0 && (uint64_t)s->limit < count)
		count = (size_t)s->limit;
	out->ncol = s->nitems;
	out->nrows = count;
	if (!(out->cells = malloc((count ? count : 1) * (size_t)s->nitems *
	                          sizeof *out->cells)))
		goto done;
	for (size_t r = 0; r < count; r++)
		memcpy(out->cells + r * (size_t)s->nitems, rows[from + r].v,
		       (size_t)s->nitems * sizeof *out->cells);
	rc = 0;
done:
	free(vals);
	free(rows);
	return rc;
}

int qsqlagg_run(const struct qsqlmem *m, const struct qsqlshape *s,
                struct qsqlfn_clock *clock, struct qsqlagg_result *out)
{
	struct exec x;
	int rc = QSQLAGG_DECLINED;

	memset(out, 0, sizeof *out);
	memset(&x, 0, sizeof x);
	x.m = m;
	x.s = s;
	x.clock = clock;
	x.bucket = -1;
	if (s->table == QS_NVTX) {
		x.g = m->nvtx.g;
		x.ng = m->nvtx.ng;
		x.t = m->nvtx.start;
	} else {
		x.g = m->points.g;
		x.ng = m->points.ng;
		x.t = m->points.time;
	}
	for (int k = 0; k < s->nkeys; k++)
		if (s->keys[k].bucket)
			x.bucket = k;
	for (int k = 0; k < s->nitems; k++)
		if (s->items[k].fn != QF_NONE)
			x.agg[x.nagg++] = k;
	if (keep_groups(&x) && make_runs(&x) && !(rc = scan(&x)))
		rc = answer(&x, out);
	else if (!rc)
		rc = QSQLAGG_DECLINED;
	free(x.kept);
	free(x.run_of);
	free(x.run_rep);
	free(x.slots);
	free(x.accs);
	free(x.hash);
	return rc;
}

void qsqlagg_result_free(struct qsqlagg_result *r)
{
	free(r->cells);
	r->cells = NULL;
	r->nrows = 0;
}

int qsqlagg_matches_sqlite(sqlite3 *db)
{
	/* 1e16 + 1 rounds back to 1e16 in a double: a plain running sum
	 * ends at 3 (avg 0.75); a compensated or wider one at 4 */
	static const double in[] = {1e16, 1.0, -1e16, 3.0};
	sqlite3_stmt *st = NULL;
	struct acc a;
	int ok = 0;

	memset(&a, 0, sizeof a);
	for (size_t k = 0; k < sizeof in / sizeof *in; k++) {
		struct qsqlmem_val v = real_val(in[k]);
		step(&a, QF_AVG, &v);
	}
	if (sqlite3_prepare_v2(db, "SELECT avg(column1), total(column1), "
	                       "sum(column1) FROM "
	                       "(VALUES (1e16), (1.0), (-1e16), (3.0))",
	                       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_double(st, 0) == a.rsum / (double)a.n &&
		     sqlite3_column_double(st, 1) == a.rsum &&
		     sqlite3_column_double(st, 2) == a.rsum;
	sqlite3_finalize(st);
	return ok;
}
