/* qsqlmem: the nvtx and metric_points columns in memory (see qsqlmem.h). */
#include "query/qsqlmem.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/strdict.h"
#include "base/vec.h"
#include "store/store.h"
#include "store/store_views.h"

/* The texts of the dictionary values: one list of blocks. */
struct text_block {
	struct text_block *next;
	char data[];
};

struct loader {
	sqlite3 *db;
	struct qsqlmem *m;
	const cancel_flag *stop;
	struct err *e;
	int declined;
};

static int fail(struct loader *L, const char *what)
{
	return err_set(L->e, ERR_DATA, "cannot load the sql engine's %s: %s",
	               what, sqlite3_errmsg(L->db));
}

static int nomem(struct loader *L)
{
	return err_set(L->e, ERR_NOMEM, "out of memory loading the sql engine");
}

static void *alloc(struct loader *L, size_t n, size_t size)
{
	void *p = n ? calloc(n, size) : calloc(1, 1);
	if (p)
		L->m->bytes += n * size;
	return p;
}

/* Copies column k of st into v; 0, or -1 for a blob (declined) or no
 * memory. */
static int copy_val(struct loader *L, sqlite3_stmt *st, int k,
                    struct qsqlmem_val *v)
{
	struct text_block *b;
	int n;

	memset(v, 0, sizeof *v);
	v->type = sqlite3_column_type(st, k);
	switch (v->type) {
	case SQLITE_INTEGER:
		v->i = sqlite3_column_int64(st, k);
		return 0;
	case SQLITE_FLOAT:
		v->d = sqlite3_column_double(st, k);
		return 0;
	case SQLITE_NULL:
		return 0;
	case SQLITE_TEXT:
		n = sqlite3_column_bytes(st, k);
		b = malloc(sizeof *b + (size_t)n + 1);
		if (!b)
			return -1;
		memcpy(b->data, sqlite3_column_text(st, k), (size_t)n);
		b->data[n] = '\0';
		b->next = L->m->texts;
		L->m->texts = b;
		v->s = b->data;
		v->n = n;
		return 0;
	default:
		L->declined = 1;
		return -1;
	}
}

static int prepare(struct loader *L, const char *sql, sqlite3_stmt **st,
                   const char *what)
{
	if (sqlite3_prepare_v2(L->db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	/* a cache without the tables this dsight's views read */
	L->declined = 1;
	(void)what;
	return -1;
}

static int count(struct loader *L, const char *sql, size_t *n)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(L, sql, &st, "count");

	if (!rc && sqlite3_step(st) == SQLITE_ROW)
		*n = (size_t)sqlite3_column_int64(st, 0);
	else if (!rc)
		rc = fail(L, "row count");
	sqlite3_finalize(st);
	return rc;
}

/* Whether the group of a row changed: (k0, k1) differs from g's. */
static int new_group(const struct qsqlmem_group *g, size_t ng, int64_t k0,
                     int64_t k1)
{
	return !ng || g[ng - 1].key != k0 || g[ng - 1].id != k1;
}

/* The v1 columns of the events in key order: each profile's ordinals are
 * 0..n-1 (else declined); base[p] is profile p's first position. */
/* Opens group *ng of g (cap of them: one more declines the load),
 * starting at row first; its name, worker and rank are columns col,
 * col + 1 and col + 2 of st (the caller sets its key and id).  0, -1
 * declined, or the error of nomem. */
static int add_group(struct loader *L, struct qsqlmem_group *g, size_t *ng,
                     size_t cap, size_t first, sqlite3_stmt *st, int col)
{
	struct qsqlmem_group *x;

	if (*ng == cap) {
		L->declined = 1;
		return -1;
	}
	x = &g[(*ng)++];
	x->first = first;
	x->sorted = 1;
	if (copy_val(L, st, col, &x->name) ||
	    copy_val(L, st, col + 1, &x->worker) ||
	    copy_val(L, st, col + 2, &x->rank))
		return L->declined ? -1 : nomem(L);
	return 0;
}

struct by_key {
	int64_t *base, nprofiles;
	uint32_t *tid;
	int64_t *source_row;
	int32_t *depth;
	uint32_t *thread;
	struct strdict threads; /* "profile, tid" -> index in nvtx.threads */
	char *key;              /* a key of threads being built */
	size_t keycap;
};

/* The key of (profile p, text tid of n bytes) in k->threads: 8 bytes of
 * p, then the tid; NULL when out of memory. */
static const char *thread_key(struct by_key *k, int64_t p,
                              const unsigned char *tid, size_t n)
{
	if (vec_reserve(&k->key, &k->keycap, n + 8, 1))
		return NULL;
	memcpy(k->key, &p, 8);
	memcpy(k->key + 8, tid, n);
	return k->key;
}

/* The thread names of dsight_view_threads.  A range's tid is a text or
 * NULL and its profile an integer, and SQLite compares t.tid = e.tid and
 * t.profile = e.profile without converting (both columns have the
 * affinity of their values), so only rows with an integer profile and a
 * text tid can match: those are keyed, the others left out. */
static int load_threads(struct loader *L, struct by_key *k)
{
	struct qsqlmem_nvtx *t = &L->m->nvtx;
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc = 0, step;

	if (count(L, "SELECT count(*) FROM main.dsight_view_threads", &n))
		return -1;
	if (!(t->threads = alloc(L, n, sizeof *t->threads)))
		return nomem(L);
	if (prepare(L, "SELECT profile, tid, name FROM main.dsight_view_threads",
	            &st, "threads"))
		return -1;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		size_t len = (size_t)sqlite3_column_bytes(st, 1);
		const char *key;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(st, 1) != SQLITE_TEXT)
			continue;
		if (t->nthreads == n) {
			L->declined = 1;
			rc = -1;
			break;
		}
		key = thread_key(k, sqlite3_column_int64(st, 0),
		                 sqlite3_column_text(st, 1), len);
		if (!key || copy_val(L, st, 2, &t->threads[t->nthreads]))
			rc = L->declined ? -1 : nomem(L);
		else if (strdict_put(&k->threads, key, len + 8,
		                     (int64_t)t->nthreads))
			rc = nomem(L);
		else
			t->nthreads++;
	}
	if (!rc && step != SQLITE_DONE)
		rc = fail(L, "thread names");
	sqlite3_finalize(st);
	return rc;
}

