/*
 * store_depth: the nesting depth of NVTX ranges behind nvtx.depth
 * (doc/report-files.md "Views"): the number of ranges of the same profile
 * and thread (the tid text; rows without a tid form one thread) that
 * contain a range (a.start <= r.start and a.end >= r.end), where of two
 * identical ranges only the earlier in the profile's stored order
 * contains the later; partly overlapping ranges do not contain each other.
 *
 * It owns the table STORE_DEPTH_TABLE (profile, ordinal, depth), holding
 * the ranges of depth > 0; the view reads 0 for every other range.  The
 * build counts the depths as the ranges stream in and loads them with the
 * ranges; store_depth_write counts them from the events table when the
 * stream could not.
 */
#ifndef DSIGHT_STORE_DEPTH_H
#define DSIGHT_STORE_DEPTH_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define STORE_DEPTH_TABLE "dsight_view_depth"

/* The table's CREATE statement, run with the other tables before the
 * load. */
extern const char store_depth_schema_sql[];

/* Where depths go: emit(ctx, profile, ordinal, depth, e) for each range
 * of depth > 0, in the profile's stored order within each thread; it
 * returns 0 or an error code (e filled). */
struct store_depth_out {
	int (*emit)(void *ctx, int64_t profile, int64_t ordinal, int64_t depth,
	            struct err *e);
	void *ctx;
};

struct store_depth;

#define STORE_DEPTH_UNORDERED 1

/*
 * The depths as the ranges are loaded, emitted to out (copied; its ctx
 * borrowed for d's life) in the events table's key order, in runs:
 * store_depth_add takes the ranges in that order (profile, then ordinal).
 * The trace format stores a profile's ranges in containment order (start
 * ascending, end descending), so a range's containers have all arrived
 * before it: each thread keeps the ends of its open ranges (those ending
 * at or after the latest start) in a counted search tree, and a range's
 * depth is the number of them at or after its end: O(log open) a range.
 * Memory: the open ranges.  When a thread's ranges are out of that
 * order, a range ends before its start, or a profile arrives after a
 * later one, the
 * stream stops and store_depth_finish returns STORE_DEPTH_UNORDERED: the
 * caller then runs store_depth_write over the loaded table (which first
 * empties the depth table).  store_depth_finish emits the last run.  tid
 * (not owned, NULL read as "") is the range's tid text; a NaN start or
 * end (NULL in the table) has no depth.  store_depth_new returns NULL
 * when out of memory; the others 0, or ERR_NOMEM or the emitter's error.
 */
struct store_depth *store_depth_new(const struct store_depth_out *out);
int store_depth_add(struct store_depth *d, int64_t profile, int64_t ordinal,
                    double start, double end, const char *tid,
                    size_t tid_len, struct err *e);
int store_depth_finish(struct store_depth *d, struct err *e);
void store_depth_free(struct store_depth *d);

/*
 * Empties STORE_DEPTH_TABLE and fills it from the events table of db
 * (open for writing, inside the build's transaction).  O(n log n) time;
 * memory for one profile's ranges at a time.  ERR_DATA naming the
 * failure, ERR_NOMEM.
 */
int store_depth_write(sqlite3 *db, struct err *e);

#endif
