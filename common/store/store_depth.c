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

/* One thread's ends as sortable keys (end_key), each with its range's
 * place in the thread; two sets, for the radix sort's passes. */
struct keyed {
	uint64_t *key;
	uint32_t *k;
	size_t kcap, icap;
};

/* The ranges of one profile and the scratch of the counts (reused). */
struct work {
	struct range *r;        /* stored order */
	uint32_t *byth;         /* indexes into r, grouped by thread */
	size_t n, cap, bycap;
	size_t *start;          /* per thread: its first index in byth */
	size_t scap;
	struct keyed byend[2];  /* one thread's ends, sorted (radix_sort) */
	size_t *rank;           /* per range: how many ends are below its end */
	size_t rcap;
	int *tree;              /* Fenwick tree over the ranks */
	size_t tcap;
	uint32_t *depth;        /* per range of r: its depth */
	size_t dcap;
	struct strdict tids;    /* the profile's tid texts -> thread ids */
};

/* A key whose unsigned order is the order of the doubles and whose
 * equality is theirs (not NaN; -0 keyed as +0): positives with the sign
 * bit set, negatives with every bit flipped. */
static uint64_t end_key(double x)
{
	uint64_t u;
	if (x == 0)
		x = 0; /* -0 == +0 */
	memcpy(&u, &x, sizeof u);
	return u >> 63 ? ~u : u | (uint64_t)1 << 63;
}

/*
 * Sorts the n keys of b[0] (with their k) by key: a least-significant-
 * byte radix sort, b[1] the scratch, a pass skipped when every key has
 * the same byte there (the sign and exponent bytes of most traces).
 * Returns the set that holds the result.  qsort of (end, k) pairs was
 * two thirds of the depths' time: 2.3 s of a 20 M-range export's.
 */
static int radix_sort(struct keyed b[2], size_t n)
{
	static const int bytes = (int)sizeof(uint64_t);
	uint32_t count[sizeof(uint64_t)][256];
	int cur = 0;

	memset(count, 0, sizeof count);
	for (size_t i = 0; i < n; i++)
		for (int d = 0; d < bytes; d++)
			count[d][b[0].key[i] >> (8 * d) & 0xff]++;
	for (int d = 0; d < bytes; d++) {
		uint32_t *c = count[d], sum = 0;
		const struct keyed *from = &b[cur], *to = &b[!cur];
		if (!n || c[from->key[0] >> (8 * d) & 0xff] == n)
			continue;
		for (int v = 0; v < 256; v++) {
			uint32_t t = c[v];
			c[v] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++) {
			uint32_t at = c[from->key[i] >> (8 * d) & 0xff]++;
			to->key[at] = from->key[i];
			to->k[at] = from->k[i];
		}
		cur = !cur;
	}
	return cur;
}

