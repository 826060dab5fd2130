/*
 * qsqlagg: the sql engine's own executor for grouped aggregates over the
 * in-memory nvtx and metric_points (shapes read by qsqlshape.h).  SQLite
 * runs such a statement one row at a time through its virtual machine
 * (about 120 ns a row); this loop reads the columns directly.
 *
 * It owns reproducing SQLite's answer exactly: the rows a statement reads
 * and the order it adds them in (the scan order of the virtual tables,
 * kept by SQLite's stable sorter within a group), SQLite 3.40's
 * arithmetic for count, sum, total, avg, min and max (sum in an integer
 * while it can, the real sum added in row order, min and max keeping the
 * first of equal values), CAST(x / n AS INT), the order of the groups and
 * of ORDER BY's ties, LIMIT and OFFSET.  Whatever it cannot answer that
 * way (an integer sum that overflows, values of mixed types that compare
 * equal as group keys, too many groups, a linked SQLite whose arithmetic
 * differs) is declined, and SQLite answers.
 */
#ifndef DSIGHT_QSQLAGG_H
#define DSIGHT_QSQLAGG_H

#include <sqlite3.h>
#include <stddef.h>

#include "query/qsqlfn.h"
#include "query/qsqlmem.h"
#include "query/qsqlshape.h"

/* qsqlagg_run's codes besides 0. */
#define QSQLAGG_DECLINED 1 /* SQLite runs the statement */
#define QSQLAGG_STOPPED 2  /* the clock expired (see clock->expired) */

/* More groups than this are left to SQLite's sorter (bounded memory). */
#define QSQLAGG_GROUPS_MAX ((size_t)1 << 20)

/* The answer: nrows rows of ncol values, row-major; texts are borrowed
 * from the qsqlmem and the shape, which must outlive it. */
struct qsqlagg_result {
	int ncol;
	size_t nrows;
	struct qsqlmem_val *cells;
};

/*
 * Computes shape s over m (both borrowed) into *out (the caller's:
 * qsqlagg_result_free).  Reads clock (borrowed) every 65,536 rows.
 * Returns 0, QSQLAGG_DECLINED or QSQLAGG_STOPPED (nothing to free).
 */
int qsqlagg_run(const struct qsqlmem *m, const struct qsqlshape *s,
                struct qsqlfn_clock *clock, struct qsqlagg_result *out);
void qsqlagg_result_free(struct qsqlagg_result *r);

/* 1 when db's SQLite adds as this executor does (3.40: a plain running
 * double sum), 0 when it does not (then every shape is declined). */
int qsqlagg_matches_sqlite(sqlite3 *db);

#endif
