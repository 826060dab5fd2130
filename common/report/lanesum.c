/* lanesum: lane summaries of the viewer (see lanesum.h). */
#include "report/lanesum.h"
#include "base/buf.h"
#include "base/jsonout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One accumulator: (level, lane, depth, bin, name) -> sums.  key 0 = empty. */
struct acc {
	uint64_t key;
	double inner, total;
	uint64_t count;
};

/* An update of one accumulator, waiting in the queue (lanesum_add). */
struct op {
	uint64_t key;
	double ov;    /* the range's time inside the bin */
	int part;     /* the range does not cover the whole bin */
};

#define QUEUE 32 /* updates waiting for their slot's cache line */

struct lanesum {
	struct acc *v;
	size_t cap, n; /* cap: a power of two */
	struct op q[QUEUE]; /* a ring: q[qh], ... (qn of them) */
	unsigned qh, qn;
	int full;      /* over a bound: no bins for this group */
	int levels;    /* levels kept: the finest are dropped to stay within
	                  LANESUM_MAX_ENTRIES */
	double duration;
	struct buf row;
};

/* 1 + (level << 62 | lane << 50 | depth << 46 | bin << 30 | name + 1);
 * the bits above 30 name the row (row_key puts them in row order). */
#define KEY(l, lane, d, bin, name) \
	(1 + ((uint64_t)(l) << 62 | (uint64_t)(lane) << 50 | (uint64_t)(d) << 46 | \
	      (uint64_t)(bin) << 30 | (uint64_t)((name) + 1)))
#define K_LEVEL(k) ((int)(((k) - 1) >> 62))
#define K_LANE(k) ((size_t)((((k) - 1) >> 50) & 0xfff))
#define K_DEPTH(k) ((int)((((k) - 1) >> 46) & 0xf))
#define K_BIN(k) ((size_t)((((k) - 1) >> 30) & 0xffff))
#define K_NAME(k) ((int64_t)(((k) - 1) & 0x3fffffff) - 1)

struct lanesum *lanesum_new(double duration)
{
	struct lanesum *ls = calloc(1, sizeof *ls);
	if (!ls)
		return NULL;
	ls->duration = duration;
	ls->levels = LANESUM_LEVELS;
	buf_init(&ls->row, 0);
	return ls;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static struct acc *find(struct lanesum *t, uint64_t key)
{
	size_t i = slot_of(key, t->cap);
	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return &t->v[i];
}

/*
 * Writes a byte of every page of the n fresh bytes at p (zeroed by
 * calloc).  A fresh page is the shared zero page until written; find's
 * read maps it, and the write after it is then a copy-on-write fault that
 * flushes every core's TLB (7 % of the web phase's CPU on large).
 * Writing first maps a page of its own, with no flush.  Not memset: the
 * compiler folds that into the calloc.
 */
static void prefault(void *p, size_t n)
{
	volatile char *c = p;

	for (size_t i = 0; i < n; i += 4096)
		c[i] = 0;
}

/* The accumulator of key, created when absent; NULL when out of memory or
 * over the bound. */
static struct acc *get(struct lanesum *t, uint64_t key)
{
	struct acc *a;

	if (t->cap == 0 || (t->n + 1) * 4 > t->cap * 3) { /* load <= 3/4 */
		size_t cap = t->cap ? t->cap * 2 : 4096, ocap = t->cap;
		struct acc *old = t->v, *nv;
		if (t->n + 1 > LANESUM_MAX_ENTRIES || !(nv = calloc(cap, sizeof *nv)))
			return NULL;
		prefault(nv, cap * sizeof *nv);
		t->v = nv;
		t->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key)
				*find(t, old[i].key) = old[i];
		free(old);
	}
	a = find(t, key);
	if (!a->key) {
		a->key = key;
		t->n++;
	}
	return a;
}

/* Drops the finest level kept (its accumulators freed for the coarser
 * ones): 0, or -1 when only level 0 is left. */
static int drop_level(struct lanesum *t)
{
	size_t k = 0;
	struct acc *kept;
	if (t->levels <= 1 || !(kept = malloc(t->n ? t->n * sizeof *kept : 1)))
		return -1;
	t->levels--;
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].key && K_LEVEL(t->v[i].key) < t->levels)
			kept[k++] = t->v[i];
	memset(t->v, 0, t->cap * sizeof *t->v);
	for (size_t i = 0; i < k; i++)
		*find(t, kept[i].key) = kept[i];
	t->n = k;
	free(kept);
	return 0;
}

/* Applies one update, in the order the ranges came (so every sum adds
 * the same terms in the same order); an update of a level dropped since
 * it was queued is skipped, as the range would have skipped it. */