/* The depth of range (p, o) from the cursor st over dsight_view_depth in
 * (profile, ordinal) order, moved up to it (*at: its last step): the
 * view's coalesce(d.depth, 0).  0, or -1 declined (a depth that is not a
 * 32-bit integer). */
static int depth_of(struct loader *L, sqlite3_stmt *st, int *at, int64_t p,
                    int64_t o, int32_t *out)
{
	int64_t dp = 0, dord = 0, d;

	*out = 0;
	while (*at == SQLITE_ROW) {
		/* profile and ordinal are INTEGER columns: a value of another
		 * type never equals a range's integer (skipped) */
		if (sqlite3_column_type(st, 0) == SQLITE_INTEGER &&
		    sqlite3_column_type(st, 1) == SQLITE_INTEGER) {
			dp = sqlite3_column_int64(st, 0);
			dord = sqlite3_column_int64(st, 1);
			if (dp > p || (dp == p && dord >= o))
				break;
		}
		*at = sqlite3_step(st);
	}
	if (*at != SQLITE_ROW || dp != p || dord != o ||
	    sqlite3_column_type(st, 2) == SQLITE_NULL)
		return 0;
	d = sqlite3_column_int64(st, 2);
	if (sqlite3_column_type(st, 2) != SQLITE_INTEGER || d < INT32_MIN ||
	    d > INT32_MAX) {
		L->declined = 1;
		return -1;
	}
	*out = (int32_t)d;
	return 0;
}

static int load_by_key(struct loader *L, struct strdict *tids,
                       struct by_key *k, size_t n)
{
	sqlite3_stmt *st = NULL, *ds = NULL;
	size_t i = 0;
	int rc = 0, step = SQLITE_DONE, at;

