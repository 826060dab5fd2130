/* store_summary: whole-run summaries (see store_summary.h). */
#include "store/store_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/numstats.h"
#include "store/store_sumbins.h"
#include "store/store_sumio.h"
#include "store/store_sumnames.h"
#include "base/vec.h"

#define SUMMARY_VERSION 2
/* Stack indexes beyond this are not summarised (the profile is scanned). */
#define STACK_MAX (1 << 24)

static const char schema_sql[] =
	"CREATE TABLE dsight_summary_meta (key TEXT PRIMARY KEY, value)"
	" WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_profiles (profile INTEGER PRIMARY KEY,"
	" events INTEGER, samples INTEGER);"
	"CREATE TABLE dsight_summary_stacks (profile INTEGER, stack INTEGER,"
	" samples INTEGER, PRIMARY KEY (profile, stack)) WITHOUT ROWID;"
	"CREATE TABLE dsight_summary_series (series INTEGER PRIMARY KEY,"
	" points_total INTEGER, samples INTEGER, min TEXT, max TEXT, last TEXT,"
	" sum REAL);";

struct prof_acc {
	int64_t events;      /* ranges with end >= 0 */
	double ev_max_start; /* the latest start among them */
	int64_t samples;     /* samples with time >= 0 */
	double smp_max;      /* the latest such time */
	int64_t *stacks;     /* samples per stack index */
	size_t nstacks;
	int bad_stack;       /* a stack index the table cannot hold */
};

struct ser_acc {
	struct numstats st; /* points with time >= 0, in ordinal order */
	double max_time;
};

struct store_summary_acc {
	struct prof_acc **prof;
	size_t nprof;
	struct ser_acc **ser;
	size_t nser;
	struct store_sumnames_acc *names;
	struct store_sumbins_acc *bins;
};

struct store_summary_acc *store_summary_acc_new(void)
{
	struct store_summary_acc *a = calloc(1, sizeof *a);
	if (a && (!(a->names = store_sumnames_acc_new()) ||
	          !(a->bins = store_sumbins_acc_new()))) {
		store_summary_acc_free(a);
		a = NULL;
	}
	return a;
}

void store_summary_acc_free(struct store_summary_acc *a)
{
	if (!a)
		return;
	for (size_t k = 0; k < a->nprof; k++) {
		if (a->prof[k])
			free(a->prof[k]->stacks);
		free(a->prof[k]);
	}
	for (size_t k = 0; k < a->nser; k++) {
		if (a->ser[k])
			numstats_free(&a->ser[k]->st);
		free(a->ser[k]);
	}
	free(a->prof);
	free(a->ser);
	store_sumnames_acc_free(a->names);
	store_sumbins_acc_free(a->bins);
	free(a);
}

/* Grows a pointer array to hold index k (new slots NULL). */
static int grow(void ***arr, size_t *n, int64_t k)
{
	if (k < 0)
		return -1;
	if ((uint64_t)k >= SIZE_MAX)
		return -1;
	return vec_reserve_zero(arr, n, (size_t)k + 1, sizeof **arr);
}

static struct prof_acc *prof_of(struct store_summary_acc *a, int64_t p)
{
	if (grow((void ***)&a->prof, &a->nprof, p))
		return NULL;
	if (!a->prof[p]) {
		a->prof[p] = calloc(1, sizeof *a->prof[p]);
		if (a->prof[p]) {
			a->prof[p]->ev_max_start = -INFINITY;
			a->prof[p]->smp_max = -INFINITY;
		}
	}
	return a->prof[p];
}

int store_summary_event(struct store_summary_acc *a, int64_t profile,
                        int64_t name, double start, double end,
                        struct err *e)
{
	struct prof_acc *p = prof_of(a, profile);

	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory summarising profile %lld",
		               (long long)profile);
	if (end >= 0) {
		p->events++;
		if (start > p->ev_max_start)
			p->ev_max_start = start;
	}
	return store_sumnames_event(a->names, profile, name, start, end, e);
}

