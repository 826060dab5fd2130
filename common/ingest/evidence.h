/*
 * evidence: read and validate an evidence document (srtctl-trace/1).
 *
 * The document may be plain JSON or gzip (detected by magic bytes), or a
 * legacy single-file report directory (its trace-data.json.gz).  It is
 * parsed in one streaming pass (yajl): the three big arrays
 * (profiles[].events, profiles[].cpu.samples, metrics[].points) are handed
 * row by row to a sink and never held; everything else (catalog-sized) is
 * returned as a jansson tree.  Validation follows doc/evidence-document.md;
 * errors name the JSON path of the offending value.  The file is read (and
 * inflated) on a helper thread; parsing and every sink callback run on the
 * caller's thread.  Implemented by evidence.c (driver), evparse.c (token
 * state machine), evrow.c (rows), evstats.c (counts), capabilities.c,
 * numtext.c (numbers) and input.c (plain/gzip reading); the rows and the
 * sink are base/row.h's.
 */
#ifndef DSIGHT_EVIDENCE_H
#define DSIGHT_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"
#include "ingest/evstats.h"

/*
 * Reads the document at path.  On success *catalog is a new reference
 * (caller json_decref's it) holding the whole document with every
 * profile's `events` replaced by [] plus `event_count`, every `cpu.samples`
 * by [] plus `sample_count`, every series' `points` by [], and
 * `capabilities` present (the stored object, or computed from the full
 * document and appended).  stats (may be NULL) is filled; free it with
 * evstats_free.  On failure nothing is returned and e names the
 * problem (ERR_DATA) with its JSON path where there is one.
 */
int evidence_read(const char *path, const struct row_sink *sink,
                  json_t **catalog, struct evstats *stats,
                  struct err *e);

/* The data file a path names when it is a legacy report directory
 * (path/trace-data.json.gz); otherwise path itself.  Caller frees. */
char *evidence_data_file(const char *path);

#endif
