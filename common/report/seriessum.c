/* seriessum: whole-run metric summaries of the viewer (see seriessum.h). */
#include "report/seriessum.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bin {
	uint64_t rows, count;
	double min, max, sum, last;
};

struct seriessum {
	uint64_t *first, *end; /* per series: its rows [first, end) in the stream */
	size_t n;
	double duration;
	int any;
};

struct order {
	const char *name;
	size_t id;
};

static int cmp_order(const void *pa, const void *pb)
{
	const struct order *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->id > b->id) - (a->id < b->id);
}

/* Bins one series' points (bins zeroed by the caller). */
static int bin_series(sqlite3_stmt *st, size_t id, double d, struct bin *bins,
                      struct err *e)
{
	int rc;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double t = sqlite3_column_double(st, 0), x = floor(t * SERIESSUM_BINS / d);
		int ty = sqlite3_column_type(st, 1);
		struct bin *b;
		if (!(t >= 0 && t <= d))
			continue;
		b = &bins[x > SERIESSUM_BINS - 1 ? SERIESSUM_BINS - 1 : (size_t)x];
		b->rows++;
		if (ty != SQLITE_INTEGER && ty != SQLITE_FLOAT)
			continue;
		double v = sqlite3_column_double(st, 1);
		if (!isfinite(v))
			continue;
		if (!b->count || v < b->min) b->min = v;
		if (!b->count || v > b->max) b->max = v;
		b->count++;
		b->sum += v;
		b->last = v;
	}
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "Cannot read points for metric summaries: %s",
		               sqlite3_errmsg(sqlite3_db_handle(st)));
	return 0;
}

static int emit(struct shard_writer *w, struct buf *row, size_t id, double d,
                const struct bin *bins, uint64_t *nrows, struct err *e)
{
	double width = d / SERIESSUM_BINS;
	for (size_t i = 0; i < SERIESSUM_BINS; i++) {
		const struct bin *b = &bins[i];
		if (!b->rows)
			continue;
		buf_reset(row);
		buf_putc(row, '[');
		jsonout_int(row, (int64_t)id);
		buf_putc(row, ',');
		jsonout_int(row, (int64_t)i);
		buf_putc(row, ',');
		jsonout_int(row, (int64_t)b->rows);
		buf_putc(row, ',');
		jsonout_int(row, (int64_t)b->count);
		if (b->count) {
			double mean = b->sum / (double)b->count;
			buf_putc(row, ',');
			jsonout_real(row, b->min);
			buf_putc(row, ',');
			jsonout_real(row, b->max);
			buf_putc(row, ',');
			jsonout_real(row, isfinite(mean) ? mean : b->last);
			buf_putc(row, ',');
			jsonout_real(row, b->last);
		}
		buf_putc(row, ']');
		if (shard_writer_add_text(w, SHARD_SERIESSUM, 0, (double)i * width,
		                          (double)(i + 1) * width, row->data, row->len, e))
			return e->code;
		(*nrows)++;
	}
	return 0;
}

int seriessum_build(struct seriessum **out, struct shard_writer *w,
                    const char *sqlite_path, const json_t *catalog,
                    const volatile sig_atomic_t *cancel, struct err *e)
{
	const json_t *metrics = json_object_get(catalog, "metrics");
	double d = json_number_value(json_object_get(json_object_get(catalog, "meta"), "duration"));
	struct seriessum *s = calloc(1, sizeof *s);
	struct order *ord = NULL;
	struct bin *bins = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct buf row;
	uint64_t nrows = 0;
	size_t n = json_array_size(metrics), k = 0;
	int rc = 0;

	*out = NULL;
	buf_init(&row, 0);
	if (!s || !(s->first = calloc(n ? n : 1, sizeof *s->first)) ||
	    !(s->end = calloc(n ? n : 1, sizeof *s->end)) ||
	    !(ord = calloc(n ? n : 1, sizeof *ord)) ||
	    !(bins = calloc(SERIESSUM_BINS, sizeof *bins))) {
		rc = err_set(e, ERR_NOMEM, "Out of memory for metric summaries");
		goto out;
	}
	s->n = n;
	s->duration = d;
	if (!(d > 0) || !isfinite(d) || n == 0)
		goto out; /* nothing to bin */
	for (size_t i = 0; i < n; i++) {
		const json_t *m = json_array_get(metrics, i);
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *tmp = json_string_value(json_object_get(m, "temporal"));
		if (!name || (tmp && !strcmp(tmp, "setting")))
			continue; /* settings are drawn as steps from their points */
		ord[k].name = name;
		ord[k++].id = i;
	}
	qsort(ord, k, sizeof *ord, cmp_order);
	if (sqlite3_open_v2(sqlite_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT time, json_extract(payload, '$[1]') FROM points"
	                       " WHERE series = ? ORDER BY ordinal", -1, &st, NULL) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot read points for metric summaries: %s",
		             db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	cancel_sqlite(db, cancel);
	for (size_t i = 0; i < k && !rc; i++) {
		memset(bins, 0, SERIESSUM_BINS * sizeof *bins);
		s->first[ord[i].id] = nrows;
		if (!(rc = bin_series(st, ord[i].id, d, bins, e)))
			rc = emit(w, &row, ord[i].id, d, bins, &nrows, e);
		s->end[ord[i].id] = nrows;
	}
	s->any = nrows > 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	buf_free(&row);
	free(ord);
	free(bins);
	if (rc) {
		seriessum_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int seriessum_annotate(const struct seriessum *s, const struct shard_writer *w,
                       json_t *core)
{
	const struct shard_desc *const *ds;
	json_t *metrics = json_object_get(core, "metrics"), *o;
	uint64_t *start; /* first row of each chunk */
	size_t nd;

	if (!s || !s->any)
		return 0;
	ds = shard_writer_descs(w, SHARD_SERIESSUM, 0, &nd);
	if (!(start = calloc(nd + 1, sizeof *start)))
		return ERR_NOMEM;
	for (size_t i = 0; i < nd; i++)
		start[i + 1] = start[i] + ds[i]->count;
	for (size_t i = 0; i < s->n && i < json_array_size(metrics); i++) {
		size_t a = 0, b;
		if (s->end[i] == s->first[i])
			continue;
		while (a + 1 < nd && start[a + 1] <= s->first[i])
			a++;
		for (b = a; b + 1 < nd && start[b + 1] < s->end[i]; b++)
			;
		json_object_set_new(json_array_get(metrics, i), "summary_chunks",
		                    json_pack("[II]", (json_int_t)a, (json_int_t)b));
	}
	free(start);
	o = json_object();
	json_object_set_new(o, "bins", json_integer(SERIESSUM_BINS));
	json_object_set_new(o, "width", json_real(s->duration / SERIESSUM_BINS));
	json_object_set_new(o, "chunks", shard_writer_descs_json(w, SHARD_SERIESSUM, 0));
	return json_object_set_new(core, "metric_summary", o) ? ERR_NOMEM : 0;
}

void seriessum_free(struct seriessum *s)
{
	if (!s)
		return;
	free(s->first);
	free(s->end);
	free(s);
}
