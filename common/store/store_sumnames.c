/* store_sumnames: per (profile, name) whole-run summaries (see
 * store_sumnames.h for the layout and why they are exact). */
#include "store/store_sumnames.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/qsum.h"
#include "base/vec.h"
#include "store/store_bincheck.h"
#include "store/store_sumio.h"

/* Name indexes at or beyond this are not summarised (profile scanned). */
#define NAMES_MAX (1 << 20)
struct name_acc {
	int64_t count;
	double max;
	struct qsum dur, clip;
};

/* Bins: at most this many per profile, and this many (bin, name) entries
 * and crossing ranges (the build's extra memory stays bounded). */
#define BINS_MAX (1 << 22)
#define ENTRIES_MAX (1 << 22)

struct bin_ent {
	int64_t name; /* -1: no name */
	int64_t count;
	double max;
	struct qsum dur;
};

struct bin_acc {
	struct bin_ent *e;
	size_t n, cap;
	/* every name together: the contained ranges and their exact
	 * duration sum (dsight_summary_range_bins) */
	int64_t count;
	struct qsum dur;
};

/* The bin widths written, in seconds (integers: i * w is exact). */
#define NWIDTHS 2
static const double bin_widths[NWIDTHS] = {1.0, 10.0};

struct cross_ent {
	int64_t bin, name;
	double a, b;
};

struct prof_acc {
	struct name_acc *names; /* slot 0: no name; slot k + 1: name index k */
	size_t cap;
	double max_start, max_end;
	int bad;
	/* bins, one set per width of bin_widths */
	struct binset {
		struct bin_acc *bins;
		size_t nbins;
		struct cross_ent *x;
		size_t nx, xcap;
	} bs[NWIDTHS];
	size_t entries;
	int bins_bad;
};

struct store_sumnames_acc {
	struct prof_acc *prof;
	size_t cap;
};

struct store_sumnames_acc *store_sumnames_acc_new(void)
{
	return calloc(1, sizeof(struct store_sumnames_acc));
}

static void drop_bins(struct prof_acc *p)
{
	for (int w = 0; w < NWIDTHS; w++) {
		struct binset *s = &p->bs[w];
		for (size_t b = 0; b < s->nbins; b++) {
			for (size_t k = 0; k < s->bins[b].n; k++)
				qsum_free(&s->bins[b].e[k].dur);
			free(s->bins[b].e);
			qsum_free(&s->bins[b].dur);
		}
		free(s->bins);
		free(s->x);
		memset(s, 0, sizeof *s);
	}
	p->entries = 0;
}

/* Files [a, b] (finite, a >= 0) in its start bin of width w; -1 out of
 * memory. */
static int bin_event_w(struct prof_acc *p, int wi, int64_t name, double a,
                       double b)
{
	double w = bin_widths[wi];
	int64_t bin = store_sumio_bin(a, w, BINS_MAX);
	double fl = (double)bin;
	struct bin_acc *ba;
	struct bin_ent *en = NULL;
	struct binset *bs = &p->bs[wi];

	if (bin < 0 || p->entries >= ENTRIES_MAX) {
		drop_bins(p);
		p->bins_bad = 1;
		return 0;
	}
	/* touches an edge of its bin (starts at the bin's start, or ends at or
	 * after its end): listed, so a timeline bucket starting there sees it
	 * (both ends of an overlap are inclusive) */
	if (!(b < (fl + 1) * w) || !(a > fl * w)) {
		if (vec_reserve(&bs->x, &bs->xcap, bs->nx + 1, sizeof *bs->x))
			return -1;
		bs->x[bs->nx++] = (struct cross_ent){bin, name, a, b};
		p->entries++;
		return 0;
	}
	if (vec_reserve_zero(&bs->bins, &bs->nbins, (size_t)bin + 1,
	                     sizeof *bs->bins))
		return -1;
	ba = &bs->bins[bin];
	for (size_t k = ba->n; k-- > 0;)
		if (ba->e[k].name == name) {
			en = &ba->e[k];
			break;
		}
	if (!en) {
		if (vec_reserve(&ba->e, &ba->cap, ba->n + 1, sizeof *ba->e))
			return -1;
		en = &ba->e[ba->n++];
		memset(en, 0, sizeof *en);
		en->name = name;
		p->entries++;
	}
	if (!en->count || b - a > en->max)
		en->max = b - a;
	en->count++;
	qsum_add(&en->dur, b - a);
	ba->count++;
	qsum_add(&ba->dur, b - a);
	return qsum_failed(&en->dur) || qsum_failed(&ba->dur) ? -1 : 0;
}