/* Containment order: start ascending, end descending, stored order. */
static int cmp_range(const struct range *x, const struct range *y)
{
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

/* cmp_range of the ranges r[*a] and r[*b] (qsort_r). */
static int cmp_index(const void *a, const void *b, void *r)
{
	return cmp_range((const struct range *)r + *(const uint32_t *)a,
	                 (const struct range *)r + *(const uint32_t *)b);
}

/*
 * Sets the depths (w->depth) of one thread's n ranges w->r[x[k]], x in
 * containment order: every range that contains range x[k] comes before
 * it, and a range before it contains it exactly when its end is >= its
 * end.  So depth = k - (the ranges before it that end below its end),
 * counted with a Fenwick tree over the ranks of the ends.
 */
static int thread_depths(struct work *w, const uint32_t *x, size_t n,
                         struct err *e)
{
	const struct range *r = w->r;
	struct keyed *b = w->byend;

	for (int s = 0; s < 2; s++)
		if (vec_reserve(&b[s].key, &b[s].kcap, n, sizeof *b[s].key) ||
		    vec_reserve(&b[s].k, &b[s].icap, n, sizeof *b[s].k))
			return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	if (vec_reserve(&w->rank, &w->rcap, n, sizeof *w->rank) ||
	    vec_reserve(&w->tree, &w->tcap, n + 1, sizeof *w->tree))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	for (size_t k = 0; k < n; k++) {
		b[0].key[k] = end_key(r[x[k]].end);
		b[0].k[k] = (uint32_t)k;
	}
	const struct keyed *s = &b[radix_sort(b, n)];
	for (size_t i = 0, first = 0; i < n; i++) {
		if (i && s->key[i] != s->key[i - 1])
			first = i;
		w->rank[s->k[i]] = first;
	}
	memset(w->tree, 0, (n + 1) * sizeof *w->tree);
	for (size_t k = 0; k < n; k++) {
		int64_t lower = 0, depth;
		for (size_t i = w->rank[k]; i > 0; i -= i & -i)
			lower += w->tree[i];
		for (size_t i = w->rank[k] + 1; i <= n; i += i & -i)
			w->tree[i]++;
		depth = (int64_t)k - lower;
		w->depth[x[k]] = (uint32_t)depth;
	}
	return 0;
}

/* Groups the profile's ranges by thread (stably: the stored order, start
 * ascending and end descending, then needs no sort), orders any thread
 * that is not in containment order, counts the depths and emits them in
 * the stored order. */
static int profile_depths(struct work *w, int64_t profile,
                          const struct store_depth_out *out, struct err *e)
{
	size_t nth = w->tids.count + 1; /* the last: rows without a tid */
	int rc = 0;

	if (!w->n)
		return 0;
	if (w->n > UINT32_MAX)
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth"
		               " (%zu ranges in profile %lld)", w->n,
		               (long long)profile);
	if (vec_reserve(&w->byth, &w->bycap, w->n, sizeof *w->byth) ||
	    vec_reserve(&w->depth, &w->dcap, w->n, sizeof *w->depth) ||
	    vec_reserve(&w->start, &w->scap, nth + 1, sizeof *w->start))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	memset(w->start, 0, (nth + 1) * sizeof *w->start);
	for (size_t k = 0; k < w->n; k++)
		w->start[w->r[k].thread + 1]++;
	for (size_t t = 0; t < nth; t++)
		w->start[t + 1] += w->start[t];
	for (size_t k = 0; k < w->n; k++)
		w->byth[w->start[w->r[k].thread]++] = (uint32_t)k;
	for (size_t t = 0, from = 0; t < nth && !rc; t++) {
		size_t to = w->start[t], m = to - from;
		uint32_t *seg = w->byth + from;
		for (size_t k = 1; k < m; k++)
			if (cmp_range(&w->r[seg[k - 1]], &w->r[seg[k]]) > 0) {
				qsort_r(seg, m, sizeof *seg, cmp_index, w->r);
				break;
			}
		rc = thread_depths(w, seg, m, e);
		from = to;
	}
	/* in stored order, the table's key order: appends */
	for (size_t k = 0; k < w->n && !rc; k++)
		if (w->depth[k])
			rc = out->emit(out->ctx, profile, w->r[k].ordinal, w->depth[k], e);
	w->n = 0;
	strdict_free(&w->tids);
	strdict_init(&w->tids);
	return rc;
}

/* Adds a range to the profile being read; tid NULL: a row without one. */
static int add_range(struct work *w, double start, double end,
                     int64_t ordinal, const void *tid, size_t tid_len,
                     struct err *e)
{
	struct range *r;
	size_t thread = SIZE_MAX;

