/* seriessum: the metric summaries of the viewer (see seriessum.h). */
#include "report/seriessum.h"
#include "base/buf.h"
#include "base/cancel.h"
#include "base/jsonout.h"
#include "base/vec.h"
#include "store/store_typed.h"
#include "store/store_late.h"

#include <math.h>
#include <pthread.h>
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
	int64_t *group;        /* per series: its fine group, -1 when none */
	size_t n, ngroups;
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

/* Adds a point at time t (in [0, d]) to one of nbins bins; v is NULL
 * for a value that is not a finite number. */
static void bin_add(struct bin *bins, size_t nbins, double d, double t,
                    const double *v)
{
	double x = floor(t * (double)nbins / d);
	struct bin *b = &bins[x > (double)(nbins - 1) ? nbins - 1 : (size_t)x];

	b->rows++;
	if (!v)
		return;
	if (!b->count || *v < b->min) b->min = *v;
	if (!b->count || *v > b->max) b->max = *v;
	b->count++;
	b->sum += *v;
	b->last = *v;
}

/* Bins one series' points into SERIESSUM_BINS bins and, when fine is not
 * NULL, into SERIESSUM_FINE_BINS bins too, in one read (bins zeroed by
 * the caller). */
static int bin_series(sqlite3_stmt *st, size_t id, double d, struct bin *bins,
                      struct bin *fine, struct err *e)
{
	int rc;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		double t = sqlite3_column_double(st, 0), v = 0;
		int ty = sqlite3_column_type(st, 1), number = 0;
		if (!(t >= 0 && t <= d))
			continue;
		if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT) {
			v = sqlite3_column_double(st, 1);
			number = isfinite(v);
		}
		bin_add(bins, SERIESSUM_BINS, d, t, number ? &v : NULL);
		if (fine)
			bin_add(fine, SERIESSUM_FINE_BINS, d, t, number ? &v : NULL);
	}
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "Cannot read points for metric summaries: %s",
		               sqlite3_errmsg(sqlite3_db_handle(st)));
	return 0;
}

/* One row: [series, bin, points, numeric, min, max, mean, last]. */
static void format_row(struct buf *row, size_t id, size_t bin, const struct bin *b)
{
	buf_reset(row);
	buf_putc(row, '[');
	jsonout_int(row, (int64_t)id);
	buf_putc(row, ',');
	jsonout_int(row, (int64_t)bin);
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
}

static int emit(struct shard_writer *w, struct buf *row, size_t id, double d,
                const struct bin *bins, uint64_t *nrows, struct err *e)
{
	double width = d / SERIESSUM_BINS;
	for (size_t i = 0; i < SERIESSUM_BINS; i++) {
		const struct bin *b = &bins[i];
		if (!b->rows)
			continue;
		format_row(row, id, i, b);
		if (shard_writer_add_text(w, SHARD_SERIESSUM, 0, (double)i * width,
		                          (double)(i + 1) * width, row->data, row->len, e))
			return e->code;
		(*nrows)++;
	}
	return 0;
}

/* Bins kept for a read-ahead scan: the non-empty ones of each series. */
struct kept {
	size_t bin;
	struct bin b;
};

struct seriessum_scan {
	struct seriessum *s;
	struct order *ord; /* the summarised series, in row order */
	size_t k;
	size_t ahead;      /* ord[0, ahead) are binned in kept */
	struct kept *kept; /* their non-empty bins, series after series */
	size_t *nkept;     /* per series of ord[0, ahead): its bins in kept */
	size_t nk, capk;
	struct bin *bins;  /* SERIESSUM_BINS of scratch */
	sqlite3 *db;
	sqlite3_stmt *st;
	/* the fine level binned by the reading thread (seriessum_scan_fine)
	 * and handed over one group at a time; all under mu */
	int fine_ahead;    /* seriessum_scan_fine bins it */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct fine *held; /* a binned group, sorted, waiting for the writer */
	size_t nheld;
	int64_t gheld;     /* its group; -1: none waiting */
	int fine_done;     /* seriessum_scan_fine returned */
	int fine_rc;       /* its error (fine_err), handed over last */
	struct err fine_err;
	int stop;          /* the writer gave up: stop binning */
};