static int bin_event(struct prof_acc *p, int64_t name, double a, double b)
{
	if (p->bins_bad || a < 0)
		return 0; /* a < 0: the query's left edge scan has it */
	for (int w = 0; w < NWIDTHS && !p->bins_bad; w++)
		if (bin_event_w(p, w, name, a, b))
			return -1;
	return 0;
}

void store_sumnames_acc_free(struct store_sumnames_acc *a)
{
	if (!a)
		return;
	for (size_t p = 0; p < a->cap; p++) {
		for (size_t k = 0; k < a->prof[p].cap; k++) {
			qsum_free(&a->prof[p].names[k].dur);
			qsum_free(&a->prof[p].names[k].clip);
		}
		free(a->prof[p].names);
		drop_bins(&a->prof[p]);
	}
	free(a->prof);
	free(a);
}

int store_sumnames_event(struct store_sumnames_acc *a, int64_t profile,
                         int64_t name, double start, double end,
                         struct err *e)
{
	struct prof_acc *p;
	struct name_acc *n;
	size_t slot = name < 0 ? 0 : (size_t)name + 1;

	if (profile < 0)
		return 0;
	if ((uint64_t)profile >= a->cap) {
		size_t old = a->cap;
		if (vec_reserve_zero(&a->prof, &a->cap, (size_t)profile + 1,
		                     sizeof *a->prof))
			return err_set(e, ERR_NOMEM, "out of memory summarising names");
		for (size_t k = old; k < a->cap; k++)
			a->prof[k].max_start = a->prof[k].max_end = -INFINITY;
	}
	p = &a->prof[profile];
	if (!isfinite(start) || !isfinite(end)) {
		p->bad = p->bins_bad = 1;
		drop_bins(p);
		return 0;
	}
	if (bin_event(p, name < 0 ? -1 : name, start, end))
		return err_set(e, ERR_NOMEM, "out of memory summarising names");
	if (p->bad || !(end >= 0))
		return 0;
	if (name >= NAMES_MAX) {
		p->bad = 1;
		return 0;
	}
	if (start > p->max_start)
		p->max_start = start;
	if (end > p->max_end)
		p->max_end = end;
	if (vec_reserve_zero(&p->names, &p->cap, slot + 1, sizeof *p->names))
		return err_set(e, ERR_NOMEM, "out of memory summarising names");
	n = &p->names[slot];
	double d = end - start;
	if (!n->count || d > n->max)
		n->max = d;
	n->count++;
	qsum_add(&n->dur, d);
	qsum_add(&n->clip, end - (start > 0 ? start : 0));
	if (qsum_failed(&n->dur) || qsum_failed(&n->clip))
		return err_set(e, ERR_NOMEM, "out of memory summarising names");
	return 0;
}

/* ---- writing ---- */

static const char schema_sql[] =
	"CREATE TABLE dsight_summary_bin_profiles (profile INTEGER, width REAL,"
	" PRIMARY KEY (profile, width)) WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_bins (profile INTEGER, width REAL,"
	" bin INTEGER, name INTEGER, count INTEGER, duration_max REAL,"
	" duration_parts BLOB, PRIMARY KEY (profile, width, bin, name))"
	" WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_crossing (profile INTEGER, width REAL,"
	" bin INTEGER, start REAL, end REAL, name INTEGER);"
	"CREATE INDEX dsight_summary_crossing_bin ON dsight_summary_crossing"
	" (profile, width, bin);"
	"CREATE TABLE dsight_summary_range_bins (profile INTEGER, width REAL,"
	" bin INTEGER, count INTEGER, duration_parts BLOB,"
	" PRIMARY KEY (profile, width, bin)) WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_name_profiles (profile INTEGER PRIMARY KEY,"
	" ranges INTEGER);"
	"CREATE TABLE dsight_summary_names (profile INTEGER, name INTEGER,"
	" count INTEGER, duration_max REAL, duration_parts BLOB,"
	" clipped_parts BLOB, PRIMARY KEY (profile, name)) WITHOUT ROWID;";


static int prof_ok(const struct prof_acc *p, double duration)
{
	if (p->bad || p->max_start > duration || p->max_end > duration)
		return 0;
	for (size_t k = 0; k < p->cap; k++)
		if (p->names[k].dur.special || p->names[k].clip.special)
			return 0;
	return 1;
}

