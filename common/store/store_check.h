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
#include "base/row.h"
#include "store/store_elem.h"

/* What dsight_meta says of the collections: counts and timed counts, -1
 * until read; irregular.<k> as ",a,b," (malloc'd, NULL when absent). */
struct store_meta {
	int64_t count[EVIDENCE_NCOLLECTIONS];
	int64_t timed[EVIDENCE_NCOLLECTIONS];
	char *irregular[EVIDENCE_NCOLLECTIONS];
	int64_t negative_ttft;
};

/* Reads db's dsight_meta into m (zeroed by the caller; free with
 * store_check_meta_free).  *match = 1 when it is this build's extension of
 * generation; bad (badsz bytes) gets the first count key that is missing
 * or is not a non-negative decimal integer ("" when none).  0, or -1 when
 * the table cannot be read. */
int store_check_read_meta(sqlite3 *db, const char *generation,
                          struct store_meta *m, int *match, char *bad,
                          size_t badsz);

/* The data error of a bad key, else checks each collection's table
 * against m: ordinals from 0 to count - 1, timed rows with
 * a start and an end, negative_ttft requests with ttft_ms < 0, and the
 * indexed columns not listed as irregular hold values of their type.
 * Each costs a count or a probe over an index; then store_check_typed.
 * 0, or ERR_DATA naming path, the table and the key or column. */
int store_check_meta(sqlite3 *db, const char *path,
                     const struct store_meta *m, const char *bad,
                     struct err *e);
void store_check_meta_free(struct store_meta *m);

/* ERR_DATA naming path and the table unless db's typed tables
 * (store_typed.h), when it has them, agree with the v1 rows at both ends:
 * the first and the last point and sample have the same key, time and
 * payload values, of the same types.  Four probes; store_check_meta runs
 * it. */
int store_check_typed(sqlite3 *db, const char *path, struct err *e);

/* ERR_DATA naming path and k's table unless el (a row of k whose
 * dsight_meta irregular.<k> is irregular, ",a,b," or NULL) is an element
 * as the builder wrote it: an object (unless irregular holds "*"), a
 * request with a string id (unless irregular holds "id").  STORE_TIMES
 * elements, built from the columns, pass. */
int store_check_element(const char *path, enum evidence_collection k,
                        const char *irregular, enum store_shape shape,
                        const json_t *el, struct err *e);

#endif
