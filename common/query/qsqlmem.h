/*
 * qsqlmem: the columns of the nvtx and metric_points views held in memory,
 * the storage of the sql kind's faster engine in a warm session
 * (doc/query-semantics.md "sql", doc/performance.md "sql").
 *
 * It owns loading them from a cache (read-only, its own connection) and
 * their layout: the rows of a view grouped by its dictionary key (an NVTX
 * name of one profile, a metric series), the groups in the order the
 * file's views loop over them for GROUP BY name (name, then profile and id
 * or series), each group's rows in the order the file's name indexes give
 * them (start, end, ordinal; a series' ordinal), so a scan in group order
 * adds the values of a GROUP BY name in the order the file's views do.
 * Each range also holds the view's depth and thread_name, looked up once
 * here as the view's subqueries look them up (dsight_view_depth by profile
 * and ordinal, dsight_view_threads by profile and tid).
 * A cache whose view definitions are not the ones this dsight writes, or
 * whose typed columns hold a type the layout does not keep, is declined
 * (QSQLMEM_DECLINED): the file's views answer.
 */
#ifndef DSIGHT_QSQLMEM_H
#define DSIGHT_QSQLMEM_H

#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"

/* qsqlmem_load's code for a cache the engine does not serve. */
#define QSQLMEM_DECLINED 1

/* One SQL value of a dictionary column (SQLITE_INTEGER, _FLOAT, _TEXT or
 * _NULL); text is owned by the struct qsqlmem. */
struct qsqlmem_val {
	int type;
	int64_t i;
	double d;
	const char *s;
	int n;
};

/* A group: the rows [first, first + count) of its table. */
struct qsqlmem_group {
	int64_t key;                    /* profile (nvtx) or series (points) */
	int64_t id;                     /* the name id within the profile */
	struct qsqlmem_val name, worker, rank;
	size_t first, count;
	int sorted;                     /* t0 nondecreasing over its rows */
};

struct qsqlmem_nvtx {
	struct qsqlmem_group *g;
	size_t ng, n;
	uint32_t *by_worker;            /* groups by (worker, name, profile, id) */
	double *start, *end;
	int64_t *source_row, *ordinal;
	uint32_t *tid;                  /* index in tids; UINT32_MAX = NULL */
	struct qsqlmem_val *tids;
	size_t ntids;
	int32_t *depth;                 /* the view's depth (0 when none) */
	uint32_t *thread;               /* index in threads; UINT32_MAX = NULL */
	struct qsqlmem_val *threads;    /* the view's thread_name values */
	size_t nthreads;
};

struct qsqlmem_points {
	struct qsqlmem_group *g;
	size_t ng, n;
	double *time;
	int64_t *ordinal;
	int64_t *ival;                  /* the value, by vtype */
	double *dval;
	unsigned char *vtype;           /* SQLITE_INTEGER, _FLOAT or _NULL */
	int sorted;                     /* every group is (time nondecreasing) */
};

struct qsqlmem {
	struct qsqlmem_nvtx nvtx;
	struct qsqlmem_points points;
	size_t bytes;                   /* what the arrays take */
	void *texts;                    /* the dictionary texts (owned) */
};

/*
 * Loads the columns of the cache at path (absolute).  Returns 0 and *out
 * (owned by the caller: qsqlmem_free); QSQLMEM_DECLINED (nothing to free)
 * when the cache is not one the engine serves; ERR_* on failure (e
 * filled).  Stops with ERR_DATA once *stop (borrowed, may be NULL) is set.
 */
int qsqlmem_load(const char *path, const cancel_flag *stop,
                 struct qsqlmem **out, struct err *e);
void qsqlmem_free(struct qsqlmem *m);

#endif
