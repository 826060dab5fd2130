/* nvtxsum: NVTX summary shards of the viewer (see nvtxsum.h). */
#include "report/nvtxsum.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"
#include "base/vec.h"

#include <math.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One accumulator: (level, thread, bin, name) -> sums.  key 0 = empty. */
struct acc {
	uint64_t key; /* 1 + (level << 62 | thread << 50 | bin << 30 | name + 1) */
	double inner, total;
	uint64_t count;
};

struct table {
	struct acc *v;
	size_t cap, n; /* cap: a power of two */
	int full;      /* the profile needs more than NVTXSUM_MAX_ENTRIES */
};

struct profile_sum {
	char **tids; /* the profile's threads, in order of first range */
	size_t ntids;
	int binned;  /* bins written */
	int named;   /* names written */
	int stacked; /* CPU stacks written */
};

struct nvtxsum {
	struct profile_sum *p;
	size_t n;
	double duration;
};

/* Per-profile scan state. */
struct scan {
	struct nvtxsum *s;
	struct shard_writer *w;
	struct table t;
	struct buf row;
	int64_t profile; /* -1 before the first row */
	int skip;        /* too many threads or accumulators */
	size_t last_tid;
};

#define KEY(l, th, bin, name) \
	(1 + ((uint64_t)(l) << 62 | (uint64_t)(th) << 50 | (uint64_t)(bin) << 30 | \
	      (uint64_t)((name) + 1)))
