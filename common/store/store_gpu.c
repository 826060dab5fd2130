/* store_gpu: GPU activity tables and views (see store_gpu.h). */
#include "store/store_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/qsum.h"
#include "base/vec.h"
#include "store/store_sumio.h"

const char store_gpu_schema_sql[] =
	"CREATE TABLE " STORE_GPU_TABLE " (profile INTEGER, ordinal INTEGER,"
	" kind INTEGER, start REAL, \"end\" REAL, device INTEGER,"
	" stream INTEGER, correlation INTEGER, bytes INTEGER, grid_x INTEGER,"
	" grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
	" block_z INTEGER, registers INTEGER, static_smem INTEGER,"
	" dynamic_smem INTEGER, graph_node INTEGER, name INTEGER,"
	" short_name INTEGER, launch_tid TEXT, launch_start REAL,"
	" launch_name INTEGER, nvtx INTEGER, source_row INTEGER,"
	" PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	"CREATE TABLE " STORE_GPU_NAMES " (profile INTEGER, id INTEGER,"
	" name TEXT, PRIMARY KEY (profile, id)) WITHOUT ROWID;";

const char store_gpu_index_sql[] =
	"CREATE INDEX dsight_gpu_window ON " STORE_GPU_TABLE
	" (profile, start);"
	"CREATE INDEX dsight_gpu_launch ON " STORE_GPU_TABLE
	" (profile, launch_tid, launch_start, correlation)"
	" WHERE launch_tid IS NOT NULL;";

/* kind as the views and answers spell it */
#define KIND_TEXT(col) \
	"CASE " col " WHEN 0 THEN 'kernel' WHEN 1 THEN 'memcpy'" \
	" WHEN 2 THEN 'memset' END"

/* The gpu view reads its dictionaries in scalar subqueries (keys unique:
 * the same rows as joins), so a statement reading neither name nor worker
 * scans dsight_gpu alone: SELECT device, count(*), sum(duration) FROM gpu
 * GROUP BY device on 10 M rows took 13.4 s through left joins (the plan
 * walked the window index), 4.6 s so. */
static const char views_sql[] =
	"CREATE VIEW gpu AS SELECT g.profile AS profile,"
	" (SELECT p.worker FROM dsight_view_profiles AS p WHERE p.profile ="
	" g.profile) AS worker,"
	" g.ordinal AS ordinal, " KIND_TEXT("g.kind") " AS kind,"
	" g.start AS start, g.\"end\" AS \"end\","
	" g.\"end\" - g.start AS duration, g.device AS device,"
	" g.stream AS stream, (SELECT n.name FROM " STORE_GPU_NAMES " AS n"
	" WHERE n.profile = g.profile AND n.id = g.name) AS name,"
	" (SELECT s.name FROM " STORE_GPU_NAMES " AS s WHERE s.profile ="
	" g.profile AND s.id = g.short_name) AS short_name,"
	" g.correlation AS correlation, g.bytes AS bytes,"
	" g.grid_x AS grid_x, g.grid_y AS grid_y, g.grid_z AS grid_z,"
	" g.block_x AS block_x, g.block_y AS block_y, g.block_z AS block_z,"
	" g.registers AS registers, g.static_smem AS static_smem,"
	" g.dynamic_smem AS dynamic_smem, g.graph_node AS graph_node,"
	" g.launch_tid AS launch_tid, g.launch_start AS launch_start,"
	" (SELECT s.name FROM " STORE_GPU_NAMES " AS s WHERE s.profile ="
	" g.profile AND s.id = g.launch_name) AS launch_name,"
	" g.start - g.launch_start AS queue_delay,"
	" g.nvtx AS nvtx_ordinal,"
	" (SELECT v.name FROM events AS e JOIN dsight_view_names AS v"
	" ON v.profile = e.profile AND v.id = e.name WHERE e.profile ="
	" g.profile AND e.ordinal = g.nvtx) AS nvtx_name,"
	" g.source_row AS source_row"
	" FROM " STORE_GPU_TABLE " AS g;"
	"CREATE VIEW gpu_launches AS SELECT g.profile AS profile,"
	" p.worker AS worker, g.launch_tid AS tid,"
	" g.launch_start AS start, n.name AS name,"
	" g.correlation AS correlation, min(g.nvtx) AS nvtx_ordinal,"
	" count(*) AS gpu_rows, sum(g.kind = 0) AS kernels,"
	" min(g.start) AS gpu_start, max(g.\"end\") AS gpu_end,"
	" min(g.start) - g.launch_start AS queue_delay"
	" FROM " STORE_GPU_TABLE " AS g"
	" LEFT JOIN dsight_view_profiles AS p ON p.profile = g.profile"
	" LEFT JOIN " STORE_GPU_NAMES " AS n ON n.profile = g.profile"
	" AND n.id = g.launch_name"
	" WHERE g.launch_tid IS NOT NULL"
	" GROUP BY g.profile, g.launch_tid, g.launch_start, g.correlation;";

void store_gpu_copy(struct store_gpu_rec *rec, int64_t profile,
                    int64_t ordinal, const struct row_gpu *row,
                    struct buf *text)
{
	rec->profile = profile;
	rec->ordinal = ordinal;
	rec->row = *row;
	rec->tid_off = text->len;
	if (row->launch_tid)
		buf_append(text, row->launch_tid, row->launch_tid_len);
}

int store_gpu_prepare(sqlite3 *db, sqlite3_stmt **st, struct err *e)
{
	if (sqlite3_prepare_v2(db, "INSERT INTO " STORE_GPU_TABLE " VALUES"
	                       " (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,"
	                       "?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,"
	                       "?25,?26)", -1, st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot prepare the GPU rows: %s",
		               sqlite3_errmsg(db));
	return 0;
}

static void bind_index(sqlite3_stmt *st, int k, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, k, v);
	else
		sqlite3_bind_null(st, k);
}

int store_gpu_insert(sqlite3 *db, sqlite3_stmt *st, const char *text,
                     const struct store_gpu_rec *rec, struct err *e)
{
	/* the order of ROW_GPU_* is the order of the table's columns from
	 * device to graph_node */
	const struct row_gpu *r = &rec->row;
	sqlite3_bind_int64(st, 1, rec->profile);
	sqlite3_bind_int64(st, 2, rec->ordinal);
	sqlite3_bind_int(st, 3, r->kind);
	sqlite3_bind_double(st, 4, r->start);
	sqlite3_bind_double(st, 5, r->end);
	for (int i = 0; i < ROW_GPU_NINT; i++) {
		if (r->nulls & (1u << i))
			sqlite3_bind_null(st, 6 + i);
		else
			sqlite3_bind_int64(st, 6 + i, r->v[i]);
	}
	int k = 6 + ROW_GPU_NINT;
	sqlite3_bind_int64(st, k, r->name);
	bind_index(st, k + 1, r->short_name);
	if (r->launch_tid) {
		sqlite3_bind_text(st, k + 2, text + rec->tid_off,
		                  (int)r->launch_tid_len, SQLITE_STATIC);
		sqlite3_bind_double(st, k + 3, r->launch_start);
	} else {
		sqlite3_bind_null(st, k + 2);
		sqlite3_bind_null(st, k + 3);
	}
	bind_index(st, k + 4, r->launch_name);
	bind_index(st, k + 5, r->nvtx);
	sqlite3_bind_int64(st, k + 6, r->source_row);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot write the GPU rows: %s",
		               sqlite3_errmsg(db));
	return 0;
}