	if (count(L, "SELECT coalesce(max(profile), -1) + 1 FROM main.events",
	          (size_t *)&k->nprofiles))
		return -1;
	k->base = calloc((size_t)k->nprofiles + 1, sizeof *k->base);
	k->tid = malloc((n ? n : 1) * sizeof *k->tid);
	k->source_row = malloc((n ? n : 1) * sizeof *k->source_row);
	k->depth = malloc((n ? n : 1) * sizeof *k->depth);
	k->thread = malloc((n ? n : 1) * sizeof *k->thread);
	if (!k->base || !k->tid || !k->source_row || !k->depth || !k->thread)
		return nomem(L);
	if (load_threads(L, k))
		return -1;
	if (prepare(L, "SELECT profile, ordinal, depth FROM main.dsight_view_depth"
	            " ORDER BY profile, ordinal", &ds, "depth"))
		return -1;
	at = sqlite3_step(ds);
	if (prepare(L, "SELECT profile, ordinal, tid, source_row"
	            " FROM main.events ORDER BY profile, ordinal", &st, "events")) {
		sqlite3_finalize(ds);
		return -1;
	}
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		int64_t o = sqlite3_column_int64(st, 1);
		if (i == n || (L->stop && *L->stop) || p < 0 ||
		    p >= k->nprofiles ||
		    sqlite3_column_type(st, 3) != SQLITE_INTEGER) {
			L->declined = !(L->stop && *L->stop);
			rc = -1;
			break;
		}
		if (o == 0)
			k->base[p] = (int64_t)i;
		/* dense ordinals from 0: the position is base + ordinal */
		if (o < 0 || k->base[p] + o != (int64_t)i ||
		    (o == 0 && i && k->base[p] != (int64_t)i)) {
			L->declined = 1;
			rc = -1;
			break;
		}
		if (depth_of(L, ds, &at, p, o, &k->depth[i])) {
			rc = -1;
			break;
		}
		k->thread[i] = UINT32_MAX;
		if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
			k->tid[i] = UINT32_MAX;
		} else if (sqlite3_column_type(st, 2) != SQLITE_TEXT) {
			/* a TEXT column: only a damaged cache holds a blob */
			L->declined = 1;
			rc = -1;
			break;
		} else {
			const unsigned char *tx = sqlite3_column_text(st, 2);
			size_t len = (size_t)sqlite3_column_bytes(st, 2);
			const char *key = k->threads.count ?
			                  thread_key(k, p, tx, len) : NULL;
			int64_t th;
			if (k->threads.count && !key) {
				rc = nomem(L);
				break;
			}
			if (key && strdict_get(&k->threads, key, len + 8, &th))
				k->thread[i] = (uint32_t)th;
			int64_t t = strdict_intern(tids, tx, len, NULL);
			if (t < 0) {
				rc = nomem(L);
				break;
			}
			if (t >= UINT32_MAX) {
				L->declined = 1;
				rc = -1;
				break;
			}
			k->tid[i] = (uint32_t)t;
		}
		k->source_row[i] = sqlite3_column_int64(st, 3);
		i++;
	}
	if (!rc && (step != SQLITE_DONE || (at != SQLITE_ROW && at != SQLITE_DONE)))
		rc = fail(L, "NVTX ranges");
	sqlite3_finalize(st);
	sqlite3_finalize(ds);
	if (!rc && i != n)
		L->declined = 1, rc = -1;
	return rc;
}

/* Whether row i (of group g) follows row i - 1 in (start, end, ordinal)
 * order, the order of dsight_events_name within a name. */
static int in_order(const struct qsqlmem_nvtx *t, size_t i)
{
	if (t->start[i] != t->start[i - 1])
		return t->start[i] > t->start[i - 1];
	if (t->end[i] != t->end[i - 1])
		return t->end[i] > t->end[i - 1];
	return t->ordinal[i] > t->ordinal[i - 1];
}

/* The NVTX rows, in (name, profile, id, start, end, ordinal) order: the
 * order of dsight_view_names_name then dsight_events_name (the plan's
 * order, checked row by row). */
