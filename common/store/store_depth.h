/*
 * store_depth: the nesting depth of NVTX ranges behind nvtx.depth
 * (doc/report-files.md "Views"): the number of ranges of the same profile
 * and thread (the tid text; rows without a tid form one thread) that
 * contain a range (a.start <= r.start and a.end >= r.end), where of two
 * identical ranges only the earlier in the profile's stored order
 * contains the later; partly overlapping ranges do not contain each other.
 *
 * It owns the table STORE_DEPTH_TABLE (profile, ordinal, depth), holding
 * the ranges of depth > 0; the view reads 0 for every other range.
 */
#ifndef DSIGHT_STORE_DEPTH_H
#define DSIGHT_STORE_DEPTH_H

#include <sqlite3.h>

#include "base/err.h"

#define STORE_DEPTH_TABLE "dsight_view_depth"

/*
 * Creates and fills STORE_DEPTH_TABLE from the events table of db (open
 * for writing, inside the build's transaction).  O(n log n) time; memory
 * for one thread's ranges at a time.  ERR_DATA naming the failure,
 * ERR_NOMEM.
 */
int store_depth_write(sqlite3 *db, struct err *e);

#endif
