/*
 * docwrite: the whole evidence document rebuilt from a catalog and the
 * rows of a trace-data.sqlite (v1), written gzip-compressed with a zero
 * mtime, as consecutive whole members of 1 MiB of text each (libdeflate;
 * one gzip stream to any reader).  Used by `--single-file` (trace-data.json.gz) and by the
 * round-trip tests.  The catalog's emptied arrays are refilled from the
 * tables in ordinal order and its event_count/sample_count removed, so the
 * output equals the input document in values and number kinds.
 */
#ifndef DSIGHT_DOCWRITE_H
#define DSIGHT_DOCWRITE_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"

/*
 * Writes the document to out_path (created; must not exist) reading rows
 * from the database at db_path (opened read-only).  catalog is borrowed.
 * level: libdeflate level 1..12.  *bytes (may be NULL) gets the compressed size.
 */
int docwrite_gzip(const char *db_path, const json_t *catalog,
                  const char *out_path, int level, uint64_t *bytes,
                  struct err *e);

#endif