static int write_profile(sqlite3 *db, sqlite3_stmt *pst, sqlite3_stmt *nst,
                         size_t k, const struct prof_acc *p,
                         unsigned char **blob, size_t *cap, struct err *e)
{
	int64_t ranges = 0;
	int rc = 0;

	for (size_t s = 0; p && s < p->cap && !rc; s++) {
		const struct name_acc *n = &p->names[s];
		if (!n->count)
			continue;
		ranges += n->count;
		sqlite3_bind_int64(nst, 1, (sqlite3_int64)k);
		sqlite3_bind_int64(nst, 2, (sqlite3_int64)s - 1);
		sqlite3_bind_int64(nst, 3, n->count);
		sqlite3_bind_double(nst, 4, n->max);
		if (store_sumio_bind_parts(nst, 5, &n->dur, blob, cap) ||
		    store_sumio_bind_parts(nst, 6, &n->clip, blob, cap))
			return err_set(e, ERR_NOMEM, "out of memory");
		rc = store_sumio_step(db, nst, e);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(pst, 1, (sqlite3_int64)k);
	sqlite3_bind_int64(pst, 2, ranges);
	return store_sumio_step(db, pst, e);
}

static int write_bins(sqlite3 *db, sqlite3_stmt *const st[4], size_t k,
                      int wi, const struct prof_acc *p, unsigned char **blob,
                      size_t *cap, struct err *e)
{
	const struct binset *bs = p ? &p->bs[wi] : NULL;
	double w = bin_widths[wi];
	int rc = 0;

	for (size_t b = 0; bs && b < bs->nbins && !rc; b++) {
		const struct bin_acc *ba = &bs->bins[b];
		if (ba->dur.special)
			return 0; /* cannot happen for finite times */
		for (size_t j = 0; j < ba->n && !rc; j++) {
			const struct bin_ent *en = &ba->e[j];
			if (store_sumio_bind_parts(st[1], 6, &en->dur, blob, cap))
				return err_set(e, ERR_NOMEM, "out of memory");
			sqlite3_bind_int64(st[1], 1, (sqlite3_int64)k);
			sqlite3_bind_int64(st[1], 2, (sqlite3_int64)b);
			sqlite3_bind_int64(st[1], 3, en->name);
			sqlite3_bind_int64(st[1], 4, en->count);
			sqlite3_bind_double(st[1], 5, en->max);
			sqlite3_bind_double(st[1], 7, w);
			rc = store_sumio_step(db, st[1], e);
		}
		if (rc || !ba->count)
			continue;
		if (store_sumio_bind_parts(st[3], 5, &ba->dur, blob, cap))
			return err_set(e, ERR_NOMEM, "out of memory");
		sqlite3_bind_int64(st[3], 1, (sqlite3_int64)k);
		sqlite3_bind_double(st[3], 2, w);
		sqlite3_bind_int64(st[3], 3, (sqlite3_int64)b);
		sqlite3_bind_int64(st[3], 4, ba->count);
		rc = store_sumio_step(db, st[3], e);
	}
	for (size_t j = 0; bs && j < bs->nx && !rc; j++) {
		sqlite3_bind_int64(st[2], 1, (sqlite3_int64)k);
		sqlite3_bind_int64(st[2], 2, bs->x[j].bin);
		sqlite3_bind_double(st[2], 3, bs->x[j].a);
		sqlite3_bind_double(st[2], 4, bs->x[j].b);
		sqlite3_bind_int64(st[2], 5, bs->x[j].name);
		sqlite3_bind_double(st[2], 6, w);
		rc = store_sumio_step(db, st[2], e);
	}
	if (rc)
		return rc;
	sqlite3_bind_int64(st[0], 1, (sqlite3_int64)k);
	sqlite3_bind_double(st[0], 2, w);
	return store_sumio_step(db, st[0], e);
}

int store_sumnames_write(struct store_sumnames_acc *a, sqlite3 *db,
                         size_t nprof, double duration, struct err *e)
{
	static const char *const bins_sql[4] = {
		"INSERT INTO dsight_summary_bin_profiles VALUES (?1, ?2)",
		"INSERT INTO dsight_summary_bins VALUES (?1,?7,?2,?3,?4,?5,?6)",
		"INSERT INTO dsight_summary_crossing VALUES (?1,?6,?2,?3,?4,?5)",
		"INSERT INTO dsight_summary_range_bins VALUES (?1,?2,?3,?4,?5)"};
	sqlite3_stmt *pst = NULL, *nst = NULL, *bst[4] = {NULL};
	unsigned char *blob = NULL;
	size_t cap = 0;
	int rc = 0;

	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	if (!isfinite(duration))
		return 0;
	if (sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_name_profiles "
	                       "VALUES (?1,?2)", -1, &pst, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_names VALUES "
	                       "(?1,?2,?3,?4,?5,?6)", -1, &nst, NULL) != SQLITE_OK) {
		rc = store_sumio_fail(db, e);
		goto done;
	}
	for (size_t k = 0; k < nprof && !rc; k++) {
		const struct prof_acc *p = k < a->cap ? &a->prof[k] : NULL;
		if (p && !prof_ok(p, duration))
			continue;
		rc = write_profile(db, pst, nst, k, p, &blob, &cap, e);
	}
	for (int k = 0; k < 4 && !rc; k++)
		if (sqlite3_prepare_v2(db, bins_sql[k], -1, &bst[k], NULL) !=
		    SQLITE_OK)
			rc = store_sumio_fail(db, e);
	for (size_t k = 0; k < nprof && !rc; k++) {
		const struct prof_acc *p = k < a->cap ? &a->prof[k] : NULL;
		for (int w = 0; w < NWIDTHS && !rc && (!p || !p->bins_bad); w++)
			rc = write_bins(db, bst, k, w, p, &blob, &cap, e);
	}
done:
	for (int k = 0; k < 4; k++)
		sqlite3_finalize(bst[k]);
	free(blob);
	sqlite3_finalize(pst);
	sqlite3_finalize(nst);
	return rc;
}

