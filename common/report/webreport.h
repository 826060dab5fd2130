/*
 * webreport: the browser half of a build, as the pipeline (build.c) drives
 * it.  Owns the shard writer's lifetime inside a staging directory (detail/,
 * or a scratch directory for --single-file), the density overviews, the
 * core catalog and index.html.
 *
 *   webreport_open      before the rows stream (creates detail/)
 *   webreport_sink      the sink to tee next to the SQLite store's
 *   webreport_finish    after the read and the store: flushes and joins the
 *                       shard thread, computes density (from the staged
 *                       SQLite events table when meta.duration was not known
 *                       in time), writes index.html; in single-file mode
 *                       embeds the shards (in one page, or in parts with a
 *                       list page) and removes the scratch directory
 */
#ifndef DSIGHT_WEBREPORT_H
#define DSIGHT_WEBREPORT_H

#include <jansson.h>
#include <stdint.h>

#include "base/cancel.h"
#include "base/err.h"
#include "base/row.h"

struct webreport;

struct webreport_stats {
	uint64_t shards;       /* shard descriptors */
	uint64_t shard_files;  /* distinct shard files */
	uint64_t shard_bytes;  /* their compressed bytes */
	uint64_t html_bytes;   /* index.html */
	uint64_t catalog_bytes;  /* base64 of the compressed core catalog */
	uint64_t embedded_bytes; /* single-file: base64 of the shards */
	char html_sha256[65];
	int oversized;         /* single-file page over 100 MB, or a part over
	                          its budget: warn */
	char warning[640];     /* the warning text when oversized, else "" */
	size_t parts;          /* single-file split into parts (0: one page) */
	uint64_t max_part_bytes; /* the largest part */
	uint64_t catalog_shards; /* catalog shards (0: collections embedded) */
	uint64_t lookup_shards;  /* their id lookup shards */
	char catalog_warning[640]; /* a session over the shard budget, or "" */
};

/*
 * Starts the browser output in staging (an existing directory; copied).
 * single_file: shards go to a scratch directory that finish removes;
 * max_part_bytes > 0 splits a single-file page larger than that into
 * time-sliced parts (report/parts.h), 0 never splits.
 * duration > 0 (meta.duration known up front) computes density in-stream;
 * pass 0 when unknown.
 */
int webreport_open(struct webreport **out, const char *staging, int single_file,
                   uint64_t max_part_bytes, double duration, struct err *e);

/* The meta.duration, once known (before the first event to count). */
void webreport_set_duration(struct webreport *wr, double duration);

/* Makes webreport_finish stop soon after *cancel becomes non-zero
 * (borrowed; NULL: never). */
void webreport_cancel(struct webreport *wr, const cancel_flag *cancel);

/* Fills *sink with the shard writer's callbacks. */
void webreport_sink(struct webreport *wr, struct row_sink *sink);

/*
 * Finishes: catalog is the build's catalog (borrowed, not modified);
 * sqlite_path the staged store (read for density when needed).  Writes
 * staging/index.html and fills st.
 */
int webreport_finish(struct webreport *wr, const json_t *catalog,
                     const char *sqlite_path, struct webreport_stats *st,
                     struct err *e);

/* Stops the shard thread if running and frees.  NULL is fine. */
void webreport_free(struct webreport *wr);

#endif