	if (tid) {
		int64_t id = strdict_intern(&w->tids, tid, tid_len, NULL);
		if (id < 0)
			return err_set(e, ERR_NOMEM, "out of memory");
		thread = (size_t)id;
	}
	if (vec_reserve(&w->r, &w->cap, w->n + 1, sizeof *w->r))
		return err_set(e, ERR_NOMEM, "out of memory");
	r = &w->r[w->n++];
	r->start = start;
	r->end = end;
	r->ordinal = ordinal;
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

static void work_free(struct work *w)
{
	strdict_free(&w->tids);
	free(w->r);
	free(w->byth);
	free(w->start);
	for (int s = 0; s < 2; s++) {
		free(w->byend[s].key);
		free(w->byend[s].k);
	}
	free(w->rank);
	free(w->tree);
	free(w->depth);
}

/* Computes and emits the depths of the profile being read. */
static int work_flush(struct work *w, int64_t profile,
                      const struct store_depth_out *out, struct err *e)
{
	place_untid(w);
	return profile_depths(w, profile, out, e);
}

/*
 * The streamed count.  The trace format stores a profile's ranges in
 * containment order (start ascending, end descending), so every range
 * that contains a range comes before it, and a range whose end is below
 * the current start contains no later one.  Each thread keeps the ends of
 * those that may, its open ranges, in a treap (a search tree balanced by
 * random priorities) that counts each subtree: a range's depth is the
 * number of open ends at or after its end, counted as it is inserted, in
 * O(log open) whether the ranges nest or cross.  Memory: the open ranges.
 */

/* A treap node, by its index in the pool (0: none). */
struct tnode {
	uint64_t key;    /* an open range's end_key */
	uint32_t prio;   /* a parent's is above its children's */
	uint32_t size;   /* the nodes of its subtree */
	uint32_t l, r;   /* keys below / at or above key */
};

/* One thread's open ranges, and some closed ones: they are removed when
 * the treap has doubled since the last removal (a closed range's end is
 * below every later range's, so it counts for none). */
struct active {
	uint32_t root;
	uint32_t kept;                 /* its size after the last removal */
	uint64_t last_start, last_end; /* its previous range's keys */
	int any;                       /* it has had a range */
};

struct store_depth {
	struct store_depth_out out;
	int64_t profile; /* the profile being read; -1: none yet */
	int unordered;
	struct strdict tids;  /* the profile's tid texts -> thread ids */
	struct active *th;    /* per thread id */
	size_t nth, thcap;
	int64_t last_thread;  /* the previous range's thread id; -1: none */
	char *last_tid;       /* its tid text (borrowed from tids) */
	size_t last_len;
	struct tnode *node;   /* every thread's treap nodes; [0] unused */
	size_t nodecap;
	uint32_t used;        /* node[1..used) handed out */
	uint32_t freed;       /* a list of free nodes through l; 0: none */
	uint32_t rng;         /* xorshift state for the priorities */
	struct pending {
		int64_t ordinal, depth;
	} *pend;              /* depths not yet emitted, a run of them */
	size_t npend;
};

/* Depths are emitted in runs of this many: the writer loads a run of
 * one kind of row with its multi-row statement. */
#define PENDING_RUN 1024

/* Emits the pending depths of the profile being read. */
static int emit_pending(struct store_depth *d, struct err *e)
{
	for (size_t k = 0; k < d->npend; k++)
		if (d->out.emit(d->out.ctx, d->profile, d->pend[k].ordinal,
		                d->pend[k].depth, e))
			return e->code;
	d->npend = 0;
	return 0;
}

static uint32_t tsize(const struct tnode *n, uint32_t x)
{
	return x ? n[x].size : 0;
}

static void tfix(struct tnode *n, uint32_t x)
{
	n[x].size = 1 + tsize(n, n[x].l) + tsize(n, n[x].r);
}

/* Splits the treap x into the keys below key (*lo) and the rest (*hi). */
static void tsplit(struct tnode *n, uint32_t x, uint64_t key, uint32_t *lo,
                   uint32_t *hi)
{
	if (!x) {
		*lo = *hi = 0;
		return;
	}
	if (n[x].key < key) {
		tsplit(n, n[x].r, key, &n[x].r, hi);
		*lo = x;
	} else {
		tsplit(n, n[x].l, key, lo, &n[x].l);
		*hi = x;
	}
	tfix(n, x);
}

/* Inserts the node x into the treap t and returns the new root; adds to
 * *ge the keys of t at or above x's. */
static uint32_t tinsert(struct tnode *n, uint32_t t, uint32_t x, uint32_t *ge)
{
	if (!t)
		return x;
	if (n[x].prio > n[t].prio) {
		tsplit(n, t, n[x].key, &n[x].l, &n[x].r);
		*ge += tsize(n, n[x].r);
		tfix(n, x);
		return x;
	}
	if (n[t].key < n[x].key)
		n[t].r = tinsert(n, n[t].r, x, ge);
	else {
		*ge += 1 + tsize(n, n[t].r);
		n[t].l = tinsert(n, n[t].l, x, ge);
	}
	n[t].size++;
	return t;
}

/* Puts the nodes of the treap x on the free list. */
static void tfree(struct store_depth *d, uint32_t x)
{
	while (x) {
		uint32_t r = d->node[x].r;
		tfree(d, d->node[x].l);
		d->node[x].l = d->freed;
		d->freed = x;
		x = r;
	}
}

/* A node holding key; 0 when out of memory. */
static uint32_t tnew(struct store_depth *d, uint64_t key)
{
	uint32_t x = d->freed;

	if (x)
		d->freed = d->node[x].l;
	else {
		if (d->used == UINT32_MAX ||
		    vec_reserve(&d->node, &d->nodecap, (size_t)d->used + 1,
		                sizeof *d->node))
			return 0;
		x = d->used++;
	}
	d->rng ^= d->rng << 13;
	d->rng ^= d->rng >> 17;
	d->rng ^= d->rng << 5;
	d->node[x] = (struct tnode){key, d->rng, 1, 0, 0};
	return x;
}

/* Starts a new profile: no thread, no open range. */
static void stream_reset(struct store_depth *d)
{
	strdict_free(&d->tids);
	strdict_init(&d->tids);
	d->nth = 0;
	d->last_thread = -1;
	d->used = 1;
	d->freed = 0;
}

/* The open ranges of the thread named tid; NULL when out of memory. */
static struct active *thread_of(struct store_depth *d, const char *tid,
                                size_t len)
{
	int64_t id;

	if (d->last_thread >= 0 && len == d->last_len &&
	    !memcmp(tid, d->last_tid, len))
		return &d->th[d->last_thread];
	id = strdict_intern(&d->tids, tid, len, NULL);
	if (id < 0)
		return NULL;
	if ((size_t)id >= d->nth) {
		if (vec_reserve(&d->th, &d->thcap, (size_t)id + 1, sizeof *d->th))
			return NULL;
		memset(&d->th[id], 0, sizeof *d->th);
		d->nth = (size_t)id + 1;
	}
	d->last_thread = id;
	d->last_tid = d->tids.entries[id].key;
	d->last_len = len;
	return &d->th[id];
}

/*
 * Counts one range of thread t (keys s <= u of its start and end) and
 * opens it: its depth in *depth, or 1 when the stream cannot count it
 * (out of order, or an end before its start); -1 when out of memory.
 */
static int stream_range(struct store_depth *d, struct active *t, uint64_t s,
                        uint64_t u, int64_t *depth)
{
	uint32_t gone, x, ge = 0;

	if (u < s || (t->any && (s < t->last_start ||
	                         (s == t->last_start && u > t->last_end))))
		return 1;
	t->last_start = s;
	t->last_end = u;
	t->any = 1;
	if (tsize(d->node, t->root) > 2 * t->kept + 32) {
		tsplit(d->node, t->root, s, &gone, &t->root);
		tfree(d, gone);
		t->kept = tsize(d->node, t->root);
	}
	if (!(x = tnew(d, u)))
		return -1;
	t->root = tinsert(d->node, t->root, x, &ge);
	*depth = ge;
	return 0;
}

/* Frees the stream's memory; the loaded table's pass does the rest. */
static void stream_give_up(struct store_depth *d)
{
	d->unordered = 1;
	free(d->node);
	d->node = NULL;
	d->nodecap = 0;
	free(d->th);
	d->th = NULL;
	d->nth = d->thcap = 0;
	strdict_free(&d->tids);
	strdict_init(&d->tids);
	d->last_thread = -1;
	free(d->pend);
	d->pend = NULL;
	d->npend = 0;
}

struct store_depth *store_depth_new(const struct store_depth_out *out)
{
	struct store_depth *d = calloc(1, sizeof *d);

