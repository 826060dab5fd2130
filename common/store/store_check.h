/*
 * store_check: the cheap invariants a reader checks when it opens dsight's
 * extension tables.  A report is a file people share: the counts it keeps
 * in dsight_meta are hints (never buffer sizes), and one that disagrees
 * with the rows it describes is a data error naming the table and key
 * (doc/report-files.md, "Data errors").
 */
#ifndef DSIGHT_STORE_CHECK_H
#define DSIGHT_STORE_CHECK_H

#include <sqlite3.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "ingest/evidence.h"
#include "store/store_elem.h"

/* A dsight_meta count: 0 and *out when text is a non-negative decimal
 * integer (at most 18 digits), else -1. */
int store_check_count_text(const char *text, int64_t *out);

/* Checks k's table against its dsight_meta counts: count rows with
 * ordinals 0 .. count - 1, timed of them with a start and an end, with a
 * negative_ttft >= 0 that many rows with ttft_ms < 0, and the indexed
 * columns not listed in irregular (",a,b,"; ",*," skips this) hold values
 * of their type.  Each costs a count or a probe over an index.  0, or
 * ERR_DATA naming path, the table and the key or column. */
int store_check_collection(sqlite3 *db, const char *path, int k,
                           const char *irregular, int64_t count,
                           int64_t timed, int64_t negative_ttft,
                           struct err *e);

/* ERR_DATA naming path and k's table unless el (a row of k whose
 * dsight_meta irregular.<k> is irregular, ",a,b," or NULL) is an element
 * as the builder wrote it: an object (unless irregular holds "*"), a
 * request with a string id (unless irregular holds "id").  STORE_TIMES
 * elements, built from the columns, pass. */
int store_check_element(const char *path, enum evidence_collection k,
                        const char *irregular, enum store_shape shape,
                        const json_t *el, struct err *e);

#endif