int store_gpu_finish(sqlite3 *db, const json_t *catalog, struct err *e)
{
	sqlite3_stmt *st;
	const json_t *profiles = json_object_get(catalog, "profiles");
	size_t p;
	const json_t *pr;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(db, "INSERT INTO " STORE_GPU_NAMES
	                       " VALUES (?1,?2,?3)", -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot write the GPU names: %s",
		               sqlite3_errmsg(db));
	json_array_foreach(profiles, p, pr) {
		const json_t *names = json_object_get(pr, "gpu_names");
		size_t k;
		const json_t *n;
		json_array_foreach(names, k, n) {
			sqlite3_bind_int64(st, 1, (sqlite3_int64)p);
			sqlite3_bind_int64(st, 2, (sqlite3_int64)k);
			sqlite3_bind_text(st, 3, json_string_value(n),
			                  (int)json_string_length(n), SQLITE_STATIC);
			rc = sqlite3_step(st);
			sqlite3_reset(st);
			if (rc != SQLITE_DONE)
				break;
		}
		if (rc != SQLITE_DONE)
			break;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE ||
	    sqlite3_exec(db, views_sql, NULL, NULL, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot write the GPU names and views:"
		               " %s", sqlite3_errmsg(db));
	return 0;
}

/* Binds ?1 profile and, with a window, ?2 its start, ?3 its end and ?4
 * how far before ?2 an overlapping row may start: the profile's longest
 * row with a margin, so that rounding never drops one. */
static void bind_window(sqlite3_stmt *st, int64_t profile,
                        const struct row_window *w, double max_duration)
{
	sqlite3_bind_int64(st, 1, profile);
	if (w) {
		sqlite3_bind_double(st, 2, w->start);
		sqlite3_bind_double(st, 3, w->end);
		sqlite3_bind_double(st, 4, max_duration * (1 + 1e-9) + 1e-9);
	}
}

/* 1 when the cache has the GPU table; 0 when not, or (e set) on an
 * SQLite failure. */
static int gpu_table_exists(sqlite3 *db, struct err *e)
{
	sqlite3_stmt *st;
	int r;

	err_clear(e);
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = '"
	                       STORE_GPU_TABLE "'", -1, &st, NULL) != SQLITE_OK) {
		err_set(e, ERR_DATA, "cannot read the GPU rows: %s",
		        sqlite3_errmsg(db));
		return 0;
	}
	r = sqlite3_step(st);
	sqlite3_finalize(st);
	return r == SQLITE_ROW;
}