void seriessum_scan_free(struct seriessum_scan *sc)
{
	if (!sc)
		return;
	pthread_mutex_destroy(&sc->mu);
	pthread_cond_destroy(&sc->cv);
	free(sc->held);
	sqlite3_finalize(sc->st);
	sqlite3_close(sc->db);
	seriessum_free(sc->s);
	free(sc->ord);
	free(sc->kept);
	free(sc->nkept);
	free(sc->bins);
	free(sc);
}

/* Keeps the non-empty bins of series ord[sc->ahead]; 1 when over the
 * read-ahead bound (nothing kept), -1 out of memory. */
static int keep_bins(struct seriessum_scan *sc)
{
	size_t n = 0;
	for (size_t i = 0; i < SERIESSUM_BINS; i++)
		n += sc->bins[i].rows > 0;
	if ((sc->nk + n) * sizeof *sc->kept > SERIESSUM_AHEAD_BYTES)
		return 1;
	if (n && vec_reserve(&sc->kept, &sc->capk, sc->nk + n, sizeof *sc->kept))
		return -1;
	for (size_t i = 0; i < SERIESSUM_BINS; i++)
		if (sc->bins[i].rows) {
			sc->kept[sc->nk].bin = i;
			sc->kept[sc->nk++].b = sc->bins[i];
		}
	sc->nkept[sc->ahead++] = n;
	return 0;
}

int seriessum_scan_new(struct seriessum_scan **out, const char *sqlite_path,
                       const json_t *catalog, const cancel_flag *cancel,
                       int fine_ahead, struct err *e)
{
	const json_t *metrics = json_object_get(catalog, "metrics");
	double d = json_number_value(json_object_get(json_object_get(catalog, "meta"), "duration"));
	struct seriessum_scan *sc = calloc(1, sizeof *sc);
	struct seriessum *s = calloc(1, sizeof *s);
	size_t n = json_array_size(metrics), k = 0;
	int rc = 0;

	*out = NULL;
	if (sc) {
		sc->s = s;
		pthread_mutex_init(&sc->mu, NULL);
		pthread_cond_init(&sc->cv, NULL);
		sc->gheld = -1;
		err_clear(&sc->fine_err);
		/* set before any return: a scan with nothing to bin is still
		 * handed over by a seriessum_scan_fine that finish waits for */
		sc->fine_ahead = fine_ahead;
	}
	if (!sc || !s || !(s->first = calloc(n ? n : 1, sizeof *s->first)) ||
	    !(s->end = calloc(n ? n : 1, sizeof *s->end)) ||
	    !(s->group = malloc((n ? n : 1) * sizeof *s->group)) ||
	    !(sc->ord = calloc(n ? n : 1, sizeof *sc->ord)) ||
	    !(sc->nkept = calloc(n ? n : 1, sizeof *sc->nkept)) ||
	    !(sc->bins = calloc(SERIESSUM_BINS, sizeof *sc->bins))) {
		if (!sc)
			free(s);
		seriessum_scan_free(sc);
		return err_set(e, ERR_NOMEM, "Out of memory for metric summaries");
	}
	for (size_t i = 0; i < n; i++)
		s->group[i] = -1;
	s->n = n;
	s->duration = d;
	*out = sc;
	if (!(d > 0) || !isfinite(d) || n == 0)
		return 0; /* nothing to bin */
	for (size_t i = 0; i < n; i++) {
		const json_t *m = json_array_get(metrics, i);
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *tmp = json_string_value(json_object_get(m, "temporal"));
		if (!name || (tmp && !strcmp(tmp, "setting")))
			continue; /* settings are drawn as steps from their points */
		sc->ord[k].name = name;
		sc->ord[k++].id = i;
	}
	sc->k = k;
	qsort(sc->ord, k, sizeof *sc->ord, cmp_order);
	/* the typed values (what json_extract reads from the payloads, by
	 * construction) in the same order; a cache without them: the
	 * payloads */
	if (store_late_open_reader(sqlite_path, &sc->db) != SQLITE_OK ||
	    (sqlite3_prepare_v2(sc->db, "SELECT time, value FROM " STORE_TYPED_POINTS
	                        " WHERE series = ? ORDER BY ordinal", -1, &sc->st, NULL) != SQLITE_OK &&
	     sqlite3_prepare_v2(sc->db, "SELECT time, json_extract(payload, '$[1]') FROM points"
	                        " WHERE series = ? ORDER BY ordinal", -1, &sc->st, NULL) != SQLITE_OK)) {
		rc = err_set(e, ERR_DATA, "Cannot read points for metric summaries: %s",
		             sc->db ? sqlite3_errmsg(sc->db) : "out of memory");
		goto fail;
	}
	cancel_sqlite(sc->db, cancel);
	return 0;
fail:
	seriessum_scan_free(sc);
	*out = NULL;
	return rc;
}