#define K_LEVEL(k) ((int)(((k) - 1) >> 62))
#define K_THREAD(k) ((size_t)((((k) - 1) >> 50) & 0xfff))
#define K_BIN(k) ((size_t)((((k) - 1) >> 30) & 0xfffff))
#define K_NAME(k) ((int64_t)(((k) - 1) & 0x3fffffff) - 1)

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static struct acc *table_find(struct table *t, uint64_t key)
{
	size_t i = slot_of(key, t->cap);
	while (t->v[i].key && t->v[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return &t->v[i];
}

/* The accumulator of key, created when absent; NULL when out of memory or
 * over the bound (t->full set). */
static struct acc *table_get(struct table *t, uint64_t key)
{
	struct acc *a;

	if (t->cap == 0 || (t->n + 1) * 4 > t->cap * 3) { /* load <= 3/4 */
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct acc *old = t->v, *nv;
		if (t->n + 1 > NVTXSUM_MAX_ENTRIES || !(nv = calloc(cap, sizeof *nv))) {
			t->full = 1;
			return NULL;
		}
		size_t ocap = t->cap;
		t->v = nv;
		t->cap = cap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key)
				*table_find(t, old[i].key) = old[i];
		free(old);
	}
	a = table_find(t, key);
	if (!a->key) {
		a->key = key;
		t->n++;
	}
	return a;
}

/* Index of the thread tid in the profile's list (appended when new);
 * (size_t)-1 when out of memory or over the bound. */
static size_t thread_of(struct scan *sc, struct profile_sum *ps,
                        const char *tid, size_t len)
{
	if (sc->last_tid < ps->ntids && strlen(ps->tids[sc->last_tid]) == len &&
	    !memcmp(ps->tids[sc->last_tid], tid, len))
		return sc->last_tid;
	for (size_t i = 0; i < ps->ntids; i++)
		if (strlen(ps->tids[i]) == len && !memcmp(ps->tids[i], tid, len))
			return sc->last_tid = i;
	if (ps->ntids >= NVTXSUM_MAX_THREADS ||
	    vec_resize(&ps->tids, ps->ntids + 1, sizeof *ps->tids))
		return (size_t)-1;
	if (!(ps->tids[ps->ntids] = strndup(tid, len)))
		return (size_t)-1;
	return sc->last_tid = ps->ntids++;
}

/* Adds one range (already clipped to [0, duration]) to every level. */
static int add_range(struct scan *sc, size_t th, int64_t name, double s, double e)
{
	double d = sc->s->duration;
	for (int l = 0; l < NVTXSUM_LEVELS; l++) {
		long nb = (long)NVTXSUM_BINS0 << (3 * l);
		double w = d / (double)nb;
		long a = (long)floor(s / w), b = (long)floor(e / w);
		if (a > nb - 1) a = nb - 1;
		if (b > nb - 1) b = nb - 1;
		for (long i = a; i <= b; i++) {
			double lo = (double)i * w, hi = i == nb - 1 ? d : (double)(i + 1) * w;
			double ov = fmin(e, hi) - fmax(s, lo);
			struct acc *ac = table_get(&sc->t, KEY(l, th, i, name));
			if (!ac)
				return -1;
			if (ov < 0)
				ov = 0;
			ac->total += ov;
			if (!(s <= lo && e >= hi))
				ac->inner += ov;
			ac->count++;
		}
	}
	return 0;
}

static int cmp_acc(const void *pa, const void *pb)
{
	const struct acc *a = pa, *b = pb;
	uint64_t ga = (a->key - 1) >> 30, gb = (b->key - 1) >> 30;
	int la = K_LEVEL(a->key), lb = K_LEVEL(b->key);
	size_t ba = K_BIN(a->key), bb = K_BIN(b->key);

	if (la != lb) return la < lb ? -1 : 1;
	if (ba != bb) return ba < bb ? -1 : 1; /* bins in time order */
	if (ga != gb) return ga < gb ? -1 : 1; /* then thread */
	if (a->inner != b->inner) return a->inner > b->inner ? -1 : 1;
	if (a->total != b->total) return a->total > b->total ? -1 : 1;
	if (a->count != b->count) return a->count > b->count ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static void put_us(struct buf *b, double x)
{
	jsonout_real(b, round(x * 1e6) / 1e6);
}

/* Writes the finished profile's bins: one row per (level, bin, thread):
 * [bin, thread, names, name, inner, total, count, ...] (top names). */
static int flush_profile(struct scan *sc, struct err *e)
{
	struct table *t = &sc->t;
	struct profile_sum *ps;
	size_t k = 0;
	int rc = 0;

	if (sc->profile < 0)
		return 0;
	ps = &sc->s->p[sc->profile];
	if (!sc->skip && !t->full && t->n) {
		struct acc *v = t->v;
		for (size_t i = 0; i < t->cap; i++) /* compact in place */
			if (v[i].key)
				v[k++] = v[i];
		qsort(v, k, sizeof *v, cmp_acc);
		for (size_t i = 0; i < k && !rc;) {
			uint64_t g = (v[i].key - 1) >> 30;
			size_t j = i, bin = K_BIN(v[i].key);
			int l = K_LEVEL(v[i].key);
			double w = sc->s->duration / (double)((long)NVTXSUM_BINS0 << (3 * l));
			while (j < k && ((v[j].key - 1) >> 30) == g)
				j++;
			buf_reset(&sc->row);
			buf_putc(&sc->row, '[');
			jsonout_int(&sc->row, (int64_t)bin);
			buf_putc(&sc->row, ',');
			jsonout_int(&sc->row, (int64_t)K_THREAD(v[i].key));
			buf_putc(&sc->row, ',');
			jsonout_int(&sc->row, (int64_t)(j - i));
			for (size_t m = i; m < j && m < i + NVTXSUM_TOP; m++) {
				buf_putc(&sc->row, ',');
				jsonout_int(&sc->row, K_NAME(v[m].key));
				buf_putc(&sc->row, ',');
				put_us(&sc->row, v[m].inner);
				buf_putc(&sc->row, ',');
				put_us(&sc->row, v[m].total);
				buf_putc(&sc->row, ',');
				jsonout_int(&sc->row, (int64_t)v[m].count);
			}
			buf_putc(&sc->row, ']');
			rc = shard_writer_add_text(sc->w, SHARD_SUMMARY,
			                           sc->profile * NVTXSUM_STREAMS + l,
			                           (double)bin * w, (double)(bin + 1) * w,
			                           sc->row.data, sc->row.len, e);
			i = j;
		}
		ps->binned = !rc;
	}
	free(t->v);
	memset(t, 0, sizeof *t);
	sc->skip = 0;
	sc->last_tid = 0;
	return rc;
}

static int scan_events(struct scan *sc, sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st = NULL;
	double d = sc->s->duration;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT profile, start, end, name, tid FROM events "
	                       "ORDER BY profile, ordinal", -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "Cannot read events for NVTX summaries: %s",
		               sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), name = sqlite3_column_int64(st, 3);
		double s = sqlite3_column_double(st, 1), en = sqlite3_column_double(st, 2);
		const char *tid = (const char *)sqlite3_column_text(st, 4);
		size_t th;

		if (p < 0 || (uint64_t)p >= sc->s->n) {
			sqlite3_finalize(st);
			return err_set(e, ERR_DATA, "Event of unknown profile %lld in the store",
			               (long long)p);
		}
		if (p != sc->profile) {
			if (flush_profile(sc, e)) {
				sqlite3_finalize(st);
				return e->code;
			}
			sc->profile = p;
		}
		if (sc->skip || !(en >= 0) || !(s <= d))
			continue;
		if (!tid || name < -1 || name > 0x3ffffffd) {
			sc->skip = 1;
			continue;
		}
		th = thread_of(sc, &sc->s->p[p], tid, (size_t)sqlite3_column_bytes(st, 4));
		if (th == (size_t)-1 || add_range(sc, th, name, fmax(s, 0), fmin(en, d)))
			sc->skip = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "Cannot read events for NVTX summaries: %s",
		               sqlite3_errmsg(db));
	return flush_profile(sc, e);
}

