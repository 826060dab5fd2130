/* store_bincheck: the range bins against the ranges (see store_bincheck.h). */
#include "store/store_bincheck.h"

#include <stdint.h>
#include <stdio.h>

#include "store/store_sumio.h"

/* The one row of sql (bound to profile ?1 and width ?2) in *st, stepped:
 * SQLITE_ROW, or 0 after setting e. */
static int row_of(sqlite3 *db, const char *sql, int64_t profile,
                  double width, sqlite3_stmt **st, struct err *e)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		err_set(e, ERR_DATA, "cannot read the summaries: %s",
		        sqlite3_errmsg(db));
		return 0;
	}
	sqlite3_bind_int64(*st, 1, profile);
	if (sqlite3_bind_parameter_count(*st) > 1)
		sqlite3_bind_double(*st, 2, width);
	if (sqlite3_step(*st) != SQLITE_ROW) {
		err_set(e, ERR_DATA, "cannot read the summaries: %s",
		        sqlite3_errmsg(db));
		return 0;
	}
	return SQLITE_ROW;
}

/* The ranges of profile with a negative start (*negative) and the largest
 * start (*max, -1 when none is >= 0): per duration bucket of the events
 * index (profile, bucket, start), found by probing it for the next bucket
 * (the durations table is not trusted here), one count and one max each.
 * 0, or ERR_DATA. */
static int per_bucket(sqlite3 *db, int64_t profile, int64_t *negative,
                      double *max, struct err *e)
{
	sqlite3_stmt *next = NULL, *in = NULL;
	int64_t bucket = INT64_MIN;
	int rc = 0, more = 1;

	*negative = 0;
	*max = -1;
	if (sqlite3_prepare_v2(db, "SELECT min(bucket) FROM events WHERE "
	                       "profile = ?1 AND bucket > ?2", -1, &next,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM events WHERE "
	                       "profile = ?1 AND bucket = ?2 AND start < 0), "
	                       "(SELECT max(start) FROM events WHERE profile = "
	                       "?1 AND bucket = ?2)", -1, &in, NULL) != SQLITE_OK)
		goto fail;
	while (more) {
		sqlite3_bind_int64(next, 1, profile);
		sqlite3_bind_int64(next, 2, bucket);
		if (sqlite3_step(next) != SQLITE_ROW)
			goto fail;
		more = sqlite3_column_type(next, 0) == SQLITE_INTEGER;
		bucket = sqlite3_column_int64(next, 0);
		sqlite3_reset(next);
		if (!more)
			break;
		sqlite3_bind_int64(in, 1, profile);
		sqlite3_bind_int64(in, 2, bucket);
		if (sqlite3_step(in) != SQLITE_ROW)
			goto fail;
		*negative += sqlite3_column_int64(in, 0);
		if (sqlite3_column_type(in, 1) != SQLITE_NULL &&
		    sqlite3_column_double(in, 1) > *max)
			*max = sqlite3_column_double(in, 1);
		sqlite3_reset(in);
		more = bucket < INT64_MAX;
	}
	goto out;
fail:
	rc = err_set(e, ERR_DATA, "cannot read the summaries: %s",
	             sqlite3_errmsg(db));
out:
	sqlite3_finalize(next);
	sqlite3_finalize(in);
	return rc;
}

/* Whether the bins min..max (columns lo, hi of st) are integers in
 * [0, last]. */
static int bins_within(sqlite3_stmt *st, int lo, int hi, int64_t last)
{
	if (sqlite3_column_type(st, lo) == SQLITE_NULL)
		return 1; /* no row */
	return sqlite3_column_type(st, lo) == SQLITE_INTEGER &&
	       sqlite3_column_type(st, hi) == SQLITE_INTEGER &&
	       sqlite3_column_int64(st, lo) >= 0 &&
	       sqlite3_column_int64(st, hi) <= last;
}

int store_bincheck_group(sqlite3 *db, int64_t profile, double width,
                         int by_name, int64_t binsmax, int *ok,
                         struct err *e)
{
	char sql[256];
	sqlite3_stmt *bins = NULL, *cross = NULL, *n = NULL;
	int64_t negative, ranges, last, contained;
	double max_start;
	int rc = 0;

	*ok = 0;
	/* the profile's ranges (ordinals 0 .. n - 1), those with a negative
	 * start and the largest start: one probe per duration bucket */
	if (!row_of(db, "SELECT max(ordinal) FROM events WHERE profile = ?1",
	            profile, width, &n, e)) {
		rc = e->code;
		goto out;
	}
	ranges = sqlite3_column_type(n, 0) == SQLITE_INTEGER
	         ? sqlite3_column_int64(n, 0) + 1 : 0;
	if ((rc = per_bucket(db, profile, &negative, &max_start, e)))
		goto out;
	last = max_start >= 0 ? store_sumio_bin(max_start, width, binsmax) : -1;
	/* a bin that is not an integer is never read: its row is missing */
	snprintf(sql, sizeof sql, "SELECT total(count), min(bin), max(bin) "
	         "FROM %s WHERE profile = ?1 AND width = ?2 AND "
	         "typeof(bin) = 'integer'",
	         by_name ? "dsight_summary_bins" : "dsight_summary_range_bins");
	if (!row_of(db, sql, profile, width, &bins, e) ||
	    !row_of(db, "SELECT count(*), min(bin), max(bin) FROM "
	            "dsight_summary_crossing WHERE profile = ?1 AND width = ?2 "
	            "AND typeof(bin) = 'integer'",
	            profile, width, &cross, e)) {
		rc = e->code;
		goto out;
	}
	contained = (int64_t)sqlite3_column_double(bins, 0);
	*ok = (double)contained == sqlite3_column_double(bins, 0) &&
	      contained + sqlite3_column_int64(cross, 0) == ranges - negative &&
	      bins_within(bins, 1, 2, last) && bins_within(cross, 1, 2, last);
out:
	sqlite3_finalize(bins);
	sqlite3_finalize(cross);
	sqlite3_finalize(n);
	return rc;
}