int store_gpu_rows(sqlite3 *db, int64_t profile, const struct row_window *w,
                   double max_duration, int with_nvtx_name, store_gpu_fn fn,
                   void *ctx, struct err *e)
{
	char sql[640];
	sqlite3_stmt *st;
	int r, rc = 0;

	if (!gpu_table_exists(db, e))
		return e->code;
	snprintf(sql, sizeof sql, "SELECT ordinal, kind, start, \"end\", device,"
	         " stream, correlation, bytes, grid_x, grid_y, grid_z, block_x,"
	         " block_y, block_z, registers, static_smem, dynamic_smem,"
	         " graph_node, name, short_name, launch_tid, launch_start,"
	         " launch_name, nvtx, source_row, %s FROM " STORE_GPU_TABLE
	         " AS g WHERE profile = ?1%s ORDER BY start, ordinal",
	         with_nvtx_name ? "(SELECT e.name FROM events AS e WHERE"
	                          " e.profile = g.profile AND e.ordinal ="
	                          " g.nvtx)" : "NULL",
	         w ? " AND start <= ?3 AND start >= ?2 - ?4 AND"
	                      " \"end\" >= ?2" : "");
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot read the GPU rows: %s",
		               sqlite3_errmsg(db));
	bind_window(st, profile, w, max_duration);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct row_gpu g;
		memset(&g, 0, sizeof g);
		g.kind = sqlite3_column_int(st, 1);
		if (g.kind < 0 || g.kind > 2) {
			rc = err_set(e, ERR_DATA, "the cache's GPU row %lld of"
			             " profile %lld has an unknown kind %d",
			             (long long)sqlite3_column_int64(st, 0),
			             (long long)profile, g.kind);
			break;
		}
		g.start = sqlite3_column_double(st, 2);
		g.end = sqlite3_column_double(st, 3);
		for (int i = 0; i < ROW_GPU_NINT; i++) {
			if (sqlite3_column_type(st, 4 + i) == SQLITE_NULL)
				g.nulls |= 1u << i;
			else
				g.v[i] = sqlite3_column_int64(st, 4 + i);
		}
		int k = 4 + ROW_GPU_NINT;
		g.name = sqlite3_column_int64(st, k);
		g.short_name = sqlite3_column_type(st, k + 1) == SQLITE_NULL ? -1 :
		               sqlite3_column_int64(st, k + 1);
		if (sqlite3_column_type(st, k + 2) != SQLITE_NULL) {
			g.launch_tid = (const char *)sqlite3_column_text(st, k + 2);
			g.launch_tid_len = (size_t)sqlite3_column_bytes(st, k + 2);
			g.launch_start = sqlite3_column_double(st, k + 3);
		}
		g.launch_name = sqlite3_column_type(st, k + 4) == SQLITE_NULL ? -1 :
		                sqlite3_column_int64(st, k + 4);
		g.nvtx = sqlite3_column_type(st, k + 5) == SQLITE_NULL ? -1 :
		         sqlite3_column_int64(st, k + 5);
		g.source_row = sqlite3_column_int64(st, k + 6);
		int64_t nn = sqlite3_column_type(st, k + 7) == SQLITE_NULL ? -1 :
		             sqlite3_column_int64(st, k + 7);
		if ((rc = fn(ctx, sqlite3_column_int64(st, 0), &g, nn)) != 0)
			break;
	}
	if (!rc && r != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "cannot read the GPU rows: %s",
		             sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}

