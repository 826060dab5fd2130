/* rowscan: the staged store's detail rows as shard text (see rowscan.h). */
#include "report/rowscan.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "store/store_gpu.h"

/* The GPU rows of one profile, handed to a rowscan_fn as shard text. */
struct gpu_scan {
	rowscan_fn f;
	void *ctx;
	int64_t profile;
	struct buf text;
	struct err *e;
};

static int gpu_row(void *ctx, int64_t ordinal, const struct row_gpu *row,
                   int64_t nvtx_name)
{
	struct gpu_scan *g = ctx;
	(void)ordinal;
	shard_gpu_text(&g->text, row);
	/* a part holds its slice's ranges only: the projected range's name
	 * index follows the row's fields */
	g->text.len--; /* the closing ']' */
	buf_putc(&g->text, ',');
	if (row->nvtx >= 0 && nvtx_name >= 0)
		jsonout_int(&g->text, nvtx_name);
	else
		buf_puts(&g->text, "null");
	buf_putc(&g->text, ']');
	if (g->text.failed)
		return err_set(g->e, ERR_NOMEM, "Out of memory reading rows");
	return g->f(g->ctx, SHARD_GPU, g->profile, row->start, row->end,
	            (const char *)g->text.data, g->text.len, g->e);
}

static int scan_gpu(sqlite3 *db, const json_t *catalog, rowscan_fn f, void *ctx,
                    struct err *e)
{
	struct gpu_scan g = {f, ctx, 0, {0}, e};
	size_t i;
	json_t *v;
	int rc = 0;
	buf_init(&g.text, 0);
	json_array_foreach(json_object_get(catalog, "profiles"), i, v) {
		if (!json_is_object(json_object_get(v, "gpu")))
			continue;
		g.profile = (int64_t)i;
		if ((rc = store_gpu_rows(db, g.profile, NULL, 0, 1, gpu_row, &g, e)))
			break;
	}
	buf_free(&g.text);
	return rc;
}

int rowscan_all(sqlite3 *db, const json_t *catalog, rowscan_fn f, void *ctx,
                struct err *e)
{
	static const char *const sql[3] = {
		("SELECT profile, start, end, name, tid, source_row FROM events"
		 " ORDER BY profile, ordinal"),
		"SELECT profile, time, payload FROM samples ORDER BY profile, ordinal",
		"SELECT series, time, payload FROM points ORDER BY series, ordinal"};
	struct buf t;
	int rc = 0;

	buf_init(&t, 0);
	for (int k = 0; k < 3 && !rc; k++) {
		sqlite3_stmt *st = NULL;
		int s;
		if (sqlite3_prepare_v2(db, sql[k], -1, &st, NULL) != SQLITE_OK) {
			rc = err_set(e, ERR_DATA, "Cannot read the staged rows: %s",
			             sqlite3_errmsg(db));
			break;
		}
		while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t idx = sqlite3_column_int64(st, 0);
			double t0 = sqlite3_column_double(st, 1), t1 = t0;
			buf_reset(&t);
			if (k == 0) {
				t1 = sqlite3_column_double(st, 2);
				buf_putc(&t, '[');
				jsonout_real(&t, t0);
				buf_putc(&t, ',');
				jsonout_real(&t, t1);
				buf_putc(&t, ',');
				jsonout_int(&t, sqlite3_column_int64(st, 3));
				buf_putc(&t, ',');
				jsonout_str(&t, (const char *)sqlite3_column_text(st, 4),
				            (size_t)sqlite3_column_bytes(st, 4));
				buf_putc(&t, ',');
				jsonout_int(&t, sqlite3_column_int64(st, 5));
				buf_putc(&t, ']');
			} else {
				buf_append(&t, sqlite3_column_text(st, 2),
				           (size_t)sqlite3_column_bytes(st, 2));
			}
			if (t.failed)
				rc = err_set(e, ERR_NOMEM, "Out of memory reading rows");
			else
				rc = f(ctx, (enum shard_kind)k, idx, t0, t1,
				       (const char *)t.data, t.len, e);
		}
		if (!rc && s != SQLITE_DONE)
			rc = err_set(e, ERR_DATA, "Cannot read the staged rows: %s",
			             sqlite3_errmsg(db));
		sqlite3_finalize(st);
	}
	buf_free(&t);
	return rc ? rc : scan_gpu(db, catalog, f, ctx, e);
}