int store_summary_sample(struct store_summary_acc *a, int64_t profile,
                         double time, int64_t stack, struct err *e)
{
	struct prof_acc *p = prof_of(a, profile);

	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory summarising profile %lld",
		               (long long)profile);
	if (store_sumbins_sample(a->bins, profile, time, e))
		return e->code;
	if (!(time >= 0))
		return 0;
	p->samples++;
	if (time > p->smp_max)
		p->smp_max = time;
	if (stack < 0 || stack >= STACK_MAX) {
		p->bad_stack = 1;
		return 0;
	}
	if (vec_reserve_zero(&p->stacks, &p->nstacks, (size_t)stack + 1, sizeof *p->stacks))
		return err_set(e, ERR_NOMEM, "out of memory summarising "
		               "profile %lld", (long long)profile);
	p->stacks[stack]++;
	return 0;
}

int store_summary_point(struct store_summary_acc *a, int64_t series,
                        int64_t ordinal, double time,
                        const struct num *value, struct err *e)
{
	struct ser_acc *s;

	if (store_sumbins_point(a->bins, series, ordinal, time, value, e))
		return e->code;
	if (grow((void ***)&a->ser, &a->nser, series))
		return err_set(e, ERR_NOMEM, "out of memory summarising series %lld",
		               (long long)series);
	s = a->ser[series];
	if (!s) {
		s = a->ser[series] = calloc(1, sizeof *s);
		if (!s)
			return err_set(e, ERR_NOMEM, "out of memory");
		numstats_init(&s->st);
		s->max_time = -INFINITY;
	}
	if (!(time >= 0))
		return 0;
	if (time > s->max_time)
		s->max_time = time;
	numstats_add(&s->st, value);
	if (numstats_failed(&s->st))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

/* ---- writing ---- */

static int write_profiles(struct store_summary_acc *a, sqlite3 *db,
                          size_t nprof, double duration, struct err *e)
{
	sqlite3_stmt *pst = NULL, *sst = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_profiles "
	                       "VALUES (?1,?2,?3)", -1, &pst, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_stacks "
	                       "VALUES (?1,?2,?3)", -1, &sst, NULL) != SQLITE_OK) {
		rc = store_sumio_fail(db, e);
		goto done;
	}
	for (size_t k = 0; k < nprof && !rc; k++) {
		struct prof_acc *p = k < a->nprof ? a->prof[k] : NULL;
		int ev_ok = !p || p->ev_max_start <= duration || !p->events;
		int smp_ok = !p || ((p->smp_max <= duration || !p->samples) &&
		                    !p->bad_stack);
		sqlite3_bind_int64(pst, 1, (sqlite3_int64)k);
		if (ev_ok)
			sqlite3_bind_int64(pst, 2, p ? p->events : 0);
		if (smp_ok)
			sqlite3_bind_int64(pst, 3, p ? p->samples : 0);
		rc = store_sumio_step(db, pst, e);
		for (size_t s = 0; !rc && smp_ok && p && s < p->nstacks; s++) {
			if (!p->stacks[s])
				continue;
			sqlite3_bind_int64(sst, 1, (sqlite3_int64)k);
			sqlite3_bind_int64(sst, 2, (sqlite3_int64)s);
			sqlite3_bind_int64(sst, 3, p->stacks[s]);
			rc = store_sumio_step(db, sst, e);
		}
	}
done:
	sqlite3_finalize(pst);
	sqlite3_finalize(sst);
	return rc;
}

static void bind_num(sqlite3_stmt *st, int k, const struct num *n,
                     struct buf *tmp)
{
	buf_reset(tmp);
	num_emit(tmp, n);
	sqlite3_bind_text(st, k, tmp->data ? tmp->data : "", (int)tmp->len,
	                  SQLITE_TRANSIENT);
}

