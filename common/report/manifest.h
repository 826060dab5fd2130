/*
 * manifest: manifest.json, the identity and file list of a report
 * (doc/report-files.md "manifest.json").
 *
 * Written last into the staging directory: it lists every file found there
 * (sorted relative paths, manifest.json included) and hashes the data file
 * and index.html (null while there is none).
 */
#ifndef DSIGHT_MANIFEST_H
#define DSIGHT_MANIFEST_H

#include <jansson.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"

#define MANIFEST_GENERATOR "srtctl-trace"
#define MANIFEST_DELIVERY_STATIC "static-details/1"
#define MANIFEST_DELIVERY_EMBEDDED "embedded"

struct manifest_info {
	const char *delivery;   /* MANIFEST_DELIVERY_* */
	const char *generation; /* the build's generation id */
	const char *data_file;  /* relative: trace-data.sqlite or trace-data.json.gz */
	/* streamed collection sizes (evstats.elements) or NULL */
	const uint64_t *elements;
	const cancel_flag *cancel; /* optional: stops the hashing */
};

/*
 * The manifest's `counts` object for a catalog: the lengths of requests,
 * sessions, workers, metrics, profiles and iterations.  elements (may be
 * NULL) adds the sizes of streamed collections (evstats.elements),
 * whose catalog arrays are empty.  New reference.
 */
json_t *manifest_counts(const json_t *catalog, const uint64_t *elements);

/*
 * Writes dir/manifest.json (pretty-printed, synced) from the catalog
 * (borrowed) and info.
 */
int manifest_write(const char *dir, const json_t *catalog,
                   const struct manifest_info *info, struct err *e);

#endif
