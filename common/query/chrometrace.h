/*
 * chrometrace: a window of a dataset as a Chrome trace (Trace Event Format
 * JSON, for Perfetto UI and chrome://tracing), the same events the viewer's
 * "Chrome trace" export writes (doc/viewer-api.md exportChromeTrace): the
 * NVTX ranges of the profiles in scope as complete events ('X', one
 * process per profile, one track per thread, with process and thread name
 * metadata 'M'), their CPU samples in the window as instant events ('i'
 * on the thread's track, named by the leaf frame, the stack in args), the
 * metric series in scope as counters ('C') and the
 * requests of the window as async slices ('b'/'e', with prefill and decode
 * when the first token is known).  Times are microseconds from
 * meta.origin_ns; events are whole (not clipped to the window).  Rows are
 * read through the dataset's row scans and written as they come, through
 * the one JSON emitter; the text goes to the caller's writer in pieces.
 */
#ifndef DSIGHT_CHROMETRACE_H
#define DSIGHT_CHROMETRACE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "query/dataset.h"

/* The process ids of the requests and the metrics (profiles use their
 * ids), as in the viewer. */
#define CHROMETRACE_REQ_PID 1000000
#define CHROMETRACE_METRIC_PID 1000001
/* At most this many requests are written (the viewer's cap). */
#define CHROMETRACE_MAX_REQUESTS 100000

/* What to export.  The window defaults to the whole run; profile and
 * worker narrow the profiles (both: those matching both) and the series
 * (worker: that worker's; profile: its worker's); metrics (n names,
 * borrowed) keeps only the series of those names; requests 0 leaves the
 * requests out. */
struct chrometrace_opts {
	int has_from, has_to;
	double from, to;
	int has_profile;
	int64_t profile;
	const char *worker;          /* NULL: any */
	const char *const *metrics;  /* NULL: every series */
	size_t nmetrics;
	int requests;
};

/* What was written. */
struct chrometrace_counts {
	int64_t rows, points, requests, samples;
};

/* Receives the text in order (borrowed during the call); returns 0, or an
 * ERR_* code with e filled to stop the export (a non-zero return with e
 * left empty becomes ERR_DATA "cannot write the trace"). */
typedef int (*chrometrace_out_fn)(void *ctx, const char *data, size_t n,
                                  struct err *e);

/* Validates o against ds (usage errors, before anything is written: the
 * window as the query kinds require it, an unknown profile or worker),
 * then writes the trace through out.  counts may be NULL.  0 or an ERR_*
 * code with e filled. */
int chrometrace_write(struct dataset *ds, const struct chrometrace_opts *o,
                      chrometrace_out_fn out, void *ctx,
                      struct chrometrace_counts *counts, struct err *e);

#endif