static int write_series(struct store_summary_acc *a, sqlite3 *db,
                        size_t nser, double duration, struct err *e)
{
	sqlite3_stmt *st = NULL;
	struct buf tmp;
	int rc = 0;

	buf_init(&tmp, 0);
	if (sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_series VALUES "
	                       "(?1,?2,?3,?4,?5,?6,?7)", -1, &st, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	for (size_t k = 0; k < nser && !rc; k++) {
		struct ser_acc *s = k < a->nser ? a->ser[k] : NULL;
		if (s && s->st.points_total && s->max_time > duration)
			continue; /* points after the run: scan instead */
		sqlite3_bind_int64(st, 1, (sqlite3_int64)k);
		sqlite3_bind_int64(st, 2, s ? s->st.points_total : 0);
		sqlite3_bind_int64(st, 3, s ? s->st.samples : 0);
		if (s && s->st.samples) {
			bind_num(st, 4, &s->st.min.n, &tmp);
			bind_num(st, 5, &s->st.max.n, &tmp);
			bind_num(st, 6, &s->st.last.n, &tmp);
			sqlite3_bind_double(st, 7, s->st.sum);
		}
		if (tmp.failed)
			rc = err_set(e, ERR_NOMEM, "out of memory");
		else
			rc = store_sumio_step(db, st, e);
	}
	sqlite3_finalize(st);
	buf_free(&tmp);
	return rc;
}

int store_summary_write(struct store_summary_acc *a, sqlite3 *db,
                        const json_t *catalog, struct err *e)
{
	const json_t *d = json_object_get(json_object_get(catalog, "meta"),
	                                  "duration");
	double duration = json_number_value(d);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	if (!json_is_number(d) || !isfinite(duration))
		return 0; /* no run duration: nothing to summarise */
	if (sqlite3_prepare_v2(db, "INSERT INTO dsight_summary_meta VALUES "
	                       "('version', ?1), ('duration', ?2)", -1, &st,
	                       NULL) != SQLITE_OK)
		return store_sumio_fail(db, e);
	sqlite3_bind_int(st, 1, SUMMARY_VERSION);
	sqlite3_bind_double(st, 2, duration);
	rc = store_sumio_step(db, st, e);
	sqlite3_finalize(st);
	if (rc)
		return rc;
	rc = write_profiles(a, db, json_array_size(json_object_get(catalog,
	                                                           "profiles")),
	                    duration, e);
	if (!rc)
		rc = write_series(a, db, json_array_size(json_object_get(catalog,
		                                                         "metrics")),
		                  duration, e);
	if (!rc)
		rc = store_sumnames_write(a->names, db,
		                          json_array_size(json_object_get(catalog,
		                                                          "profiles")),
		                          duration, e);
	if (!rc)
		rc = store_sumbins_write(
			a->bins, db,
			json_array_size(json_object_get(catalog, "profiles")),
			json_array_size(json_object_get(catalog, "metrics")), e);
	return rc;
}

/* ---- reading ---- */

enum { RD_PROFILE, RD_STACKS, RD_SERIES, RD_EVENTS, RD_SAMPLES, RD_POINTS,
       RD_COUNT };

struct store_summary {
	sqlite3 *db;
	sqlite3_stmt *st[RD_COUNT];
	struct store_sumnames *names; /* NULL: an older cache */
	struct store_sumbins *bins;   /* NULL: an older cache */
};

static const char *const read_sql[RD_COUNT] = {
	[RD_PROFILE] = "SELECT events, samples FROM dsight_summary_profiles "
	               "WHERE profile = ?1",
	[RD_STACKS] = "SELECT stack, samples FROM dsight_summary_stacks "
	              "WHERE profile = ?1",
	[RD_SERIES] = "SELECT points_total, samples, min, max, last, sum FROM "
	              "dsight_summary_series WHERE series = ?1",
	/* the rows a summary may count at most (ordinals run from 0) */
	[RD_EVENTS] = "SELECT max(ordinal) FROM events WHERE profile = ?1",
	[RD_SAMPLES] = "SELECT max(ordinal) FROM samples WHERE profile = ?1",
	[RD_POINTS] = "SELECT max(ordinal) FROM points WHERE series = ?1",
};

void store_summary_close(struct store_summary *s)
{
	if (!s)
		return;
	for (int k = 0; k < RD_COUNT; k++)
		sqlite3_finalize(s->st[k]);
	store_sumnames_close(s->names);
	store_sumbins_close(s->bins);
	free(s);
}

static int rd_fail(struct store_summary *s, struct err *e)
{
	return err_set(e, ERR_DATA, "cannot read the summaries: %s",
	               sqlite3_errmsg(s->db));
}

/* ERR_DATA unless 0 <= count <= the rows of item id that statement k
 * counts (one index probe): a summary never counts more than its table. */
static int check_count(struct store_summary *s, int k, int64_t id,
                       int64_t count, const char *table, const char *what,
                       struct err *e)
{
	sqlite3_stmt *st = s->st[k];
	int64_t rows = 0;
	int rc;

	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		rows = sqlite3_column_int64(st, 0) + 1;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return rd_fail(s, e);
	if (count < 0 || count > rows)
		return err_set(e, ERR_DATA, "%s: %s %lld claims %lld rows, but "
		               "its table holds %lld; the report was altered: "
		               "rebuild it", table, what, (long long)id,
		               (long long)count, (long long)rows);
	return 0;
}

int store_summary_open(sqlite3 *db, double duration,
                       struct store_summary **out, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int version = 0, same = 0, rc;

	*out = NULL;
	/* A cache without the tables (another builder's) has no summaries. */
	if (sqlite3_prepare_v2(db, "SELECT key, value FROM dsight_summary_meta",
	                       -1, &st, NULL) != SQLITE_OK)
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		if (k && !strcmp(k, "version"))
			version = sqlite3_column_int(st, 1);
		else if (k && !strcmp(k, "duration"))
			same = sqlite3_column_type(st, 1) == SQLITE_FLOAT &&
			       sqlite3_column_double(st, 1) == duration;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || version != SUMMARY_VERSION || !same)
		return 0;
	struct store_summary *s = calloc(1, sizeof *s);
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	s->db = db;
	for (int k = 0; k < RD_COUNT; k++)
		if (sqlite3_prepare_v3(db, read_sql[k], -1,
		                       SQLITE_PREPARE_PERSISTENT, &s->st[k],
		                       NULL) != SQLITE_OK) {
			rc = rd_fail(s, e);
			store_summary_close(s);
			return rc;
		}
	rc = store_sumnames_open(db, &s->names, e);
	if (!rc)
		rc = store_sumbins_open(db, &s->bins, e);
	if (rc) {
		store_summary_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* Steps a lookup to its one row: 1 row, 0 none, else an ERR_* code. */
static int one_row(struct store_summary *s, sqlite3_stmt *st, struct err *e)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -rd_fail(s, e);
}

int store_summary_events(struct store_summary *s, int64_t profile,
                         int *have, int64_t *count, struct err *e)
{
	sqlite3_stmt *st = s->st[RD_PROFILE];
	int rc;

	*have = 0;
	sqlite3_bind_int64(st, 1, profile);
	rc = one_row(s, st, e);
	if (rc < 0)
		return -rc;
	if (rc && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
		*have = 1;
		*count = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	return *have ? check_count(s, RD_EVENTS, profile, *count,
	                           "dsight_summary_profiles", "profile", e) : 0;
}

int store_summary_samples(struct store_summary *s, int64_t profile,
                          int *have, int64_t *total,
                          store_summary_stack_fn fn, void *ctx,
                          struct err *e)
{
	sqlite3_stmt *st = s->st[RD_PROFILE];
	int64_t sum = 0;
	int rc;

	*have = 0;
	sqlite3_bind_int64(st, 1, profile);
	rc = one_row(s, st, e);
	if (rc < 0)
		return -rc;
	if (!rc || sqlite3_column_type(st, 1) != SQLITE_INTEGER) {
		sqlite3_reset(st);
		return 0;
	}
	*total = sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	if ((rc = check_count(s, RD_SAMPLES, profile, *total,
	                      "dsight_summary_profiles", "profile", e)))
		return rc;
	/* the stacks' samples: none negative, their sum the total */
	st = s->st[RD_STACKS];
	sqlite3_bind_int64(st, 1, profile);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t n = sqlite3_column_int64(st, 1);
		if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || n < 0 ||
		    n > *total - sum)
			break;
		sum += n;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return rd_fail(s, e);
	if (rc == SQLITE_ROW || sum != *total)
		return err_set(e, ERR_DATA, "dsight_summary_stacks: the samples "
		               "of profile %lld's stacks are not the %lld of "
		               "dsight_summary_profiles; the report was altered: "
		               "rebuild it", (long long)profile, (long long)*total);
	sqlite3_bind_int64(st, 1, profile);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
		    fn(ctx, sqlite3_column_int64(st, 0),
		       sqlite3_column_int64(st, 1)))
			break;
	sqlite3_reset(st);
	if (rc == SQLITE_ROW)
		return err_set(e, ERR_DATA, "dsight_summary_stacks: profile %lld "
		               "has samples of a stack it does not have; the "
		               "report was altered: rebuild it", (long long)profile);
	if (rc != SQLITE_DONE)
		return rd_fail(s, e);
	*have = 1;
	return 0;
}