int store_gpu_count(sqlite3 *db, int64_t profile, const struct row_window *w,
                    double max_duration, int64_t *out, struct err *e)
{
	sqlite3_stmt *st;
	int r;

	*out = 0;
	if (!gpu_table_exists(db, e))
		return e->code;
	if (sqlite3_prepare_v2(db, w
	        ? "SELECT (SELECT count(*) FROM " STORE_GPU_TABLE " WHERE"
	          " profile = ?1 AND start >= ?2 AND start <= ?3) + (SELECT"
	          " count(*) FROM " STORE_GPU_TABLE " WHERE profile = ?1 AND"
	          " start >= ?2 - ?4 AND start < ?2 AND \"end\" >= ?2)"
	        : "SELECT count(*) FROM " STORE_GPU_TABLE " WHERE profile = ?1",
	        -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot count the GPU rows: %s",
		               sqlite3_errmsg(db));
	bind_window(st, profile, w, max_duration);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW)
		return err_set(e, ERR_DATA, "cannot count the GPU rows: %s",
		               sqlite3_errmsg(db));
	return 0;
}

int store_gpu_projected(sqlite3 *db, int64_t profile, const char *tid,
                        size_t tid_len, double start, double end,
                        struct store_gpu_span *out, struct err *e)
{
	sqlite3_stmt *st;
	int r;
	double cs = 0, ce = 0;

	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(db, "SELECT start, \"end\" FROM " STORE_GPU_TABLE
	                       " WHERE profile = ?1 AND launch_tid = ?2 AND"
	                       " launch_tid IS NOT NULL AND launch_start"
	                       " BETWEEN ?3 AND ?4 AND kind = 0 ORDER BY start",
	                       -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot read the GPU rows: %s",
		               sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, profile);
	sqlite3_bind_text(st, 2, tid, (int)tid_len, SQLITE_STATIC);
	sqlite3_bind_double(st, 3, start);
	sqlite3_bind_double(st, 4, end);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		double s = sqlite3_column_double(st, 0);
		double en = sqlite3_column_double(st, 1);
		if (!out->count) {
			out->start = s;
			out->end = en;
			cs = s;
			ce = en;
		} else if (s > ce) {
			out->busy += ce - cs;
			cs = s;
			ce = en;
		} else if (en > ce) {
			ce = en;
		}
		if (en > out->end)
			out->end = en;
		out->count++;
	}
	if (out->count)
		out->busy += ce - cs;
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot read the GPU rows: %s",
		               sqlite3_errmsg(db));
	return 0;
}

