/*
 * store_ordered: the NVTX ranges of one profile overlapping a window, read
 * in ascending start order from the event_window index, so a query that
 * wants only the first ranges of a window (a page of `nsys`) stops after
 * them instead of reading the whole window.
 *
 * The index holds one start-ordered run per duration bucket; this merges
 * the runs (each from the lower bound of its bucket,
 * doc/query-semantics.md "nsys") with a small heap.  It owns a pool of prepared statements, one per open run.
 */
#ifndef DSIGHT_STORE_ORDERED_H
#define DSIGHT_STORE_ORDERED_H

#include <stdint.h>

#include "base/err.h"
#include "store/store.h"

struct store_ordered;

/* A reader on s's connection (borrowed; one thread).  *out owned by the
 * caller (store_ordered_close). */
int store_ordered_open(struct store *s, struct store_ordered **out,
                       struct err *e);
void store_ordered_close(struct store_ordered *o);

/*
 * Calls fn for each range of profile with start <= wend && end >= wstart,
 * in ascending start order (equal starts in any order).  A non-zero return
 * of fn stops the walk and is returned; data errors are ERR_DATA.
 */
int store_ordered_events(struct store_ordered *o, int64_t profile,
                         double wstart, double wend, row_event_fn fn,
                         void *ctx, struct err *e);

#endif
