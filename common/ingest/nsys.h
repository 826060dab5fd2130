/*
 * nsys: import Nsight Systems SQLite exports (doc/nsight-import.md).
 *
 * Each export becomes one profile appended to the catalog (ids and source
 * ids continuing the document's); its ranges and CPU samples stream to the
 * sink, never held in memory.  Exports are opened read-only.  The ordered
 * scans sort in SQLite temporary files (temp_store=FILE), in the directory
 * SQLite chose when it was initialised (SQLITE_TMPDIR, else /var/tmp...).
 */
#ifndef DSIGHT_NSYS_H
#define DSIGHT_NSYS_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"
#include "ingest/evstats.h"

struct nsys_options {
	int64_t max_events;  /* per export; < 0 = no cap */
	const char *job;     /* meta.job of an Nsight-only report */
};

/*
 * Imports every export named by paths (files, or directories searched
 * recursively for *.sqlite).  When *catalog is NULL an Nsight-only document
 * is created (window = union of the capture bounds); otherwise profiles are
 * appended to it and its meta.origin_ns is used.  Rows go to sink; stats
 * (series_points etc., may be NULL) is used to recompute capabilities and
 * its profile counts are extended.  Warnings (skipped exports, truncation)
 * are appended to meta.warnings.  Caller owns *catalog.
 */
int nsys_import_all(const char *const *paths, size_t npaths,
                    json_t **catalog, const struct nsys_options *opt,
                    const struct row_sink *sink,
                    struct evstats *stats, struct err *e);

#endif