/* ---- reading ---- */

struct store_sumnames {
	sqlite3 *db;
	sqlite3_stmt *prof, *names;
	/* NULL: no bin summaries */
	sqlite3_stmt *bprof, *bins, *cross, *rbins;
	sqlite3_stmt *rows; /* a profile's events: the most a bin counts */
	double *parts;
	size_t cap;
	/* the (profile, width, by_name) groups store_bincheck passed */
	struct checked {
		int64_t profile;
		double width;
		int by_name;
	} *checked;
	size_t nchecked, capchecked;
};

void store_sumnames_close(struct store_sumnames *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->prof);
	sqlite3_finalize(s->names);
	sqlite3_finalize(s->bprof);
	sqlite3_finalize(s->bins);
	sqlite3_finalize(s->cross);
	sqlite3_finalize(s->rows);
	sqlite3_finalize(s->rbins);
	free(s->parts);
	free(s->checked);
	free(s);
}

int store_sumnames_open(sqlite3 *db, struct store_sumnames **out,
                        struct err *e)
{
	struct store_sumnames *s = calloc(1, sizeof *s);

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	s->db = db;
	if (sqlite3_prepare_v3(db, "SELECT ranges FROM "
	                       "dsight_summary_name_profiles WHERE profile = ?1",
	                       -1, SQLITE_PREPARE_PERSISTENT, &s->prof,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "SELECT name, count, duration_max, "
	                       "duration_parts, clipped_parts FROM "
	                       "dsight_summary_names WHERE profile = ?1",
	                       -1, SQLITE_PREPARE_PERSISTENT, &s->names,
	                       NULL) != SQLITE_OK) {
		store_sumnames_close(s); /* an older cache: no name summaries */
		return 0;
	}
	if (sqlite3_prepare_v3(db, "SELECT 1 FROM dsight_summary_bin_profiles "
	                       "WHERE profile = ?1 AND width = ?2", -1,
	                       SQLITE_PREPARE_PERSISTENT, &s->bprof,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "SELECT name, count, duration_max, "
	                       "duration_parts, bin FROM dsight_summary_bins WHERE "
	                       "profile = ?1 AND width = ?4 AND bin >= ?2 AND "
	                       "bin < ?3", -1, SQLITE_PREPARE_PERSISTENT,
	                       &s->bins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "SELECT max(ordinal) FROM events WHERE "
	                       "profile = ?1", -1, SQLITE_PREPARE_PERSISTENT,
	                       &s->rows, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "SELECT start, end, name, bin FROM "
	                       "dsight_summary_crossing WHERE profile = ?1 AND "
	                       "width = ?4 AND bin >= ?2 AND bin < ?3", -1,
	                       SQLITE_PREPARE_PERSISTENT, &s->cross,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(db, "SELECT -2, count, 0.0, duration_parts, bin "
	                       "FROM dsight_summary_range_bins WHERE "
	                       "profile = ?1 AND width = ?4 AND bin >= ?2 AND "
	                       "bin < ?3", -1, SQLITE_PREPARE_PERSISTENT,
	                       &s->rbins, NULL) != SQLITE_OK) {
		sqlite3_finalize(s->bprof);
		sqlite3_finalize(s->bins);
		sqlite3_finalize(s->cross);
		sqlite3_finalize(s->rbins);
		sqlite3_finalize(s->rows);
		s->bprof = s->bins = s->cross = s->rbins = s->rows = NULL;
	}
	*out = s;
	return 0;
}

static int bad_row(int64_t profile, struct err *e)
{
	return err_set(e, ERR_DATA, "the name summary of profile %lld "
	               "(dsight_summary_names, dsight_summary_bins, "
	               "dsight_summary_crossing, dsight_summary_range_bins) is "
	               "malformed; the report was altered: rebuild it",
	               (long long)profile);
}

static long decode(struct store_sumnames *s, sqlite3_stmt *st, int col,
                   size_t at)
{
	return store_sumio_parts(st, col, &s->parts, &s->cap, at);
}

int store_sumnames_profile(struct store_sumnames *s, int64_t profile,
                           int *have, store_sumnames_fn fn, void *ctx,
                           struct err *e)
{
	int rc;

