/*
 * seriessum: the whole-run metric summaries of the viewer (doc/report-files.md
 * "Metric summary shards"): per series whose temporal is not "setting",
 * SERIESSUM_BINS bins over [0, duration] with the points' count and the
 * numeric values' count, min, max, mean and last (in ordinal order), written
 * as detail shards of kind SHARD_SERIESSUM, rows ordered by family name then
 * series, so a family's rows are a few consecutive shards.
 *
 * Memory: one series' bins at a time.
 */
#ifndef DSIGHT_SERIESSUM_H
#define DSIGHT_SERIESSUM_H

#include <jansson.h>
#include <signal.h>

#include "base/err.h"
#include "report/shard.h"

#define SERIESSUM_BINS 512

struct seriessum;

/*
 * Reads the metric points of the staged cache at sqlite_path (one series
 * at a time, in family order from catalog.metrics) and adds the rows to w
 * (not finished yet).  *out (caller frees with seriessum_free) remembers
 * which rows each series got.
 */
int seriessum_build(struct seriessum **out, struct shard_writer *w,
                    const char *sqlite_path, const json_t *catalog,
                    const volatile sig_atomic_t *cancel, struct err *e);

/*
 * Adds "metric_summary" to the core catalog (top level: bins, width,
 * chunks) and "summary_chunks": [first, last] chunk indexes to each summarised
 * series of core.metrics; w must be finished.  Returns 0 or ERR_NOMEM.
 */
int seriessum_annotate(const struct seriessum *s, const struct shard_writer *w,
                       json_t *core);

void seriessum_free(struct seriessum *s);

#endif
