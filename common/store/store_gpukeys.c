/* store_gpukeys: the whole-run GPU summary by key (see store_gpukeys.h). */
#include "store/store_gpukeys.h"

#include <stdlib.h>
#include <string.h>

#include "base/strdict.h"
#include "base/vec.h"
#include "store/store_gpu.h"
#include "store/store_sumio.h"

/* The NVTX name of each range ordinal of one profile: an array when the
 * ordinals are dense (they are: the import numbers them from 0), else a
 * lookup per row. */
struct range_names {
	int64_t profile;
	int32_t *by_ord; /* -1: NULL */
	size_t n;
	sqlite3_stmt *lookup;
};

static int64_t col_or_null(sqlite3_stmt *st, int k)
{
	return sqlite3_column_type(st, k) == SQLITE_NULL
	       ? STORE_GPUKEYS_NULL : sqlite3_column_int64(st, k);
}

static int load_names(sqlite3 *db, int64_t profile, struct range_names *m,
                      struct err *e)
{
	sqlite3_stmt *st;
	int64_t max = -1, count = 0;
	int r, rc = 0;

	free(m->by_ord);
	m->by_ord = NULL;
	m->n = 0;
	m->profile = profile;
	if (sqlite3_prepare_v2(db, "SELECT max(ordinal), count(*) FROM events"
	                       " WHERE profile = ?1", -1, &st, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	sqlite3_bind_int64(st, 1, profile);
	if (sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
		max = sqlite3_column_int64(st, 0);
		count = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (max < 0 || max >= 2 * count + 65536)
		return 0; /* none, or sparse: looked up per row */
	m->n = (size_t)max + 1;
	if (!(m->by_ord = malloc(m->n * sizeof *m->by_ord)))
		return err_set(e, ERR_NOMEM, "out of memory");
	memset(m->by_ord, 0xff, m->n * sizeof *m->by_ord);
	if (sqlite3_prepare_v2(db, "SELECT ordinal, name FROM events WHERE"
	                       " profile = ?1", -1, &st, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	sqlite3_bind_int64(st, 1, profile);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t o = sqlite3_column_int64(st, 0);
		int64_t v = col_or_null(st, 1);
		if (o < 0 || (size_t)o >= m->n)
			continue;
		if (v != STORE_GPUKEYS_NULL && (v < 0 || v > INT32_MAX)) {
			free(m->by_ord); /* not an index: looked up per row */
			m->by_ord = NULL;
			m->n = 0;
			break;
		}
		m->by_ord[o] = v == STORE_GPUKEYS_NULL ? -1 : (int32_t)v;
	}
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		rc = store_sumio_fail(db, e);
	sqlite3_finalize(st);
	return rc;
}

/* The name of range ord of m's profile into *out (STORE_GPUKEYS_NULL when
 * ord is NULL, names no range, or the range has no name). */
static int range_name(sqlite3 *db, struct range_names *m, int64_t ord,
                      int64_t *out, struct err *e)
{
	*out = STORE_GPUKEYS_NULL;
	if (ord == STORE_GPUKEYS_NULL)
		return 0;
	if (m->by_ord) {
		if (ord >= 0 && (size_t)ord < m->n && m->by_ord[ord] >= 0)
			*out = m->by_ord[ord];
		return 0;
	}
	if (!m->lookup &&
	    sqlite3_prepare_v2(db, "SELECT name FROM events WHERE profile = ?1"
	                       " AND ordinal = ?2", -1, &m->lookup, NULL) !=
	    SQLITE_OK)
		return store_sumio_fail(db, e);
	sqlite3_bind_int64(m->lookup, 1, m->profile);
	sqlite3_bind_int64(m->lookup, 2, ord);
	int r = sqlite3_step(m->lookup);
	if (r == SQLITE_ROW)
		*out = col_or_null(m->lookup, 0);
	sqlite3_reset(m->lookup);
	return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : store_sumio_fail(db, e);
}

static void keys_free(struct store_gpukey *v, size_t n)
{
	for (size_t k = 0; k < n; k++)
		qsum_free(&v[k].duration);
	free(v);
}

/* The keys of the rows inside [0, duration] into *out, *nout of them
 * (owned by the caller: keys_free; NULL and 0 when none). */
static int collect(sqlite3 *db, double duration, struct store_gpukey **out,
                   size_t *nout, struct err *e)
{
	sqlite3_stmt *st;
	struct strdict keys;
	struct range_names names = {-1, NULL, 0, NULL};
	struct store_gpukey *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc = 0;

	*out = NULL;
	*nout = 0;
	if (sqlite3_prepare_v2(db, "SELECT profile, name, kind, device, stream,"
	                       " nvtx, start, \"end\" FROM " STORE_GPU_TABLE,
	                       -1, &st, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	strdict_init(&keys);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t key[6] = {sqlite3_column_int64(st, 0),
		                  sqlite3_column_int64(st, 1),
		                  sqlite3_column_int(st, 2), col_or_null(st, 3),
		                  col_or_null(st, 4), STORE_GPUKEYS_NULL};
		double s = sqlite3_column_double(st, 6);
		double en = sqlite3_column_double(st, 7);
		int added = 0;
		if (!(s >= 0 && en <= duration))
			continue; /* a boundary row: the query scans those */
		if ((key[0] != names.profile &&
		     (rc = load_names(db, key[0], &names, e)) != 0) ||
		    (rc = range_name(db, &names, col_or_null(st, 5), &key[5],
		                     e)) != 0)
			break;
		int64_t k = strdict_intern(&keys, key, sizeof key, &added);
		if (k < 0 || (added && vec_reserve_zero(&v, &cap, n + 1,
		                                        sizeof *v))) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		struct store_gpukey *g = &v[k];
		if (added) {
			g->profile = key[0];
			g->name = key[1];
			g->kind = key[2];
			g->device = key[3];
			g->stream = key[4];
			g->nvtx_name = key[5];
			n++;
		}
		if (!g->count || en - s > g->max)
			g->max = en - s;
		g->count++;
		qsum_add(&g->duration, en - s);
	}
	if (!rc && r != SQLITE_DONE)
		rc = store_sumio_fail(db, e);
	sqlite3_finalize(st);
	sqlite3_finalize(names.lookup);
	free(names.by_ord);
	strdict_free(&keys);
	if (rc) {
		keys_free(v, cap);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

static void bind_or_null(sqlite3_stmt *st, int k, int64_t v)
{
	if (v == STORE_GPUKEYS_NULL)
		sqlite3_bind_null(st, k);
	else
		sqlite3_bind_int64(st, k, v);
}

/* The two tables written from keys: by key, and by (profile, name). */
static const char *const create_sql[2] = {
	"CREATE TABLE " STORE_GPUKEYS_TABLE " (profile INTEGER, seq INTEGER,"
	" name INTEGER, kind INTEGER, device INTEGER, stream INTEGER,"
	" nvtx_name INTEGER, count INTEGER, duration BLOB, max REAL, run REAL,"
	" PRIMARY KEY (profile, seq)) WITHOUT ROWID",
	"CREATE TABLE " STORE_GPU_SUM_NAMES " (profile INTEGER, name INTEGER,"
	" count INTEGER, duration BLOB, max REAL, run REAL, PRIMARY KEY"
	" (profile, name)) WITHOUT ROWID",
};
static const char *const insert_sql[2] = {
	"INSERT INTO " STORE_GPUKEYS_TABLE " VALUES"
	" (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
	"INSERT INTO " STORE_GPU_SUM_NAMES " VALUES (?1,?2,?3,?4,?5,?6)",
};

/* Creates the key table (names 0) or the name table (names 1) and
 * writes v[0..n) (borrowed) to it, for this duration. */
static int write_rows(sqlite3 *db, double duration,
                      const struct store_gpukey *v, size_t n, int names,
                      struct err *e)
{
	sqlite3_stmt *st;
	unsigned char *blob = NULL;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_exec(db, create_sql[names], NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, insert_sql[names], -1, &st, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	for (size_t k = 0; k < n && !rc; k++) {
		const struct store_gpukey *g = &v[k];
		int c = 1;
		if (qsum_failed(&g->duration)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		sqlite3_bind_int64(st, c++, g->profile);
		if (!names)
			sqlite3_bind_int64(st, c++, (int64_t)k);
		sqlite3_bind_int64(st, c++, g->name);
		if (!names) {
			sqlite3_bind_int64(st, c++, g->kind);
			bind_or_null(st, c++, g->device);
			bind_or_null(st, c++, g->stream);
			bind_or_null(st, c++, g->nvtx_name);
		}
		sqlite3_bind_int64(st, c++, g->count);
		if (store_sumio_bind_parts(st, c++, &g->duration, &blob, &cap)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		sqlite3_bind_double(st, c++, g->max);
		sqlite3_bind_double(st, c, duration);
		rc = store_sumio_step(db, st, e);
	}
	sqlite3_finalize(st);
	free(blob);
	return rc;
}

/* The keys merged per (profile, name) into *out (owned by the caller:
 * keys_free, *n of them). */
static int merge_names(const struct store_gpukey *keys, size_t nkeys,
                       struct store_gpukey **out, size_t *nout,
                       struct err *e)
{
	struct strdict names;
	struct store_gpukey *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	strdict_init(&names);
	for (size_t i = 0; i < nkeys; i++) {
		const struct store_gpukey *g = &keys[i];
		int64_t key[2] = {g->profile, g->name};
		int added = 0;
		int64_t k = strdict_intern(&names, key, sizeof key, &added);
		if (k < 0 || (added && vec_reserve_zero(&v, &cap, n + 1,
		                                        sizeof *v))) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		struct store_gpukey *m = &v[k];
		if (added) {
			m->profile = g->profile;
			m->name = g->name;
			n++;
		}
		if (!m->count || g->max > m->max)
			m->max = g->max;
		m->count += g->count;
		qsum_merge(&m->duration, &g->duration);
	}
	strdict_free(&names);
	if (rc) {
		keys_free(v, cap);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

int store_gpukeys_summarize(sqlite3 *db, double duration, struct err *e)
{
	struct store_gpukey *keys = NULL, *names = NULL;
	size_t nkeys = 0, nnames = 0;
	int rc = collect(db, duration, &keys, &nkeys, e);

	if (!rc)
		rc = merge_names(keys, nkeys, &names, &nnames, e);
	if (!rc)
		rc = write_rows(db, duration, names, nnames, 1, e);
	if (!rc)
		rc = write_rows(db, duration, keys, nkeys, 0, e);
	if (!rc)
		rc = store_gpu_summarize_bins(db, duration, e);
	keys_free(names, nnames);
	keys_free(keys, nkeys);
	return rc;
}

struct key_call {
	store_gpukeys_fn fn;
	void *ctx;
};

static int key_row(void *call, sqlite3_stmt *st, const double *parts,
                   size_t nparts)
{
	struct key_call *c = call;
	struct store_gpukey k;

	memset(&k, 0, sizeof k);
	k.name = sqlite3_column_int64(st, 0);
	k.kind = sqlite3_column_int64(st, 1);
	k.device = col_or_null(st, 2);
	k.stream = col_or_null(st, 3);
	k.nvtx_name = col_or_null(st, 4);
	k.count = sqlite3_column_int64(st, 5);
	k.max = sqlite3_column_double(st, 7);
	return c->fn(c->ctx, &k, parts, nparts);
}

int store_gpukeys_read(sqlite3 *db, int64_t profile, double duration,
                       int *have, store_gpukeys_fn fn, void *ctx,
                       struct err *e)
{
	sqlite3_stmt *st;
	struct key_call call = {fn, ctx};

	*have = 0;
	if (sqlite3_prepare_v2(db, "SELECT name, kind, device, stream,"
	                       " nvtx_name, count, duration, max, run FROM "
	                       STORE_GPUKEYS_TABLE " WHERE profile = ?1 ORDER BY"
	                       " seq", -1, &st, NULL) != SQLITE_OK)
		return 0; /* a cache without the summary */
	sqlite3_bind_int64(st, 1, profile);
	const struct store_sumio_read rd = {6, 8, duration, key_row, &call};
	return store_sumio_read(db, st, &rd, have, e);
}