struct name_call {
	store_gpu_sum_fn fn;
	void *ctx;
};

static int name_row(void *call, sqlite3_stmt *st, const double *parts,
                    size_t nparts)
{
	struct name_call *c = call;
	return c->fn(c->ctx, sqlite3_column_int64(st, 0),
	             sqlite3_column_int64(st, 1), parts, nparts,
	             sqlite3_column_double(st, 3));
}

int store_gpu_sum_names(sqlite3 *db, int64_t profile, double duration,
                        int *have, store_gpu_sum_fn fn, void *ctx,
                        struct err *e)
{
	sqlite3_stmt *st;
	struct name_call call = {fn, ctx};

	*have = 0;
	if (sqlite3_prepare_v2(db, "SELECT name, count, duration, max, run FROM "
	                       STORE_GPU_SUM_NAMES " WHERE profile = ?1", -1,
	                       &st, NULL) != SQLITE_OK)
		return 0; /* a cache without the summary */
	sqlite3_bind_int64(st, 1, profile);
	const struct store_sumio_read rd = {2, 4, duration, name_row, &call};
	return store_sumio_read(db, st, &rd, have, e);
}

/* The per-second bins of one (profile, device) being built. */
struct bin_lane {
	int64_t profile, device;
	int64_t *kernels;
	struct qsum *busy;
	size_t cap;
	int open;
	double cs, ce;
};

static int lane_grow(struct bin_lane *l, int64_t bin)
{
	size_t need = (size_t)bin + 1, c1 = l->cap, c2 = l->cap;
	if (need <= l->cap)
		return 0;
	if (vec_reserve_zero(&l->kernels, &c1, need, sizeof *l->kernels) ||
	    vec_reserve_zero(&l->busy, &c2, need, sizeof *l->busy))
		return -1;
	l->cap = c1 < c2 ? c1 : c2;
	return 0;
}

/* Adds [a, z] (a piece of the union, or a kernel when count) to the bins
 * it overlaps (j <= z and j + 1 >= a, inside [0, duration]). */
static int lane_add(struct bin_lane *l, double a, double z, double duration,
                    int count)
{
	if (z < 0 || a > duration)
		return 0;
	int64_t j = a > 1 ? (int64_t)a - 1 : 0;
	while ((double)(j + 1) < a)
		j++;
	for (; (double)j <= z && (double)j <= duration; j++) {
		if (lane_grow(l, j))
			return -1;
		if (count) {
			l->kernels[j]++;
		} else {
			double lo = a > (double)j ? a : (double)j;
			double hi = z < (double)(j + 1) ? z : (double)(j + 1);
			qsum_add(&l->busy[j], hi - lo);
		}
	}
	return 0;
}

static int lane_flush(struct bin_lane *l, double duration)
{
	if (!l->open)
		return 0;
	l->open = 0;
	return lane_add(l, l->cs, l->ce, duration, 0);
}

static int write_bins(sqlite3 *db, struct bin_lane *v, size_t n,
                      double duration, struct err *e)
{
	sqlite3_stmt *st;
	unsigned char *blob = NULL;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO " STORE_GPU_SUM_BINS " VALUES"
	                       " (?1,?2,?3,?4,?5,?6)", -1, &st, NULL) !=
	    SQLITE_OK)
		return store_sumio_fail(db, e);
	for (size_t k = 0; k < n && !rc; k++)
		for (size_t j = 0; j < v[k].cap && !rc; j++) {
			if (!v[k].kernels[j])
				continue;
			if (qsum_failed(&v[k].busy[j]) ||
			    store_sumio_bind_parts(st, 5, &v[k].busy[j], &blob,
			                           &cap)) {
				rc = err_set(e, ERR_NOMEM, "out of memory");
				break;
			}
			sqlite3_bind_int64(st, 1, v[k].profile);
			sqlite3_bind_int64(st, 2, v[k].device);
			sqlite3_bind_int64(st, 3, (int64_t)j);
			sqlite3_bind_int64(st, 4, v[k].kernels[j]);
			sqlite3_bind_double(st, 6, duration);
			rc = store_sumio_step(db, st, e);
		}
	sqlite3_finalize(st);
	free(blob);
	return rc;
}