/* ---- the fine level ---------------------------------------------------- */

/* One non-empty fine bin of one series. */
struct fine {
	uint32_t bin;
	uint32_t series;
	struct bin b;
};

static int cmp_fine(const void *pa, const void *pb)
{
	const struct fine *a = pa, *b = pb;
	if (a->bin != b->bin)
		return (a->bin > b->bin) - (a->bin < b->bin);
	return (a->series > b->series) - (a->series < b->series);
}

/* Writes group g's kept bins f (sorted by bin, then series) as stream
 * 1 + g of SHARD_SERIESSUM. */
static int fine_emit(struct shard_writer *w, struct buf *row,
                     const struct fine *f, size_t nf, double d, int64_t g,
                     struct err *e)
{
	double width = d / SERIESSUM_FINE_BINS;
	for (size_t i = 0; i < nf; i++) {
		const struct bin *b = &f[i].b;
		format_row(row, f[i].series, f[i].bin, b);
		if (shard_writer_add_text(w, SHARD_SERIESSUM, 1 + g, (double)f[i].bin * width,
		                          (double)(f[i].bin + 1) * width, row->data, row->len, e))
			return e->code;
	}
	return 0;
}

/* What fine_groups hands each group to: fn(ctx, &f, &capf, nf, g, e),
 * which may take the array (setting *f to NULL and *capf to 0). */
struct group_out {
	int (*fn)(void *ctx, struct fine **f, size_t *capf, size_t nf, int64_t g,
	          struct err *e);
	void *ctx;
};

/* Bins every summarised series at SERIESSUM_FINE_BINS and hands over the
 * groups, each sorted by bin then series: consecutive series of one
 * family, closed when the family changes or the kept bins pass
 * SERIESSUM_FINE_GROUP.  Sets sc's series' groups and ngroups.  The same
 * read bins the coarse level, kept (keep_bins) while it fits. */
static int fine_groups(struct seriessum_scan *sc, const struct group_out *out,
                       struct err *e)
{
	struct seriessum *s = sc->s;
	double d = s->duration;
	struct bin *bins = calloc(SERIESSUM_FINE_BINS, sizeof *bins);
	struct fine *f = NULL;
	size_t nf = 0, capf = 0;
	int64_t g = 0;
	int rc = 0;