/* Whether a series summary row (points_total, samples, min, max, last,
 * sum) can be: min <= last <= max, and a numeric sum whose mean lies in
 * [min, max] (up to rounding). */
static int series_sane(sqlite3_stmt *st, int64_t samples)
{
	double mn, mx, la, mean, tol;
	int t = sqlite3_column_type(st, 5);

	if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
		return 0;
	if (!samples)
		return 1;
	mn = sqlite3_column_double(st, 2);
	mx = sqlite3_column_double(st, 3);
	la = sqlite3_column_double(st, 4);
	mean = sqlite3_column_double(st, 5) / (double)samples;
	tol = 1e-6 * (fabs(mn) > fabs(mx) ? fabs(mn) : fabs(mx));
	if (!(mn <= la && la <= mx))
		return 0;
	return !isfinite(mean) || !isfinite(tol) ||
	       (mean >= mn - tol && mean <= mx + tol);
}

int store_summary_series(struct store_summary *s, int64_t series,
                         int *have, struct numstats *out, struct err *e)
{
	sqlite3_stmt *st = s->st[RD_SERIES];
	int rc;

	*have = 0;
	sqlite3_bind_int64(st, 1, series);
	rc = one_row(s, st, e);
	if (rc < 0)
		return -rc;
	if (rc) {
		int64_t samples = sqlite3_column_int64(st, 1);
		int64_t total = sqlite3_column_int64(st, 0);
		*have = 1;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(st, 1) != SQLITE_INTEGER ||
		    samples < 0 || samples > total || !series_sane(st, samples) ||
		    numstats_set(out, samples, total,
		                 (const char *)sqlite3_column_text(st, 2),
		                 (const char *)sqlite3_column_text(st, 3),
		                 (const char *)sqlite3_column_text(st, 4),
		                 sqlite3_column_double(st, 5)))
			rc = -err_set(e, ERR_DATA, "dsight_summary_series: the "
			              "summary of series %lld is malformed; the "
			              "report was altered: rebuild it",
			              (long long)series);
		sqlite3_reset(st);
		if (rc < 0)
			return -rc;
		return check_count(s, RD_POINTS, series, total,
		                   "dsight_summary_series", "series", e);
	}
	sqlite3_reset(st);
	return rc < 0 ? -rc : 0;
}

struct store_sumnames *store_summary_names(struct store_summary *s)
{
	return s->names;
}

struct store_sumbins *store_summary_bins(struct store_summary *s)
{
	return s->bins;
}
