/*
 * seriessum: the metric summaries of the viewer (doc/report-files.md
 * "Metric summary shards"): per series whose temporal is not "setting",
 * SERIESSUM_BINS bins over [0, duration] with the points' count and the
 * numeric values' count, min, max, mean and last (in ordinal order), written
 * as detail shards of kind SHARD_SERIESSUM stream 0, rows ordered by family
 * name then series, so a family's rows are a few consecutive shards.
 * A fine level, SERIESSUM_FINE_BINS bins of the same row form, is written
 * per group of series (consecutive series of one family; stream 1 + group),
 * its rows ordered by bin then series, so a window of a family reads only
 * the shards whose time bounds it overlaps.
 *
 * One read of each series bins both levels: the fine groups are written
 * as they close, and the coarse bins are kept (their non-empty bins, at
 * most SERIESSUM_AHEAD_BYTES) and written last; a series past that bound
 * is read again for its coarse bins.
 *
 * Memory: one series' bins at a time, plus the kept coarse bins and one
 * fine group's non-empty bins (about SERIESSUM_FINE_GROUP of them; two
 * when the fine level is binned on another thread, below).
 */
#ifndef DSIGHT_SERIESSUM_H
#define DSIGHT_SERIESSUM_H

#include <jansson.h>

#include "base/cancel.h"
#include "base/err.h"
#include "report/shard.h"

#define SERIESSUM_BINS 512
#define SERIESSUM_FINE_BINS 8192
#ifndef SERIESSUM_FINE_GROUP /* non-empty fine bins that close a group */
#define SERIESSUM_FINE_GROUP ((size_t)1 << 19)
#endif

struct seriessum;

/*
 * Adds "metric_summary" to the core catalog (top level: bins, width,
 * chunks, fine: {bins, width, groups: [[descriptor...]...]}) and
 * "summary_chunks": [first, last] chunk indexes and "fine_group" to each
 * summarised series of core.metrics; w must be finished.  Returns 0 or
 * ERR_NOMEM.
 */
int seriessum_annotate(const struct seriessum *s, const struct shard_writer *w,
                       json_t *core);

void seriessum_free(struct seriessum *s);

/*
 * The metric summaries of the staged cache at sqlite_path (one series at
 * a time, in family order from catalog.metrics), in two steps, so the
 * reading can run on another thread while the caller's thread writes
 * other rows into w: seriessum_scan_new opens the cache (it touches no
 * shard writer and only reads catalog, which must not change until
 * seriessum_scan_finish); seriessum_scan_finish (on the thread that owns
 * w, not finished yet) adds the rows to w, binning what no other thread
 * did, and frees sc whatever it returns; *out (caller frees with
 * seriessum_free) remembers which rows each series got.
 * seriessum_scan_free frees an unfinished scan.
 *
 * With fine_ahead set, the reading thread bins the series: after
 * seriessum_scan_new it calls seriessum_scan_fine, which hands the fine
 * groups one at a time to seriessum_scan_finish running on the other
 * thread, and returns when all are handed over.  seriessum_scan_finish
 * waits for it before it writes the coarse level and frees sc; a caller
 * that will not call seriessum_scan_finish calls seriessum_scan_stop, so
 * that seriessum_scan_fine returns, and seriessum_scan_free after that.
 */
#ifndef SERIESSUM_AHEAD_BYTES /* (tests build a small one) */
#define SERIESSUM_AHEAD_BYTES ((size_t)64 << 20)
#endif
struct seriessum_scan;
int seriessum_scan_new(struct seriessum_scan **out, const char *sqlite_path,
                       const json_t *catalog, const cancel_flag *cancel,
                       int fine_ahead, struct err *e);
void seriessum_scan_fine(struct seriessum_scan *sc);
void seriessum_scan_stop(struct seriessum_scan *sc);
int seriessum_scan_finish(struct seriessum **out, struct seriessum_scan *sc,
                          struct shard_writer *w, struct err *e);
void seriessum_scan_free(struct seriessum_scan *sc);

#endif