	if (!bins)
		return err_set(e, ERR_NOMEM, "Out of memory for metric summaries");
	for (size_t i = 0; i < sc->k && !rc; i++) {
		memset(bins, 0, SERIESSUM_FINE_BINS * sizeof *bins);
		memset(sc->bins, 0, SERIESSUM_BINS * sizeof *sc->bins);
		if ((rc = bin_series(sc->st, sc->ord[i].id, d, sc->bins, bins, e)))
			break;
		/* the coarse bins of ord[0, ahead) are kept; past the bound
		 * ahead stops, and seriessum_scan_finish reads the rest again */
		if (sc->ahead == i && keep_bins(sc) < 0) {
			rc = err_set(e, ERR_NOMEM, "Out of memory for metric summaries");
			break;
		}
		size_t before = nf;
		for (size_t j = 0; j < SERIESSUM_FINE_BINS; j++) {
			if (!bins[j].rows)
				continue;
			if (vec_reserve(&f, &capf, nf + 1, sizeof *f)) {
				rc = err_set(e, ERR_NOMEM, "Out of memory for metric summaries");
				break;
			}
			f[nf].bin = (uint32_t)j;
			f[nf].series = (uint32_t)sc->ord[i].id;
			f[nf++].b = bins[j];
		}
		if (nf > before)
			s->group[sc->ord[i].id] = g;
		if (!rc && nf && (i + 1 == sc->k || nf >= SERIESSUM_FINE_GROUP ||
		                  strcmp(sc->ord[i].name, sc->ord[i + 1].name))) {
			qsort(f, nf, sizeof *f, cmp_fine);
			rc = out->fn(out->ctx, &f, &capf, nf, g++, e);
			nf = 0;
		}
	}
	s->ngroups = (size_t)g;
	free(f);
	free(bins);
	return rc;
}

/* fine_groups' output on the writer's thread: the rows into w. */
struct direct {
	struct shard_writer *w;
	struct buf *row;
	double d;
};

static int emit_group(void *ctx, struct fine **f, size_t *capf, size_t nf,
                      int64_t g, struct err *e)
{
	struct direct *o = ctx;

	(void)capf;
	return fine_emit(o->w, o->row, *f, nf, o->d, g, e);
}

/* fine_groups' output on the reading thread: the group waits in sc until
 * the writer takes it, and the next is binned only then, while the writer
 * writes this one (so at most two groups' bins are in memory, and one
 * while the writer is busy elsewhere); ERR_DATA when the writer gave
 * up. */
static int hand_over(void *ctx, struct fine **f, size_t *capf, size_t nf,
                     int64_t g, struct err *e)
{
	struct seriessum_scan *sc = ctx;
	int rc = 0;

	/* the slot is empty: the last call returned only once it was */
	pthread_mutex_lock(&sc->mu);
	if (!sc->stop) {
		sc->held = *f;
		sc->nheld = nf;
		sc->gheld = g;
		*f = NULL;
		*capf = 0;
		pthread_cond_broadcast(&sc->cv);
		while (sc->gheld >= 0 && !sc->stop)
			pthread_cond_wait(&sc->cv, &sc->mu);
	}
	if (sc->stop)
		rc = err_set(e, ERR_DATA, "metric summaries stopped");
	pthread_mutex_unlock(&sc->mu);
	return rc;
}

void seriessum_scan_fine(struct seriessum_scan *sc)
{
	const struct group_out out = {hand_over, sc};
	struct err e;
	int rc;

	if (!sc || !sc->fine_ahead)
		return;
	err_clear(&e);
	rc = fine_groups(sc, &out, &e);
	pthread_mutex_lock(&sc->mu);
	sc->fine_rc = rc;
	sc->fine_err = e;
	sc->fine_done = 1;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
}

void seriessum_scan_stop(struct seriessum_scan *sc)
{
	if (!sc)
		return;
	pthread_mutex_lock(&sc->mu);
	sc->stop = 1;
	pthread_cond_broadcast(&sc->cv);
	pthread_mutex_unlock(&sc->mu);
}

/* Stops seriessum_scan_fine, if it runs, and waits until it returned. */
static void fine_stop(struct seriessum_scan *sc)
{
	if (!sc->fine_ahead)
		return;
	seriessum_scan_stop(sc);
	pthread_mutex_lock(&sc->mu);
	while (!sc->fine_done)
		pthread_cond_wait(&sc->cv, &sc->mu);
	pthread_mutex_unlock(&sc->mu);
}

