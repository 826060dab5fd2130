/*
 * qsqlshape: recognises the grouped aggregates the sql engine computes
 * itself over the in-memory nvtx and metric_points (qsqlagg.h), from a
 * statement SQLite has already prepared (so it is valid and allowed).
 *
 * It owns the statement's shape: one table, no alias, no join; a WHERE of
 * ANDed comparisons of a column with a literal; GROUP BY columns and at
 * most one bucket CAST(col / N AS INT); a select list of those keys and
 * count/sum/total/avg/min/max of one column; ORDER BY output columns;
 * LIMIT and OFFSET literals.  Anything else, or anything whose meaning
 * could differ from SQLite's reading (an identifier that is both a column
 * and an alias, quoting the shape does not know), is declined: SQLite then
 * runs the statement as usual.  Numeric literals are read by SQLite itself
 * (a one-literal SELECT on the caller's connection), so a literal means
 * exactly what it means in the statement.
 */
#ifndef DSIGHT_QSQLSHAPE_H
#define DSIGHT_QSQLSHAPE_H

#include <sqlite3.h>
#include <stdint.h>

#include "query/qsqlmem.h"

#define QSQLSHAPE_ITEMS 16
#define QSQLSHAPE_KEYS 4
#define QSQLSHAPE_CONDS 8
#define QSQLSHAPE_ORDER 8

enum qsqlshape_table { QS_POINTS, QS_NVTX };

/* Columns: the first four are a group's (one value per dictionary group),
 * the rest a row's. */
enum qsqlshape_col {
	QC_NAME, QC_WORKER, QC_RANK, QC_KEY, /* key: profile or series */
	QC_T, QC_END, QC_DURATION, QC_VALUE, QC_ORDINAL, QC_SOURCE_ROW,
	QC_DEPTH
};
#define QC_GROUP_LEVEL(c) ((c) <= QC_KEY)

enum qsqlshape_fn { QF_NONE, QF_COUNT_STAR, QF_COUNT, QF_SUM, QF_TOTAL,
                    QF_AVG, QF_MIN, QF_MAX };

/* A select item, a key or an ORDER BY term: a column, a bucket (div > 0:
 * CAST(col / div AS INT), the column a REAL one) or an aggregate. */
struct qsqlshape_expr {
	enum qsqlshape_fn fn;   /* QF_NONE: a column or a bucket */
	int col;                /* enum qsqlshape_col; -1 for count(*) */
	int bucket;
	double div;             /* the divisor as SQLite converts it */
};

enum qsqlshape_op { QO_EQ, QO_LT, QO_LE, QO_GT, QO_GE };

/* "col op literal"; the literal's value as SQLite reads it (text owned by
 * the struct qsqlshape). */
struct qsqlshape_cond {
	int col;
	enum qsqlshape_op op;
	struct qsqlmem_val v;
};

/* An ORDER BY term: output column item, or (item < 0) the GROUP BY key
 * key, which the select list does not show. */
struct qsqlshape_order {
	int item, key, desc;
};

struct qsqlshape {
	enum qsqlshape_table table;
	int nitems, nkeys, nconds, norder;
	struct qsqlshape_expr items[QSQLSHAPE_ITEMS];
	int item_key[QSQLSHAPE_ITEMS]; /* the key an item shows, or -1 */
	struct qsqlshape_expr keys[QSQLSHAPE_KEYS];
	struct qsqlshape_cond conds[QSQLSHAPE_CONDS];
	struct qsqlshape_order order[QSQLSHAPE_ORDER];
	int64_t limit, offset;          /* limit < 0: none */
	char *texts;                    /* the text literals (owned) */
};

/*
 * Reads sql (a statement db prepared successfully) into *out.  Returns 1
 * when it has a shape qsqlagg computes (*out then owns texts:
 * qsqlshape_free), 0 when it does not (nothing to free).  db is borrowed:
 * it reads the numeric literals.
 */
int qsqlshape_read(sqlite3 *db, const char *sql, struct qsqlshape *out);
void qsqlshape_free(struct qsqlshape *s);

#endif
