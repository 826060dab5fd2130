/*
 * evidence: read and validate an evidence document (srtctl-trace/1).
 *
 * The document may be plain JSON or gzip (detected by magic bytes), or a
 * legacy single-file report directory (its trace-data.json.gz).  It is
 * parsed in one streaming pass (yajl): the three big arrays
 * (profiles[].events, profiles[].cpu.samples, metrics[].points) are handed
 * row by row to a sink and never held; everything else (catalog-sized) is
 * returned as a jansson tree.  Validation follows doc/evidence-document.md; errors
 * name the JSON path of the offending value.  The file is read (and
 * inflated) on a helper thread; parsing and every sink callback run on the
 * caller's thread.  Implemented by evidence.c (driver, capabilities),
 * evparse.c (token state machine), evrow.c (rows), numtext.c (numbers) and
 * input.c (plain/gzip reading).
 */
#ifndef DSIGHT_EVIDENCE_H
#define DSIGHT_EVIDENCE_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/num.h"

/* profiles[p].events[k] = [start, end, name_index, global_tid, source_row] */
struct evidence_event {
	double start, end;
	int64_t name;
	const char *tid; /* global_tid text, not NUL-terminated */
	size_t tid_len;
	int64_t source_row;
};

/* profiles[p].cpu.samples[k] = [time, global_tid, stack_index, source_row] */
struct evidence_sample {
	double time;
	const char *tid;
	size_t tid_len;
	int64_t stack;
	int64_t source_row;
};

/* metrics[s].points[k] = [time, value, source_id, source_row] */
struct evidence_point {
	double time;
	struct num value; /* NUM_NULL for null; NUM_BIG keeps exact digits */
	int64_t source_id;
	int64_t source_row;
};

/* The catalog collections (catalog streaming): the top-level arrays whose
 * elements a sink with an `element` callback receives one at a time. */
enum evidence_collection {
	EVIDENCE_REQUESTS,
	EVIDENCE_SESSIONS,
	EVIDENCE_SERVER_SPANS,
	EVIDENCE_ITERATIONS,
	EVIDENCE_NCOLLECTIONS
};

/* The top-level key of collection c ("requests", ...). */
const char *evidence_collection_key(enum evidence_collection c);

/*
 * Where streamed rows go.  Every callback may be NULL.  Rows arrive in
 * document order; `ordinal` is the zero-based index in the row's array and
 * `profile`/`series` the index of the enclosing profile/series.  Row
 * pointers (and the strings/big-integer text they point to) are valid only
 * during the call.  A callback returns 0, or an ERR_* code with e filled to
 * abort the read.
 */
struct evidence_sink {
	void *ctx;
	int (*event)(void *ctx, int64_t profile, int64_t ordinal,
	             const struct evidence_event *row, struct err *e);
	int (*sample)(void *ctx, int64_t profile, int64_t ordinal,
	              const struct evidence_sample *row, struct err *e);
	int (*point)(void *ctx, int64_t series, int64_t ordinal,
	             const struct evidence_point *row, struct err *e);
	/* Progress: compressed/input bytes consumed so far and the input size
	 * (0 when unknown). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	/* Optional: the read stops (ERR_DATA "interrupted") soon after *cancel
	 * becomes non-zero, also where no row arrives for a while (between
	 * chunks of the document, inside long SQL scans of an export). */
	const volatile sig_atomic_t *cancel;
	/* Catalog streaming: when set, each element of requests, sessions,
	 * server_spans and iterations (when that key holds an array) is
	 * validated, handed over here once complete (borrowed, valid during
	 * the call) and dropped: the returned catalog keeps the key with an
	 * empty array.  When NULL the elements stay in the catalog. */
	int (*element)(void *ctx, enum evidence_collection c, int64_t ordinal,
	               const json_t *elem, struct err *e);
};

/* Counts gathered while reading. */
struct evidence_stats {
	uint64_t events, samples, points;
	size_t nseries;
	uint64_t *series_points; /* per series; owned, see evidence_stats_free */
	size_t nprofiles;
	uint64_t *profile_events;  /* per profile */
	uint64_t *profile_samples; /* per profile */
	uint64_t input_bytes;      /* size of the file read */
	uint64_t elements[EVIDENCE_NCOLLECTIONS]; /* collection sizes */
	int streamed;              /* collections went to sink->element */
};

/*
 * Reads the document at path.  On success *catalog is a new reference
 * (caller json_decref's it) holding the whole document with every
 * profile's `events` replaced by [] plus `event_count`, every `cpu.samples`
 * by [] plus `sample_count`, every series' `points` by [], and
 * `capabilities` present (the stored object, or computed from the full
 * document and appended).  stats (may be NULL) is filled; free it with
 * evidence_stats_free.  On failure nothing is returned and e names the
 * problem (ERR_DATA) with its JSON path where there is one.
 */
int evidence_read(const char *path, const struct evidence_sink *sink,
                  json_t **catalog, struct evidence_stats *stats,
                  struct err *e);

void evidence_stats_free(struct evidence_stats *stats);

/*
 * Computes the capabilities object (doc/evidence-document.md
 * "capabilities") from a catalog whose big arrays are emptied
 * (event_count/sample_count present) and the per-series point counts.
 * Returns a new reference.
 */
json_t *evidence_capabilities(const json_t *catalog,
                              const uint64_t *series_points, size_t nseries);

/* The data file a path names when it is a legacy report directory
 * (path/trace-data.json.gz); otherwise path itself.  Caller frees. */
char *evidence_data_file(const char *path);

#endif
