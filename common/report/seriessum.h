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
 * Memory: one series' bins at a time, plus the non-empty bins a read-ahead
 * scan keeps (at most SERIESSUM_AHEAD_BYTES) and one fine group's
 * non-empty bins (about SERIESSUM_FINE_GROUP of them; two when the fine
 * level is binned ahead, below).
 */
#ifndef DSIGHT_SERIESSUM_H
#define DSIGHT_SERIESSUM_H

#include <jansson.h>
#include <signal.h>

#include "base/err.h"
#include "report/shard.h"

#define SERIESSUM_BINS 512
#define SERIESSUM_FINE_BINS 8192
#ifndef SERIESSUM_FINE_GROUP /* non-empty fine bins that close a group */
#define SERIESSUM_FINE_GROUP ((size_t)1 << 19)
#endif

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
 * chunks, fine: {bins, width, groups: [[descriptor...]...]}) and
 * "summary_chunks": [first, last] chunk indexes and "fine_group" to each
 * summarised series of core.metrics; w must be finished.  Returns 0 or
 * ERR_NOMEM.
 */
int seriessum_annotate(const struct seriessum *s, const struct shard_writer *w,
                       json_t *core);

void seriessum_free(struct seriessum *s);

/*
 * The same in two steps, so the reading can run on another thread while
 * the caller's thread writes other rows into w: seriessum_scan_new opens
 * the cache and bins the series in row order, keeping their non-empty bins
 * in memory up to SERIESSUM_AHEAD_BYTES (it touches no shard writer and
 * only reads catalog, which must not change until seriessum_scan_finish);
 * seriessum_scan_finish (on the thread that owns w) adds the rows to w,
 * binning the series the read-ahead left, and frees sc whatever it
 * returns.  The rows are the same bytes in the same order as
 * seriessum_build's.  seriessum_scan_free frees an unfinished scan.
 *
 * With fine_ahead set, the reading thread also bins the fine level:
 * after seriessum_scan_new it calls seriessum_scan_fine, which hands the
 * groups one at a time to seriessum_scan_finish running on the other
 * thread, and returns when all are handed over (at once when the
 * read-ahead did not keep every series: seriessum_scan_finish then bins
 * them).  seriessum_scan_finish waits for it before freeing sc; a caller
 * that will not call seriessum_scan_finish calls seriessum_scan_stop, so
 * that seriessum_scan_fine returns, and seriessum_scan_free after that.
 */
#ifndef SERIESSUM_AHEAD_BYTES /* (tests build a small one) */
#define SERIESSUM_AHEAD_BYTES ((size_t)64 << 20)
#endif
struct seriessum_scan;
int seriessum_scan_new(struct seriessum_scan **out, const char *sqlite_path,
                       const json_t *catalog, const volatile sig_atomic_t *cancel,
                       int fine_ahead, struct err *e);
void seriessum_scan_fine(struct seriessum_scan *sc);
void seriessum_scan_stop(struct seriessum_scan *sc);
int seriessum_scan_finish(struct seriessum **out, struct seriessum_scan *sc,
                          struct shard_writer *w, struct err *e);
void seriessum_scan_free(struct seriessum_scan *sc);

#endif