	if (d) {
		d->out = *out;
		strdict_init(&d->tids);
		d->profile = -1;
		d->last_thread = -1;
		d->used = 1;
		d->rng = 2463534242u;
	}
	return d;
}

int store_depth_add(struct store_depth *d, int64_t profile, int64_t ordinal,
                    double start, double end, const char *tid,
                    size_t tid_len, struct err *e)
{
	struct active *t;
	int64_t depth = 0;
	int rc;

	if (d->unordered)
		return 0;
	if (profile != d->profile) {
		if (emit_pending(d, e))
			return e->code;
		if (profile < d->profile) {
			stream_give_up(d); /* the caller's store_depth_write does it */
			return 0;
		}
		stream_reset(d);
		d->profile = profile;
	}
	/* the events table holds NaN as NULL, which has no depth */
	if (start != start || end != end)
		return 0;
	if (!(t = thread_of(d, tid ? tid : "", tid ? tid_len : 0)) ||
	    (rc = stream_range(d, t, end_key(start), end_key(end), &depth)) < 0)
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	if (rc) {
		stream_give_up(d);
		return 0;
	}
	if (!depth)
		return 0;
	if (!d->pend && !(d->pend = malloc(PENDING_RUN * sizeof *d->pend)))
		return err_set(e, ERR_NOMEM, "out of memory computing nvtx.depth");
	d->pend[d->npend].ordinal = ordinal;
	d->pend[d->npend].depth = depth;
	return ++d->npend == PENDING_RUN ? emit_pending(d, e) : 0;
}

int store_depth_finish(struct store_depth *d, struct err *e)
{
	if (d->unordered)
		return STORE_DEPTH_UNORDERED;
	return emit_pending(d, e);
}

void store_depth_free(struct store_depth *d)
{
	if (!d)
		return;
	stream_give_up(d);
	strdict_free(&d->tids);
	free(d);
}

const char store_depth_schema_sql[] =
	"CREATE TABLE " STORE_DEPTH_TABLE " (profile INTEGER,"
	" ordinal INTEGER, depth INTEGER, PRIMARY KEY (profile, ordinal))"
	" WITHOUT ROWID;";

struct sql_out {
	sqlite3 *db;
	sqlite3_stmt *ins;
};

static int insert_depth(void *ctx, int64_t profile, int64_t ordinal,
                        int64_t depth, struct err *e)
{
	struct sql_out *o = ctx;

	sqlite3_bind_int64(o->ins, 1, profile);
	sqlite3_bind_int64(o->ins, 2, ordinal);
	sqlite3_bind_int64(o->ins, 3, depth);
	int rc = sqlite3_step(o->ins);
	sqlite3_reset(o->ins);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		               sqlite3_errmsg(o->db));
	return 0;
}