/* Writes the groups seriessum_scan_fine hands over, in order, until it
 * has returned; then its result. */
static int fine_take(struct seriessum_scan *sc, struct shard_writer *w,
                     struct buf *row, struct err *e)
{
	int rc = 0;

	for (;;) {
		pthread_mutex_lock(&sc->mu);
		while (sc->gheld < 0 && !sc->fine_done)
			pthread_cond_wait(&sc->cv, &sc->mu);
		if (sc->gheld < 0) { /* done, nothing waiting */
			rc = sc->fine_rc;
			if (rc)
				*e = sc->fine_err;
			pthread_mutex_unlock(&sc->mu);
			return rc;
		}
		struct fine *f = sc->held;
		size_t nf = sc->nheld;
		int64_t g = sc->gheld;
		sc->held = NULL;
		sc->gheld = -1;
		pthread_cond_broadcast(&sc->cv);
		pthread_mutex_unlock(&sc->mu);
		rc = fine_emit(w, row, f, nf, sc->s->duration, g, e);
		free(f);
		if (rc)
			return rc;
	}
}

int seriessum_scan_finish(struct seriessum **out, struct seriessum_scan *sc,
                          struct shard_writer *w, struct err *e)
{
	struct seriessum *s = sc->s;
	double d = s->duration;
	struct buf row;
	uint64_t nrows = 0;
	size_t from = 0;
	int rc = 0;

	*out = NULL;
	buf_init(&row, 0);
	/* the fine level first: its read bins the coarse level too (a stream
	 * is written in one run, so which comes first changes no shard) */
	if (sc->fine_ahead) {
		rc = fine_take(sc, w, &row, e);
	} else {
		struct direct o = {w, &row, d};
		const struct group_out to = {emit_group, &o};
		rc = fine_groups(sc, &to, e);
	}
	for (size_t i = 0; i < sc->k && !rc; i++) {
		memset(sc->bins, 0, SERIESSUM_BINS * sizeof *sc->bins);
		if (i < sc->ahead) {
			for (size_t j = from; j < from + sc->nkept[i]; j++)
				sc->bins[sc->kept[j].bin] = sc->kept[j].b;
			from += sc->nkept[i];
		} else if ((rc = bin_series(sc->st, sc->ord[i].id, d, sc->bins, NULL, e))) {
			break;
		}
		s->first[sc->ord[i].id] = nrows;
		rc = emit(w, &row, sc->ord[i].id, d, sc->bins, &nrows, e);
		s->end[sc->ord[i].id] = nrows;
	}
	buf_free(&row);
	if (rc) {
		fine_stop(sc);
		seriessum_scan_free(sc);
		return rc;
	}
	s->any = nrows > 0;
	sc->s = NULL;
	seriessum_scan_free(sc);
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
		if (s->group[i] >= 0)
			json_object_set_new(json_array_get(metrics, i), "fine_group",
			                    json_integer((json_int_t)s->group[i]));
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
	if (s->ngroups) {
		json_t *fine = json_object(), *groups = json_array();
		for (size_t g = 0; g < s->ngroups; g++)
			json_array_append_new(groups, shard_writer_descs_json(w, SHARD_SERIESSUM, (int64_t)(1 + g)));
		json_object_set_new(fine, "bins", json_integer(SERIESSUM_FINE_BINS));
		json_object_set_new(fine, "width", json_real(s->duration / SERIESSUM_FINE_BINS));
		json_object_set_new(fine, "groups", groups);
		json_object_set_new(o, "fine", fine);
	}
	return json_object_set_new(core, "metric_summary", o) ? ERR_NOMEM : 0;
}

void seriessum_free(struct seriessum *s)
{
	if (!s)
		return;
	free(s->first);
	free(s->end);
	free(s->group);
	free(s);
}
