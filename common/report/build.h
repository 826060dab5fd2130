/*
 * build: the report pipeline behind `dsight build` (doc/report-files.md).
 *
 *   publish_begin (validate output, lock, staging)
 *   -> evidence_read / nsys_import_all, rows teed (sink_tee) into every
 *      row writer: the SQLite store (store_write) and further writers
 *   -> store_write_finish (catalog row, durations, indexes)
 *   -> extra files written into staging (index.html, ...)
 *   -> --single-file: trace-data.json.gz from catalog + stored rows
 *   -> manifest.json -> publish_commit (atomic exchange)
 *
 * Any failure before the commit leaves the previous report untouched and
 * removes the staging directory.
 */
#ifndef DSIGHT_BUILD_H
#define DSIGHT_BUILD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "store/store_write.h"

/* Progress phases reported to build_options.progress. */
enum build_phase {
	BUILD_READ,     /* reading evidence: done/total are input bytes */
	BUILD_INDEX,    /* finishing the store (indexes) */
	BUILD_WRITE,    /* writing the remaining files */
	BUILD_PUBLISH,  /* the staged report was verified; publishing it
	                   (short) cannot be interrupted any more */
};

struct build_options {
	const char *input;             /* evidence document or legacy report
	                                  directory; NULL: Nsight exports only */
	const char *const *nsys_paths; /* --nsys-sqlite, may be empty */
	size_t nnsys;
	const char *output;            /* the report directory */
	int single_file;               /* --single-file */
	uint64_t max_part_bytes;       /* --max-part-size-mb in bytes (decimal
	                                  MB); 0: never split the page */
	int64_t max_profile_events;    /* per export; < 0 = no cap */
	const char *job;               /* meta.job of an Nsight-only report */
	/* Optional progress callback (called from the building thread). */
	void (*progress)(void *ctx, enum build_phase phase, uint64_t done,
	                 uint64_t total);
	void *progress_ctx;
	/* Optional: when *cancel becomes non-zero (e.g. set by a signal
	 * handler) the build stops at the next row or step with ERR_DATA,
	 * leaving the previous report untouched and no staging directory. */
	const cancel_flag *cancel;
};

struct build_result {
	char *output;   /* absolute path of the published report (owned) */
	char generation[STORE_GENERATION_LEN + 1];
	json_t *counts; /* manifest counts object (owned) */
	uint64_t events, samples, points;
	uint64_t bytes; /* total size of the report's files */
	size_t files;
	uint64_t shards;     /* detail shard descriptors */
	uint64_t html_bytes; /* index.html */
	size_t parts;        /* single-file parts (0: one page) */
	double seconds;
	json_t *warnings; /* sentences this build added (Nsight import); owned */
};

/* Runs the whole build.  On success r is filled (free with
 * build_result_free); on failure e says why and the output is unchanged. */
int build_run(const struct build_options *o, struct build_result *r,
              struct err *e);

void build_result_free(struct build_result *r);

#endif
