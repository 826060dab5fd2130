/*
 * nsys_launch: the launch link of one export's GPU rows (doc/nsight-import.md
 * "GPU activity").
 *
 * Owns the CUDA runtime calls filed while the NVTX projection runs (in
 * (start, rowid) order, each with its projected range) and the lookup of
 * the first call filed with a (process, correlationId).  The calls go to
 * an unlinked temporary file (SQLITE_TMPDIR, else TMPDIR, else /tmp); the
 * GPU rows, read in start order, look their call up in a window of the
 * latest calls filed up to their start (NSYS_LAUNCH_WINDOW of them in
 * memory, hashed on the key).  The window answers only what it can prove:
 * per process it keeps the range of correlationIds filed and intervals
 * covering those it dropped; a key it cannot settle (dropped from the
 * window, filed after the row's start, a duplicate of a dropped one) is
 * looked up in a temporary table of the calls on the export's connection,
 * indexed on (pid, correlationId), built on first need.  Memory does not
 * grow with the row count.
 */
#ifndef DSIGHT_NSYS_LAUNCH_H
#define DSIGHT_NSYS_LAUNCH_H

#include <stdint.h>

#include "base/err.h"
#include "ingest/nsys_export.h"

/* Calls held in memory (DSIGHT_TEST_LAUNCH_WINDOW overrides it, for the
 * tests that make the window drop calls). */
#define NSYS_LAUNCH_WINDOW (1 << 14)

struct nsys_launch;

/* A filed call; name and nvtx are -1 when null. */
struct nsys_launch_call {
	int64_t tid, start, name, nvtx;
};

/* Creates the (empty) call table on x's connection and starts filing.
 * *out is owned by the caller (nsys_launch_close); x must outlive it. */
int nsys_launch_open(const struct nsys_export *x, struct nsys_launch **out,
                     struct err *e);

/* Files one call; calls come in (start, rowid) order. */
int nsys_launch_file(struct nsys_launch *l, int64_t pid, int64_t corr,
                     const struct nsys_launch_call *c, struct err *e);

/* Ends filing; lookups may start. */
int nsys_launch_seal(struct nsys_launch *l, struct err *e);

/* The first call filed with key (pid, corr) into *c: 1, or 0 when none.
 * at: the start of the GPU row asking; it never decreases from one call
 * to the next. */
int nsys_launch_find(struct nsys_launch *l, int64_t at, int64_t pid,
                     int64_t corr, struct nsys_launch_call *c, struct err *e);

/* Drops the table. */
void nsys_launch_close(struct nsys_launch *l);

#endif