static void put_parts(struct buf *b, const void *blob, int n)
{
	buf_putc(b, '[');
	for (int i = 0; i + 8 <= n; i += 8) {
		uint64_t u = 0;
		double x;
		for (int k = 7; k >= 0; k--) /* little-endian */
			u = u << 8 | ((const unsigned char *)blob)[i + k];
		memcpy(&x, &u, sizeof x);
		if (i)
			buf_putc(b, ',');
		jsonout_real(b, x);
	}
	buf_putc(b, ']');
}

typedef void (*row_fmt)(struct buf *b, sqlite3_stmt *st);

static void fmt_name(struct buf *b, sqlite3_stmt *st)
{
	jsonout_int(b, sqlite3_column_int64(st, 1));
	buf_putc(b, ',');
	jsonout_int(b, sqlite3_column_int64(st, 2));
	buf_putc(b, ',');
	jsonout_real(b, sqlite3_column_double(st, 3));
	buf_putc(b, ',');
	put_parts(b, sqlite3_column_blob(st, 4), sqlite3_column_bytes(st, 4));
	buf_putc(b, ',');
	put_parts(b, sqlite3_column_blob(st, 5), sqlite3_column_bytes(st, 5));
}

static void fmt_stack(struct buf *b, sqlite3_stmt *st)
{
	jsonout_int(b, sqlite3_column_int64(st, 1));
	buf_putc(b, ',');
	jsonout_int(b, sqlite3_column_int64(st, 2));
}

/*
 * Copies the rows of sql (profile first, then fmt's columns; one parameter:
 * the duration) into stream `stream` of each profile, setting the flag at
 * byte offset `flag` of its profile_sum.  A cache without the tables
 * (another builder's) gives no rows.
 */
static int copy_rows(struct scan *sc, sqlite3 *db, const char *sql, int stream,
                     size_t flag, row_fmt fmt, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_double(st, 1, sc->s->duration);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		if (p < 0 || (uint64_t)p >= sc->s->n)
			continue;
		buf_reset(&sc->row);
		buf_putc(&sc->row, '[');
		fmt(&sc->row, st);
		buf_putc(&sc->row, ']');
		if (shard_writer_add_text(sc->w, SHARD_SUMMARY, p * NVTXSUM_STREAMS + stream,
		                          0, sc->s->duration, sc->row.data, sc->row.len, e)) {
			sqlite3_finalize(st);
			return e->code;
		}
		*(int *)((char *)&sc->s->p[p] + flag) = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "Cannot read the cache's summaries: %s",
		               sqlite3_errmsg(db));
	return 0;
}

#define SUMMARY_DURATION_IS \
	"(SELECT CAST(value AS REAL) FROM dsight_summary_meta WHERE key = 'duration') = ?"

/* The names stream: [name, count, duration_max, [duration parts], [clipped
 * parts]] per name, and the CPU stream: [stack, samples] per stack, of the
 * profiles the cache summarised exactly for this duration. */
