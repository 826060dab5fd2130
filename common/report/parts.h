/*
 * parts: `--single-file --max-part-size-mb N` (doc/report-files.md
 * "Single-file parts").  When the single-file page would exceed the budget,
 * the run is split by time into self-contained pages part-001.html, ...
 * (each a complete single-file viewer), index.html becomes a small page
 * listing them and parts.json records the slices.
 *
 * Slices: part k covers [t_k, t_{k+1}) (the last closed at the duration),
 * t_0 = 0, cuts at whole milliseconds chosen greedily so that the slice's
 * rows (each row's shard text scaled by the one-page shards' compression
 * and base64, summed per millisecond) stay under 90% of what the budget
 * leaves beside the viewer and catalog.  A part holds the requests whose
 * start falls in its slice (before 0: the first part; at or after the
 * duration: the last) and their sessions, or all of them when the
 * collections stream from the store (html_write_from; parts.json then
 * counts those starting in the slice); every iteration and server span;
 * every NVTX range, CPU sample and metric point touching [t_k, t_{k+1}]
 * (the first part's slice extends to -inf, the last's to +inf) and each
 * series' points at its last time before t_k (the value carried into the
 * slice), re-sharded per part, so detail queries inside the slice are
 * exact.  When one millisecond alone exceeds the budget the slice is kept
 * (extended while that costs nothing more) in a part of its own and a
 * warning gives its size.
 *
 * Rows stream from the store into one shard writer per part; shards are
 * embedded one at a time from the scratch directory, as the one-page path
 * does.  Memory: two integers per millisecond of the run (partcost), and
 * each part's open shard.
 */
#ifndef DSIGHT_PARTS_H
#define DSIGHT_PARTS_H

#include <jansson.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "report/partcost.h"

struct parts_result {
	size_t parts;       /* 0: everything fits one page (nothing written) */
	uint64_t index_bytes;
	uint64_t max_bytes; /* of the largest part */
	size_t oversized;   /* parts over the budget */
	char warning[512];  /* the first oversized part's warning, else "" */
};

/*
 * Size of the page html_write would write for core with every shard
 * embedded, given base (the page without shards): exact up to shards
 * repeated across streams (counted once per descriptor, an upper bound).
 */
uint64_t parts_page_bound(const json_t *core, uint64_t base);

/* What parts_write splits; every pointer is borrowed. */
struct parts_job {
	const char *dir;         /* the report's staging directory */
	const json_t *core;      /* the embedded core catalog */
	const char *shard_dir;   /* scratch directory holding the shards (the
	                          * parts' own shards are written there too) */
	const char *sqlite_path; /* the staged store, whose rows are read
	                          * twice (costs by millisecond, unless cost
	                          * has them, then routed to every part whose
	                          * closed slice they touch) */
	uint64_t base;           /* size of the page without shards */
	uint64_t budget;         /* bytes per page (> 0) */
	double duration;         /* the run's meta.duration */
	const struct partcost *cost; /* the rows' costs (partcost_scan of
	                          * sqlite_path for this duration), or NULL:
	                          * parts_write scans them */
	const cancel_flag *cancel; /* NULL: never; stops the scans
	                                      * and the parts ("interrupted") */
};

/*
 * Splits when the page bound of job->core exceeds job->budget.  Writes
 * dir/part-NNN.html, dir/parts.json and overwrites dir/index.html with the
 * list.  r->parts = 0 when nothing was split.
 */
int parts_write(const struct parts_job *job, struct parts_result *r,
                struct err *e);

#endif
