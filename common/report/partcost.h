/*
 * partcost: what a single-file report's rows weigh along the run, for
 * cutting it into parts (parts.h).  Each detail row counts the bytes of
 * its shard text plus its separator (len + 1), added to the millisecond
 * bin of its start and to that of its end (times clamped to [0, end_ms]);
 * both are kept as prefix sums of exact integers, so the rows touching
 * the closed slice [a, b] weigh partcost_slice(c, a, b).
 *
 * The scan reads every row of the staged store once with a connection of
 * its own, so the build can run it on a thread of its own while the web
 * phase writes the summaries.  Memory: two integers per millisecond of
 * the run.
 */
#ifndef DSIGHT_PARTCOST_H
#define DSIGHT_PARTCOST_H

#include <jansson.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"

struct partcost {
	uint64_t *starts; /* [m]: the rows starting in bins 0..m */
	uint64_t *ends;   /* [m]: the rows ending in bins 0..m */
	long end_ms;      /* the last bin: ceil(duration * 1000) */
};

/*
 * Scans the store at sqlite_path (catalog borrowed: its profiles with GPU
 * rows) for a run of duration seconds (finite, > 0, at most 1e8) into a
 * new *out (free with partcost_free).  cancel (NULL: never) stops the
 * scan with "interrupted".  0, or ERR_DATA / ERR_NOMEM naming what failed.
 */
int partcost_scan(const char *sqlite_path, const json_t *catalog,
                  double duration, const cancel_flag *cancel,
                  struct partcost **out, struct err *e);

/* The bytes of the rows touching [a, b] (0 <= a <= b <= end_ms); it grows
 * with b.  A range that ends before it starts can make it negative. */
int64_t partcost_slice(const struct partcost *c, long a, long b);

void partcost_free(struct partcost *c);

#endif