int store_depth_write(sqlite3 *db, struct err *e)
{
	struct sql_out o = {db, NULL};
	const struct store_depth_out out = {insert_depth, &o};
	sqlite3_stmt *st = NULL;
	struct work w;
	int64_t profile = 0;
	int rc = 0, step;

	memset(&w, 0, sizeof w);
	strdict_init(&w.tids);
	/* the primary key's order: no sort */
	if (sqlite3_exec(db, "DELETE FROM " STORE_DEPTH_TABLE, NULL, NULL,
	                 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
	                       "SELECT profile, tid, start, \"end\", ordinal"
	                       " FROM events WHERE start IS NOT NULL"
	                       " AND \"end\" IS NOT NULL ORDER BY profile, ordinal",
	                       -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO " STORE_DEPTH_TABLE
	                       " VALUES (?1, ?2, ?3)", -1, &o.ins,
	                       NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
		goto done;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		if (w.n && sqlite3_column_int64(st, 0) != profile &&
		    (rc = work_flush(&w, profile, &out, e)))
			goto done;
		profile = sqlite3_column_int64(st, 0);
		const void *tid = sqlite3_column_type(st, 1) == SQLITE_NULL
		                          ? NULL
		                          : sqlite3_column_blob(st, 1);
		if (sqlite3_column_type(st, 1) != SQLITE_NULL && !tid)
			tid = "";
		if ((rc = add_range(&w, sqlite3_column_double(st, 2),
		                    sqlite3_column_double(st, 3),
		                    sqlite3_column_int64(st, 4), tid,
		                    (size_t)sqlite3_column_bytes(st, 1), e)))
			goto done;
	}
	if (step != SQLITE_DONE) {
		rc = err_set(e, ERR_DATA, "cannot write nvtx.depth: %s",
		             sqlite3_errmsg(db));
		goto done;
	}
	rc = work_flush(&w, profile, &out, e);
done:
	sqlite3_finalize(st);
	sqlite3_finalize(o.ins);
	work_free(&w);
	return rc;
}