static int scan_summaries(struct scan *sc, sqlite3 *db, struct err *e)
{
	int rc = copy_rows(sc, db,
		"SELECT n.profile, n.name, n.count, n.duration_max, n.duration_parts,"
		" n.clipped_parts FROM dsight_summary_names n"
		" JOIN dsight_summary_name_profiles USING (profile)"
		" WHERE " SUMMARY_DURATION_IS " ORDER BY n.profile, n.name",
		NVTXSUM_LEVELS, offsetof(struct profile_sum, named), fmt_name, e);
	if (!rc)
		rc = copy_rows(sc, db,
			"SELECT s.profile, s.stack, s.samples FROM dsight_summary_stacks s"
			" JOIN dsight_summary_profiles p USING (profile)"
			" WHERE p.samples IS NOT NULL AND " SUMMARY_DURATION_IS
			" ORDER BY s.profile, s.stack",
			NVTXSUM_LEVELS + 1, offsetof(struct profile_sum, stacked), fmt_stack, e);
	return rc;
}

int nvtxsum_build(struct nvtxsum **out, struct shard_writer *w,
                  const char *sqlite_path, double duration, size_t nprofiles,
                  const volatile sig_atomic_t *cancel, struct err *e)
{
	struct nvtxsum *s = calloc(1, sizeof *s);
	struct scan sc = {0};
	sqlite3 *db = NULL;
	int rc;

	*out = NULL;
	if (!s || !(s->p = calloc(nprofiles ? nprofiles : 1, sizeof *s->p))) {
		free(s);
		return err_set(e, ERR_NOMEM, "Out of memory for NVTX summaries");
	}
	s->n = nprofiles;
	s->duration = duration;
	if (!(duration > 0) || !isfinite(duration)) {
		*out = s; /* nothing to bin */
		return 0;
	}
	if (sqlite3_open_v2(sqlite_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		err_set(e, ERR_DATA, "Cannot open %s for NVTX summaries: %s", sqlite_path,
		        db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		nvtxsum_free(s);
		return ERR_DATA;
	}
	cancel_sqlite(db, cancel);
	sc.s = s;
	sc.w = w;
	sc.profile = -1;
	buf_init(&sc.row, 0);
	rc = scan_events(&sc, db, e);
	if (!rc)
		rc = scan_summaries(&sc, db, e);
	free(sc.t.v);
	buf_free(&sc.row);
	sqlite3_close(db);
	if (rc) {
		nvtxsum_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

json_t *nvtxsum_profile_json(const struct nvtxsum *s,
                             const struct shard_writer *w, size_t p)
{
	const struct profile_sum *ps;
	json_t *o, *levels, *tids;

	if (!s || p >= s->n || (!s->p[p].binned && !s->p[p].named))
		return NULL;
	ps = &s->p[p];
	o = json_object();
	json_object_set_new(o, "version", json_integer(1));
	json_object_set_new(o, "top", json_integer(NVTXSUM_TOP));
	if (ps->binned) {
		tids = json_array();
		for (size_t i = 0; i < ps->ntids; i++)
			json_array_append_new(tids, json_string(ps->tids[i]));
		json_object_set_new(o, "threads", tids);
		levels = json_array();
		for (int l = 0; l < NVTXSUM_LEVELS; l++) {
			json_t *lv = json_object();
			long nb = (long)NVTXSUM_BINS0 << (3 * l);
			json_object_set_new(lv, "bins", json_integer(nb));
			json_object_set_new(lv, "width", json_real(s->duration / (double)nb));
			json_object_set_new(lv, "chunks", shard_writer_descs_json(
				w, SHARD_SUMMARY, (int64_t)(p * NVTXSUM_STREAMS + (size_t)l)));
			json_array_append_new(levels, lv);
		}
		json_object_set_new(o, "levels", levels);
	}
	if (ps->named)
		json_object_set_new(o, "names", shard_writer_descs_json(
			w, SHARD_SUMMARY, (int64_t)(p * NVTXSUM_STREAMS + NVTXSUM_LEVELS)));
	return o;
}

json_t *nvtxsum_cpu_json(const struct nvtxsum *s, const struct shard_writer *w,
                         size_t p)
{
	if (!s || p >= s->n || !s->p[p].stacked)
		return NULL;
	return shard_writer_descs_json(w, SHARD_SUMMARY,
	                               (int64_t)(p * NVTXSUM_STREAMS + NVTXSUM_LEVELS + 1));
}

void nvtxsum_free(struct nvtxsum *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		for (size_t t = 0; t < s->p[i].ntids; t++)
			free(s->p[i].tids[t]);
		free(s->p[i].tids);
	}
	free(s->p);
	free(s);
}