static int load_nvtx(struct loader *L)
{
	struct qsqlmem_nvtx *t = &L->m->nvtx;
	struct strdict tids;
	struct by_key k = {0};
	sqlite3_stmt *st = NULL;
	size_t ng = 0, i = 0;
	int rc = 0, step = SQLITE_DONE;

	strdict_init(&tids);
	if (count(L, "SELECT count(*) FROM main.events", &t->n) ||
	    count(L, "SELECT count(*) FROM main.dsight_view_names", &ng))
		return -1;
	t->g = alloc(L, ng, sizeof *t->g);
	t->start = alloc(L, t->n, sizeof *t->start);
	t->end = alloc(L, t->n, sizeof *t->end);
	t->source_row = alloc(L, t->n, sizeof *t->source_row);
	t->ordinal = alloc(L, t->n, sizeof *t->ordinal);
	t->tid = alloc(L, t->n, sizeof *t->tid);
	t->depth = alloc(L, t->n, sizeof *t->depth);
	t->thread = alloc(L, t->n, sizeof *t->thread);
	t->by_worker = alloc(L, ng, sizeof *t->by_worker);
	strdict_init(&k.threads);
	if (!t->g || !t->start || !t->end || !t->source_row || !t->ordinal ||
	    !t->tid || !t->depth || !t->thread || !t->by_worker)
		return nomem(L);
	rc = load_by_key(L, &tids, &k, t->n);
	if (!rc && prepare(L, "SELECT n.profile, n.id, n.name, n.worker,"
	                   " n.rank, e.start, e.\"end\", e.ordinal"
	                   " FROM main.dsight_view_names AS n"
	                   " JOIN main.events AS e ON e.profile = n.profile"
	                   " AND e.name = n.id ORDER BY n.name, n.profile, n.id",
	                   &st, "nvtx"))
		rc = -1;
	t->ng = 0;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		int64_t id = sqlite3_column_int64(st, 1);
		int64_t o = sqlite3_column_int64(st, 7);
		struct qsqlmem_group *g;
		if (i == t->n || (L->stop && *L->stop) ||
		    sqlite3_column_type(st, 5) != SQLITE_FLOAT ||
		    sqlite3_column_type(st, 6) != SQLITE_FLOAT ||
		    p < 0 || p >= k.nprofiles || o < 0 ||
		    k.base[p] + o >= (int64_t)t->n) {
			L->declined = !(L->stop && *L->stop);
			rc = -1;
			break;
		}
		if (new_group(t->g, t->ng, p, id)) {
			if ((rc = add_group(L, t->g, &t->ng, ng, i, st, 2)))
				break;
			t->g[t->ng - 1].key = p;
			t->g[t->ng - 1].id = id;
		}
		g = &t->g[t->ng - 1];
		t->start[i] = sqlite3_column_double(st, 5);
		t->end[i] = sqlite3_column_double(st, 6);
		t->ordinal[i] = o;
		t->tid[i] = k.tid[k.base[p] + o];
		t->source_row[i] = k.source_row[k.base[p] + o];
		t->depth[i] = k.depth[k.base[p] + o];
		t->thread[i] = k.thread[k.base[p] + o];
		if (g->count && !in_order(t, i)) {
			L->declined = 1;
			rc = -1;
			break;
		}
		g->count++;
		i++;
	}
	if (!rc && step != SQLITE_DONE)
		rc = fail(L, "NVTX ranges");
	sqlite3_finalize(st);
	free(k.base);
	free(k.tid);
	free(k.source_row);
	free(k.depth);
	free(k.thread);
	free(k.key);
	strdict_free(&k.threads);
	if (!rc && i != t->n)
		L->declined = 1, rc = -1;
	if (!rc) {
		t->ntids = tids.count;
		t->tids = alloc(L, tids.count, sizeof *t->tids);
		if (!t->tids)
			rc = nomem(L);
		for (size_t j = 0; !rc && j < tids.count; j++) {
			struct text_block *b = malloc(sizeof *b +
			                              tids.entries[j].len + 1);
			if (!b) {
				rc = nomem(L);
				break;
			}
			memcpy(b->data, tids.entries[j].key, tids.entries[j].len + 1);
			b->next = L->m->texts;
			L->m->texts = b;
			t->tids[j].type = SQLITE_TEXT;
			t->tids[j].s = b->data;
			t->tids[j].n = (int)tids.entries[j].len;
		}
	}
	strdict_free(&tids);
	return rc;
}

/* The groups in (worker, name, profile, id) order: the order of
 * dsight_view_names_worker. */
static int load_worker_order(struct loader *L)
{
	struct qsqlmem_nvtx *t = &L->m->nvtx;
	sqlite3_stmt *st = NULL;
	size_t k = 0;
	int rc = 0, step;

	if (prepare(L, "SELECT profile, id FROM main.dsight_view_names"
	            " ORDER BY worker, name, profile, id", &st, "workers"))
		return -1;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		int64_t id = sqlite3_column_int64(st, 1);
		/* a name without ranges has no group; few names: a scan */
		for (size_t g = 0; g < t->ng; g++)
			if (t->g[g].key == p && t->g[g].id == id) {
				if (k < t->ng)
					t->by_worker[k++] = (uint32_t)g;
				break;
			}
	}
	if (step != SQLITE_DONE)
		rc = fail(L, "NVTX names");
	sqlite3_finalize(st);
	if (!rc && k != t->ng)
		L->declined = 1, rc = -1;
	return rc;
}

/* The points, in (name, series, ordinal) order: the order of
 * dsight_view_series_name then dsight_points. */