	*have = 0;
	if (!s)
		return 0;
	sqlite3_bind_int64(s->prof, 1, profile);
	rc = sqlite3_step(s->prof);
	sqlite3_reset(s->prof);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		return err_set(e, ERR_DATA, "cannot read the summaries: %s",
		               sqlite3_errmsg(s->db));
	sqlite3_bind_int64(s->names, 1, profile);
	while ((rc = sqlite3_step(s->names)) == SQLITE_ROW) {
		long n1 = decode(s, s->names, 3, 0);
		long n2 = n1 < 0 ? -1 : decode(s, s->names, 4, (size_t)n1);
		int64_t count = sqlite3_column_int64(s->names, 1);
		if (n1 < 0 || n2 < 0 || count < 1 ||
		    sqlite3_column_type(s->names, 2) != SQLITE_FLOAT) {
			sqlite3_reset(s->names);
			return bad_row(profile, e);
		}
		rc = fn(ctx, sqlite3_column_int64(s->names, 0), count,
		        sqlite3_column_double(s->names, 2), s->parts, (size_t)n1,
		        s->parts + n1, (size_t)n2);
		if (rc) {
			sqlite3_reset(s->names);
			return rc;
		}
	}
	sqlite3_reset(s->names);
	if (rc != SQLITE_DONE)
		return err_set(e, ERR_DATA, "cannot read the summaries: %s",
		               sqlite3_errmsg(s->db));
	*have = 1;
	return 0;
}

/* ---- per-second bins ---- */

/* One callback shape for both readers: a row of st (columns name, count,
 * duration_max, duration_parts, bin) to v->bin when set, else v->name. */
static int bin_row(const struct store_sumnames_visit *v, sqlite3_stmt *st,
                   const double *p, size_t n)
{
	int64_t name = sqlite3_column_int64(st, 0);
	int64_t count = sqlite3_column_int64(st, 1);
	if (v->bin)
		return v->bin(v->ctx, sqlite3_column_int64(st, 4), name, count,
		              p, n);
	return v->name(v->ctx, name, count, sqlite3_column_double(st, 2), p, n,
	               p, n);
}

/* Whether a crossing row (start, end, name, bin) is one the builder
 * writes: in the bin its start falls in, touching an edge of it. */
static int crossing_sane(sqlite3_stmt *st, double width)
{
	double a = sqlite3_column_double(st, 0), b = sqlite3_column_double(st, 1);
	int64_t bin = sqlite3_column_int64(st, 3);
	double fl = (double)bin;

	return a <= b && bin == store_sumio_bin(a, width, BINS_MAX) &&
	       (!(b < (fl + 1) * width) || !(a > fl * width));
}

/* 0 when the bins of profile at width agree with its ranges
 * (store_bincheck), checked once per group while s is open; else the
 * data error naming the tables. */
static int check_group(struct store_sumnames *s, int64_t profile,
                       double width, int by_name, struct err *e)
{
	int ok, rc;

	for (size_t k = 0; k < s->nchecked; k++)
		if (s->checked[k].profile == profile &&
		    s->checked[k].width == width &&
		    s->checked[k].by_name == by_name)
			return 0;
	if ((rc = store_bincheck_group(s->db, profile, width, by_name,
	                               BINS_MAX, &ok, e)))
		return rc;
	if (!ok)
		return bad_row(profile, e);
	if (vec_reserve(&s->checked, &s->capchecked, s->nchecked + 1,
	                sizeof *s->checked))
		return 0; /* checked again next time */
	s->checked[s->nchecked].profile = profile;
	s->checked[s->nchecked].width = width;
	s->checked[s->nchecked++].by_name = by_name;
	return 0;
}

static int read_bins(struct store_sumnames *s, sqlite3_stmt *bins,
                     const struct row_bins *b, int *have,
                     const struct store_sumnames_visit *v, struct err *e)
{
	int64_t profile = b->id, i0 = b->i0, i1 = b->i1;
	double width = b->width;
	int64_t rows;
	int rc;

	*have = 0;
	if (!s || !s->bprof)
		return 0;
	sqlite3_bind_int64(s->bprof, 1, profile);
	sqlite3_bind_double(s->bprof, 2, width);
	rc = sqlite3_step(s->bprof);
	sqlite3_reset(s->bprof);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc != SQLITE_ROW)
		goto fail;
	if ((rc = check_group(s, profile, width, bins == s->bins, e)))
		return rc;
	/* a bin counts at most the profile's ranges */
	sqlite3_bind_int64(s->rows, 1, profile);
	rc = sqlite3_step(s->rows);
	rows = sqlite3_column_int64(s->rows, 0) + 1;
	sqlite3_reset(s->rows);
	if (rc != SQLITE_ROW)
		goto fail;
	sqlite3_bind_int64(bins, 1, profile);
	sqlite3_bind_int64(bins, 2, i0);
	sqlite3_bind_int64(bins, 3, i1);
	sqlite3_bind_double(bins, 4, width);
	while ((rc = sqlite3_step(bins)) == SQLITE_ROW) {
		long n = decode(s, bins, 3, 0);
		if (n < 0 || sqlite3_column_int64(bins, 1) < 1 ||
		    sqlite3_column_int64(bins, 1) > rows ||
		    sqlite3_column_type(bins, 2) != SQLITE_FLOAT) {
			sqlite3_reset(bins);
			return bad_row(profile, e);
		}
		rc = bin_row(v, bins, s->parts, (size_t)n);
		if (rc) {
			sqlite3_reset(bins);
			return rc;
		}
	}
	sqlite3_reset(bins);
	if (rc != SQLITE_DONE)
		goto fail;
	sqlite3_bind_int64(s->cross, 1, profile);
	sqlite3_bind_int64(s->cross, 2, i0);
	sqlite3_bind_int64(s->cross, 3, i1);
	sqlite3_bind_double(s->cross, 4, width);
	while ((rc = sqlite3_step(s->cross)) == SQLITE_ROW) {
		if (sqlite3_column_type(s->cross, 0) != SQLITE_FLOAT ||
		    sqlite3_column_type(s->cross, 1) != SQLITE_FLOAT ||
		    sqlite3_column_type(s->cross, 2) != SQLITE_INTEGER ||
		    !crossing_sane(s->cross, width)) {
			sqlite3_reset(s->cross);
			return bad_row(profile, e);
		}
		rc = v->cross(v->ctx, sqlite3_column_int64(s->cross, 2),
		           sqlite3_column_double(s->cross, 0),
		           sqlite3_column_double(s->cross, 1));
		if (rc) {
			sqlite3_reset(s->cross);
			return rc;
		}
	}
	sqlite3_reset(s->cross);
	if (rc != SQLITE_DONE)
		goto fail;
	*have = 1;
	return 0;
fail:
	return err_set(e, ERR_DATA, "cannot read the summaries: %s",
	               sqlite3_errmsg(s->db));
}

int store_sumnames_bins(struct store_sumnames *s, const struct row_bins *b,
                        int *have, const struct store_sumnames_visit *v,
                        struct err *e)
{
	struct store_sumnames_visit by_name = *v;
	by_name.bin = NULL;
	return read_bins(s, s ? s->bins : NULL, b, have, &by_name, e);
}

int store_sumnames_timeline(struct store_sumnames *s,
                            const struct row_bins *b, int by_name, int *have,
                            const struct store_sumnames_visit *v,
                            struct err *e)
{
	sqlite3_stmt *bins = !s ? NULL : by_name ? s->bins : s->rbins;
	return read_bins(s, bins, b, have, v, e);
}