static void apply(struct lanesum *ls, const struct op *op)
{
	int l = K_LEVEL(op->key);
	struct acc *ac;

	if (ls->full || l >= ls->levels)
		return;
	ac = get(ls, op->key);
	/* over the bound: the finest level goes, then this bin again (unless
	 * it was the one dropped) */
	while (!ac && ls->n + 1 > LANESUM_MAX_ENTRIES && drop_level(ls) == 0)
		ac = l < ls->levels ? get(ls, op->key) : NULL;
	if (!ac && l >= ls->levels)
		return;
	if (!ac) {
		ls->full = 1;
		return;
	}
	ac->total += op->ov;
	if (op->part)
		ac->inner += op->ov;
	ac->count++;
}

/* Applies and removes the oldest queued update (the queue is not empty). */
static void apply_oldest(struct lanesum *ls)
{
	apply(ls, &ls->q[ls->qh]);
	ls->qh = (ls->qh + 1) % QUEUE;
	ls->qn--;
}

static void drain(struct lanesum *ls)
{
	while (ls->qn)
		apply_oldest(ls);
}

/*
 * Queues an update, applying the oldest when the queue is full.  The
 * table is far larger than the caches and nearly every update creates an
 * accumulator at a random slot, so `get` waited on memory for most of its
 * time (92 % of its samples on the load of the slot's key); the slot of a
 * queued update is prefetched, and QUEUE of those loads overlap.
 */
static void push(struct lanesum *ls, uint64_t key, double ov, int part)
{
	if (ls->qn == QUEUE)
		apply_oldest(ls);
	if (ls->cap)
		__builtin_prefetch(&ls->v[slot_of(key, ls->cap)], 1);
	ls->q[(ls->qh + ls->qn++) % QUEUE] = (struct op){key, ov < 0 ? 0 : ov, part};
}

int lanesum_add(struct lanesum *ls, size_t lane, int64_t depth, int64_t name,
                double s, double e)
{
	double d = ls->duration;

	if (ls->full)
		return -1;
	if (!(e >= 0) || !(s <= d))
		return 0;
	if (lane >= LANESUM_MAX_LANES || depth < 0 || name < -1 || name > LANESUM_MAX_NAME) {
		ls->full = 1;
		ls->qn = 0;
		return -1;
	}
	if (depth > LANESUM_DEEPER)
		depth = LANESUM_DEEPER;
	s = fmax(s, 0);
	e = fmin(e, d);
	for (int l = 0; l < ls->levels; l++) {
		long nb = (long)LANESUM_BINS0 << (3 * l);
		double w = d / (double)nb;
		long a = (long)floor(s / w), b = (long)floor(e / w);
		if (a > nb - 1) a = nb - 1;
		if (b > nb - 1) b = nb - 1;
		for (long i = a; i <= b; i++) {
			double lo = (double)i * w, hi = i == nb - 1 ? d : (double)(i + 1) * w;
			push(ls, KEY(l, lane, depth, i, name), fmin(e, hi) - fmax(s, lo),
			     !(s <= lo && e >= hi));
		}
	}
	return ls->full ? -1 : 0;
}

void lanesum_discard(struct lanesum *ls)
{
	ls->full = 1;
	ls->qn = 0;
}

/* The row key of accumulator key k: level, bin, lane, depth (34 bits),
 * the order of the rows. */
static uint64_t row_key(uint64_t k)
{
	return (uint64_t)K_LEVEL(k) << 32 | (uint64_t)K_BIN(k) << 16 |
	       (uint64_t)K_LANE(k) << 4 | (uint64_t)K_DEPTH(k);
}