static int load_points(struct loader *L)
{
	struct qsqlmem_points *t = &L->m->points;
	sqlite3_stmt *st = NULL;
	size_t ng = 0, i = 0;
	int rc = 0, step = SQLITE_DONE;

	if (count(L, "SELECT count(*) FROM main.dsight_points", &t->n) ||
	    count(L, "SELECT count(*) FROM main.dsight_view_series", &ng))
		return -1;
	t->g = alloc(L, ng, sizeof *t->g);
	t->time = alloc(L, t->n, sizeof *t->time);
	t->ordinal = alloc(L, t->n, sizeof *t->ordinal);
	t->ival = alloc(L, t->n, sizeof *t->ival);
	t->dval = alloc(L, t->n, sizeof *t->dval);
	t->vtype = alloc(L, t->n, sizeof *t->vtype);
	if (!t->g || !t->time || !t->ordinal || !t->ival || !t->dval ||
	    !t->vtype)
		return nomem(L);
	if (prepare(L, "SELECT s.series, s.name, s.worker, s.rank, pt.time,"
	            " pt.value, pt.ordinal FROM main.dsight_view_series AS s"
	            " JOIN main.dsight_points AS pt ON pt.series = s.series"
	            " ORDER BY s.name, s.series, pt.ordinal", &st, "points"))
		return -1;
	while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0);
		int vt = sqlite3_column_type(st, 5);
		struct qsqlmem_group *g;
		if (i == t->n || (L->stop && *L->stop) ||
		    sqlite3_column_type(st, 4) != SQLITE_FLOAT ||
		    sqlite3_column_type(st, 6) != SQLITE_INTEGER ||
		    (vt != SQLITE_INTEGER && vt != SQLITE_FLOAT &&
		     vt != SQLITE_NULL)) {
			L->declined = !(L->stop && *L->stop);
			rc = -1;
			break;
		}
		if (new_group(t->g, t->ng, s, 0)) {
			if ((rc = add_group(L, t->g, &t->ng, ng, i, st, 1)))
				break;
			t->g[t->ng - 1].key = s;
		}
		g = &t->g[t->ng - 1];
		t->time[i] = sqlite3_column_double(st, 4);
		if (g->count && t->time[i] < t->time[i - 1])
			g->sorted = 0;
		t->vtype[i] = (unsigned char)vt;
		if (vt == SQLITE_INTEGER)
			t->ival[i] = sqlite3_column_int64(st, 5);
		else if (vt == SQLITE_FLOAT)
			t->dval[i] = sqlite3_column_double(st, 5);
		t->ordinal[i] = sqlite3_column_int64(st, 6);
		g->count++;
		i++;
	}
	if (!rc && step != SQLITE_DONE)
		rc = fail(L, "metric points");
	sqlite3_finalize(st);
	if (!rc && i != t->n)
		L->declined = 1, rc = -1;
	t->sorted = 1;
	for (size_t k = 0; k < t->ng; k++)
		t->sorted &= t->g[k].sorted;
	return rc;
}

void qsqlmem_free(struct qsqlmem *m)
{
	if (!m)
		return;
	free(m->nvtx.g);
	free(m->nvtx.by_worker);
	free(m->nvtx.start);
	free(m->nvtx.end);
	free(m->nvtx.source_row);
	free(m->nvtx.ordinal);
	free(m->nvtx.tid);
	free(m->nvtx.tids);
	free(m->nvtx.depth);
	free(m->nvtx.thread);
	free(m->nvtx.threads);
	free(m->points.g);
	free(m->points.time);
	free(m->points.ordinal);
	free(m->points.ival);
	free(m->points.dval);
	free(m->points.vtype);
	while (m->texts) {
		struct text_block *b = m->texts;
		m->texts = b->next;
		free(b);
	}
	free(m);
}

int qsqlmem_load(const char *path, const cancel_flag *stop,
                 struct qsqlmem **out, struct err *e)
{
	struct loader L = {0};
	int rc;

	*out = NULL;
	L.stop = stop;
	L.e = e;
	if (!(L.m = calloc(1, sizeof *L.m)))
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = store_open_ro_vfs(path, NULL, &L.db);
	if (rc != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot open DSight SQLite cache %s: %s",
		             path, L.db ? sqlite3_errmsg(L.db) : sqlite3_errstr(rc));
	} else if (!store_views_current(L.db, "nvtx") ||
	           !store_views_current(L.db, "metric_points")) {
		rc = QSQLMEM_DECLINED;
	} else {
		rc = load_nvtx(&L);
		if (!rc)
			rc = load_worker_order(&L);
		if (!rc)
			rc = load_points(&L);
		if (rc && L.declined)
			rc = QSQLMEM_DECLINED;
		else if (rc && stop && *stop)
			rc = err_set(e, ERR_DATA, "The session is stopping");
		else if (rc < 0)
			rc = fail(&L, "columns");
	}
	sqlite3_close(L.db);
	if (rc) {
		qsqlmem_free(L.m);
		return rc;
	}
	*out = L.m;
	return 0;
}