int store_gpu_summarize_bins(sqlite3 *db, double duration, struct err *e)
{
	sqlite3_stmt *st;
	struct bin_lane *v = NULL;
	size_t n = 0, cap = 0;
	int r, rc = 0;

	if (sqlite3_exec(db, "CREATE TABLE " STORE_GPU_SUM_BINS " (profile"
	                 " INTEGER, device INTEGER, bin INTEGER, kernels INTEGER,"
	                 " busy BLOB, run REAL, PRIMARY KEY (profile, device,"
	                 " bin)) WITHOUT ROWID", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT profile, device, start, \"end\" FROM "
	                       STORE_GPU_TABLE " WHERE kind = 0 AND device IS NOT"
	                       " NULL ORDER BY profile, ordinal", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t p = sqlite3_column_int64(st, 0);
		int64_t d = sqlite3_column_int64(st, 1);
		double s = sqlite3_column_double(st, 2);
		double en = sqlite3_column_double(st, 3);
		struct bin_lane *l = NULL;
		for (size_t k = n; k > 0 && !l; k--)
			if (v[k - 1].profile == p && v[k - 1].device == d)
				l = &v[k - 1];
		if (!l) {
			if (vec_reserve_zero(&v, &cap, n + 1, sizeof *v)) {
				rc = err_set(e, ERR_NOMEM, "out of memory");
				break;
			}
			l = &v[n++];
			l->profile = p;
			l->device = d;
		}
		if (lane_add(l, s, en, duration, 1)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		if (l->open && s <= l->ce) {
			if (en > l->ce)
				l->ce = en;
			continue;
		}
		if (lane_flush(l, duration)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		l->open = 1;
		l->cs = s;
		l->ce = en;
	}
	if (!rc && r != SQLITE_DONE)
		rc = store_sumio_fail(db, e);
	sqlite3_finalize(st);
	for (size_t k = 0; k < n && !rc; k++)
		if (lane_flush(&v[k], duration))
			rc = err_set(e, ERR_NOMEM, "out of memory");
	if (!rc)
		rc = write_bins(db, v, n, duration, e);
	for (size_t k = 0; k < n; k++) {
		for (size_t j = 0; j < v[k].cap; j++)
			qsum_free(&v[k].busy[j]);
		free(v[k].busy);
		free(v[k].kernels);
	}
	free(v);
	return rc;
}

struct bin_call {
	store_gpu_bin_fn fn;
	void *ctx;
};

static int bin_row(void *call, sqlite3_stmt *st, const double *parts,
                   size_t nparts)
{
	struct bin_call *c = call;
	return c->fn(c->ctx, sqlite3_column_int64(st, 0),
	             sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
	             parts, nparts);
}

int store_gpu_sum_bins(sqlite3 *db, int64_t profile, double duration,
                       int64_t below, int *have, store_gpu_bin_fn fn,
                       void *ctx, struct err *e)
{
	sqlite3_stmt *st;
	struct bin_call call = {fn, ctx};

	*have = 0;
	if (sqlite3_prepare_v2(db, "SELECT device, bin, kernels, busy, run FROM "
	                       STORE_GPU_SUM_BINS " WHERE profile = ?1 AND bin <"
	                       " ?2 ORDER BY device, bin", -1, &st, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, profile);
	sqlite3_bind_int64(st, 2, below);
	const struct store_sumio_read rd = {3, 4, duration, bin_row, &call};
	return store_sumio_read(db, st, &rd, have, e);
}