static void insertion_sort(struct acc *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct acc x = v[i];
		size_t j = i;
		for (; j > 0 && row_key(v[j - 1].key) > row_key(x.key); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * Sorts v[0..n) by row key in place: a most-significant-byte radix sort
 * (American flag) from byte `shift` down, small buckets by insertion.
 * The names of a row are not sorted: the row takes its top ones
 * (top_names).  Sorting them too (glibc's qsort per row) was about a
 * third of the flush.
 */
static void sort_accs(struct acc *v, size_t n, int shift)
{
	size_t count[256] = {0}, next[256], end[256], at = 0;

	if (n <= 32) {
		insertion_sort(v, n);
		return;
	}
	if (shift < 0)
		return; /* one row */
	for (size_t i = 0; i < n; i++)
		count[row_key(v[i].key) >> shift & 0xff]++;
	for (int d = 0; d < 256; d++) {
		next[d] = at;
		at += count[d];
		end[d] = at;
	}
	for (unsigned d = 0; d < 256; d++)
		while (next[d] < end[d]) {
			unsigned dd = (unsigned)(row_key(v[next[d]].key) >> shift & 0xff);
			if (dd == d) {
				next[d]++;
				continue;
			}
			struct acc t = v[next[d]];
			v[next[d]] = v[next[dd]];
			v[next[dd]++] = t;
		}
	for (int d = 0; d < 256; d++)
		if (count[d] > 1)
			sort_accs(v + end[d] - count[d], count[d], shift - 8);
}

/* The names of a row rank by total, then count, then index. */
static int name_before(const struct acc *a, const struct acc *b)
{
	if (a->total != b->total)
		return a->total > b->total;
	if (a->count != b->count)
		return a->count > b->count;
	return a->key < b->key;
}

/* The first LANESUM_TOP names of the row v[0..n) in rank order into top;
 * returns how many. */
static size_t top_names(const struct acc *v, size_t n,
                        const struct acc *top[LANESUM_TOP])
{
	size_t nt = 0;

	for (size_t m = 0; m < n; m++) {
		size_t at = nt;
		while (at > 0 && name_before(&v[m], top[at - 1]))
			at--;
		if (at >= LANESUM_TOP)
			continue;
		if (nt < LANESUM_TOP)
			nt++;
		for (size_t q = nt - 1; q > at; q--)
			top[q] = top[q - 1];
		top[at] = &v[m];
	}
	return nt;
}

static void put_us(struct buf *b, double x)
{
	jsonout_real(b, round(x * 1e6) / 1e6);
}

/* The row of the group v[0..n) (one row key). */
static void put_row(struct buf *r, const struct acc *v, size_t n)
{
	const struct acc *top[LANESUM_TOP];
	size_t nt = top_names(v, n, top);

	buf_reset(r);
	buf_putc(r, '[');
	jsonout_int(r, (int64_t)K_BIN(v[0].key));
	buf_putc(r, ',');
	jsonout_int(r, (int64_t)K_LANE(v[0].key));
	buf_putc(r, ',');
	jsonout_int(r, K_DEPTH(v[0].key));
	buf_putc(r, ',');
	jsonout_int(r, (int64_t)n);
	for (size_t m = 0; m < nt; m++) {
		buf_putc(r, ',');
		jsonout_int(r, K_NAME(top[m]->key));
		buf_putc(r, ',');
		put_us(r, top[m]->inner);
		buf_putc(r, ',');
		put_us(r, top[m]->total);
		buf_putc(r, ',');
		jsonout_int(r, (int64_t)top[m]->count);
	}
	buf_putc(r, ']');
}

int lanesum_flush(struct lanesum *ls, struct shard_writer *w,
                  enum shard_kind kind, int64_t stream0, int *written,
                  struct err *e)
{
	struct acc *v;
	size_t k = 0;
	int rc = 0;

	*written = 0;
	drain(ls); /* may make or grow the table */
	v = ls->v;
	if (!ls->full && ls->n) {
		for (size_t i = 0; i < ls->cap; i++) /* compact in place */
			if (v[i].key)
				v[k++] = v[i];
		sort_accs(v, k, 32);
		for (size_t i = 0; i < k && !rc;) {
			size_t j = i, bin = K_BIN(v[i].key);
			int l = K_LEVEL(v[i].key);
			double bw = ls->duration / (double)((long)LANESUM_BINS0 << (3 * l));
			while (j < k && row_key(v[j].key) == row_key(v[i].key))
				j++;
			put_row(&ls->row, v + i, j - i);
			rc = shard_writer_add_text(w, kind, stream0 + l, (double)bin * bw,
			                           (double)(bin + 1) * bw, ls->row.data,
			                           ls->row.len, e);
			i = j;
		}
		*written = !rc;
	}
	/* the table is kept, emptied, for the next group: its pages are
	 * mapped already (prefault says why that matters) */
	if (ls->v)
		memset(ls->v, 0, ls->cap * sizeof *ls->v);
	ls->n = 0;
	ls->full = 0;
	ls->levels = LANESUM_LEVELS;
	return rc;
}

json_t *lanesum_json(double duration, const struct shard_writer *w,
                     enum shard_kind kind, int64_t stream0)
{
	json_t *o = json_object(), *levels = json_array();

	json_object_set_new(o, "version", json_integer(LANESUM_VERSION));
	json_object_set_new(o, "top", json_integer(LANESUM_TOP));
	json_object_set_new(o, "deeper", json_integer(LANESUM_DEEPER));
	for (int l = 0; l < LANESUM_LEVELS; l++) {
		size_t n0 = 0, nl = 0;
		shard_writer_descs(w, kind, stream0, &n0);
		shard_writer_descs(w, kind, stream0 + l, &nl);
		if (l > 0 && n0 > 0 && nl == 0)
			break; /* dropped to stay within the bound */
		json_t *lv = json_object();
		long nb = (long)LANESUM_BINS0 << (3 * l);
		json_object_set_new(lv, "bins", json_integer(nb));
		json_object_set_new(lv, "width", json_real(duration / (double)nb));
		json_object_set_new(lv, "chunks", shard_writer_descs_json(w, kind, stream0 + l));
		json_array_append_new(levels, lv);
	}
	json_object_set_new(o, "levels", levels);
	return o;
}

void lanesum_free(struct lanesum *ls)
{
	if (!ls)
		return;
	free(ls->v);
	buf_free(&ls->row);
	free(ls);
}
