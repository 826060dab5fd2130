/* nvtxsum: NVTX summary shards of the viewer (see nvtxsum.h). */
#include "report/nvtxsum.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"
#include "base/vec.h"
#include "report/lanesum.h"
#include "store/store_depth.h"
#include "store/store_views.h"
#include "store/store_late.h"

#include <math.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct profile_sum {
	char **tids;   /* the profile's threads, in order of first range */
	char **tnames; /* their names (NULL: none known), when binned */
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
	struct lanesum *bins;
	struct buf row;
	int64_t profile; /* -1 before the first row */
	int skip;        /* too many threads or accumulators */
	size_t last_tid;
};

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

/* Writes the finished profile's bins (lanes: its threads). */
static int flush_profile(struct scan *sc, struct err *e)
{
	int rc = 0, written = 0;

	if (sc->profile < 0)
		return 0;
	if (sc->skip)
		lanesum_discard(sc->bins);
	rc = lanesum_flush(sc->bins, sc->w, SHARD_SUMMARY, sc->profile * NVTXSUM_STREAMS,
	                   &written, e);
	sc->s->p[sc->profile].binned = written;
	sc->skip = 0;
	sc->last_tid = 0;
	return rc;
}

/* The depths of the ranges of depth > 0, read beside the events in the
 * same (profile, ordinal) order: a merge, where a join looked each event
 * up in the depth table (1.7 % of a large build's CPU samples). */
struct depths {
	sqlite3_stmt *st; /* NULL: a cache without the depth table (depth 0) */
	int row;          /* st is on a row */
	int failed;       /* a step failed (not done) */
};

static void depths_step(struct depths *d)
{
	int r = sqlite3_step(d->st);
	d->row = r == SQLITE_ROW;
	d->failed |= r != SQLITE_ROW && r != SQLITE_DONE;
}

/* The depth of range (p, ord), advancing d past the rows before it;
 * events come in (profile, ordinal) order. */
static int64_t depth_of(struct depths *d, int64_t p, int64_t ord)
{
	while (d->row) {
		int64_t dp = sqlite3_column_int64(d->st, 0);
		int64_t dord = sqlite3_column_int64(d->st, 1);
		if (dp > p || (dp == p && dord > ord))
			return 0;
		if (dp == p && dord == ord)
			return sqlite3_column_int64(d->st, 2);
		depths_step(d);
	}
	return 0;
}

static int scan_events(struct scan *sc, sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct depths dep = {NULL, 0, 0};
	double d = sc->s->duration;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT profile, start, \"end\", name, tid, ordinal"
	                       " FROM events ORDER BY profile, ordinal", -1, &st,
	                       NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "Cannot read events for NVTX summaries: %s",
		               sqlite3_errmsg(db));
	if (sqlite3_prepare_v2(db, "SELECT profile, ordinal, depth FROM " STORE_DEPTH_TABLE
	                       " ORDER BY profile, ordinal", -1, &dep.st, NULL) == SQLITE_OK)
		depths_step(&dep);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0), name = sqlite3_column_int64(st, 3);
		double s = sqlite3_column_double(st, 1), en = sqlite3_column_double(st, 2);
		const char *tid = (const char *)sqlite3_column_text(st, 4);
		size_t th;

		if (p < 0 || (uint64_t)p >= sc->s->n) {
			sqlite3_finalize(st);
			sqlite3_finalize(dep.st);
			return err_set(e, ERR_DATA, "Event of unknown profile %lld in the store",
			               (long long)p);
		}
		if (p != sc->profile) {
			if (flush_profile(sc, e)) {
				sqlite3_finalize(st);
				sqlite3_finalize(dep.st);
				return e->code;
			}
			sc->profile = p;
		}
		int64_t depth = depth_of(&dep, p, sqlite3_column_int64(st, 5));
		if (sc->skip || !(en >= 0) || !(s <= d))
			continue;
		if (!tid || name < -1 || name > LANESUM_MAX_NAME) {
			sc->skip = 1;
			continue;
		}
		th = thread_of(sc, &sc->s->p[p], tid, (size_t)sqlite3_column_bytes(st, 4));
		if (th == (size_t)-1 || lanesum_add(sc->bins, th, depth, name, s, en))
			sc->skip = 1;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(dep.st);
	if (rc != SQLITE_DONE || dep.failed)
		return err_set(e, ERR_DATA, "Cannot read events for NVTX summaries: %s",
		               sqlite3_errmsg(db));
	return flush_profile(sc, e);
}

/* The names of the binned profiles' threads (nvtx.thread_name), when the
 * cache has them. */
static int thread_names(struct nvtxsum *s, sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "SELECT name FROM " STORE_VIEWS_THREADS
	                       " WHERE profile = ?1 AND tid = ?2", -1, &st, NULL) != SQLITE_OK)
		return 0; /* an older cache: no names */
	for (size_t p = 0; p < s->n; p++) {
		struct profile_sum *ps = &s->p[p];
		if (!ps->binned || !ps->ntids)
			continue;
		if (!(ps->tnames = calloc(ps->ntids, sizeof *ps->tnames))) {
			sqlite3_finalize(st);
			return err_set(e, ERR_NOMEM, "Out of memory for NVTX summaries");
		}
		for (size_t t = 0; t < ps->ntids; t++) {
			const char *nm;
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, (int64_t)p);
			sqlite3_bind_text(st, 2, ps->tids[t], -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW &&
			    (nm = (const char *)sqlite3_column_text(st, 0)) &&
			    !(ps->tnames[t] = strdup(nm))) {
				sqlite3_finalize(st);
				return err_set(e, ERR_NOMEM, "Out of memory for NVTX summaries");
			}
		}
	}
	sqlite3_finalize(st);
	return 0;
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
                  const cancel_flag *cancel, struct err *e)
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
	if (store_late_open_reader(sqlite_path, &db) != SQLITE_OK) {
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
	if (!(sc.bins = lanesum_new(duration)))
		rc = err_set(e, ERR_NOMEM, "Out of memory for NVTX summaries");
	else
		rc = scan_events(&sc, db, e);
	if (!rc)
		rc = thread_names(s, db, e);
	if (!rc)
		rc = scan_summaries(&sc, db, e);
	lanesum_free(sc.bins);
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
	json_t *o;

	if (!s || p >= s->n || (!s->p[p].binned && !s->p[p].named))
		return NULL;
	ps = &s->p[p];
	o = lanesum_json(s->duration, w, SHARD_SUMMARY, (int64_t)(p * NVTXSUM_STREAMS));
	if (ps->binned) {
		json_t *tids = json_array(), *names = json_array();
		int any = 0;
		for (size_t i = 0; i < ps->ntids; i++) {
			const char *nm = ps->tnames ? ps->tnames[i] : NULL;
			json_array_append_new(tids, json_string(ps->tids[i]));
			json_array_append_new(names, nm ? json_string(nm) : json_null());
			any |= nm != NULL;
		}
		json_object_set_new(o, "threads", tids);
		if (any)
			json_object_set_new(o, "thread_names", names);
		else
			json_decref(names);
	} else
		json_object_del(o, "levels");
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
		for (size_t t = 0; t < s->p[i].ntids; t++) {
			free(s->p[i].tids[t]);
			if (s->p[i].tnames)
				free(s->p[i].tnames[t]);
		}
		free(s->p[i].tids);
		free(s->p[i].tnames);
	}
	free(s->p);
	free(s);
}
