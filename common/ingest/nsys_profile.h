/*
 * nsys_profile: stream one opened Nsight export into one profile.
 *
 * Owns the range selection and ordering, the clock conversion to run
 * seconds, the first-seen name dictionary, the thread list (with names),
 * the CPU samples (stacks and names dictionaries) and the profile object of
 * the catalog (doc/nsight-import.md).  Ranges and samples go to the
 * sink as they are read; only the dictionaries are held.
 */
#ifndef DSIGHT_NSYS_PROFILE_H
#define DSIGHT_NSYS_PROFILE_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"
#include "ingest/nsys_export.h"

struct nsys_profile_in {
	struct nsys_export *x;  /* opened export (borrowed) */
	const char *file;       /* its base file name */
	int64_t origin_ns;      /* the run origin (epoch ns) */
	int64_t max_events;     /* < 0: no cap */
	int64_t profile_id, source_id;
	/* Progress in bytes (sink->progress): this export's size and the
	 * bytes of the exports before it, out of progress_total. */
	uint64_t file_bytes, progress_base, progress_total;
	const struct row_sink *sink;
};

struct nsys_profile_out {
	json_t *profile;        /* new reference: the catalog profile object */
	uint64_t events, samples;
	uint64_t without_end, invalid, scanned;
	uint64_t invalid_text;  /* invalid UTF-8 sequences replaced by U+FFFD */
	int truncated;
	/* GPU activity (nsys_gpu.h): rows imported, rows without a valid
	 * time, row cap reached, warnings (new reference, an array). */
	uint64_t gpu_rows, gpu_invalid;
	int gpu_truncated;
	json_t *gpu_warnings;
};

/* Streams the export's ranges, samples and GPU rows (in->max_events caps
 * ranges and GPU rows separately) to in->sink and builds the profile
 * object (events: [] + event_count; cpu.samples: [] + sample_count; `gpu`
 * when GPU rows were imported).  On success out->profile and
 * out->gpu_warnings are owned by the caller. */
int nsys_profile_import(const struct nsys_profile_in *in,
                        struct nsys_profile_out *out, struct err *e);

#endif
