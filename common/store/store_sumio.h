/*
 * store_sumio: the row I/O every build-time summary table shares
 * (store_summary, store_sumnames, store_sumbins, the GPU summaries):
 * stepping an insert, reading rows back, and exact sums (base/qsum)
 * stored as BLOBs of their parts, little-endian doubles
 * (doc/report-files.md "Summaries").
 */
#ifndef DSIGHT_STORE_SUMIO_H
#define DSIGHT_STORE_SUMIO_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/qsum.h"

/* Parts of a stored expansion beyond this are rejected as malformed. */
#define STORE_SUMIO_PARTS_MAX 4096

/* ERR_DATA "cannot write the summaries: <sqlite message>". */
int store_sumio_fail(sqlite3 *db, struct err *e);

/* Steps the insert st once, then resets it and clears its bindings; 0 or
 * store_sumio_fail. */
int store_sumio_step(sqlite3 *db, sqlite3_stmt *st, struct err *e);

/* Binds the parts of s as a BLOB to parameter k of st, encoded in *blob
 * (grown as needed; the caller owns *blob and *cap and frees *blob).
 * 0, or -1 out of memory. */
int store_sumio_bind_parts(sqlite3_stmt *st, int k, const struct qsum *s,
                           unsigned char **blob, size_t *cap);

/* Decodes the BLOB column col of the current row of st into *parts from
 * index at (grown as needed; owned by the caller): the number of parts,
 * or -1 when the column is malformed (not a BLOB, a length not a multiple
 * of 8, more than STORE_SUMIO_PARTS_MAX parts, a non-finite part) or
 * memory runs out. */
long store_sumio_parts(sqlite3_stmt *st, int col, double **parts,
                       size_t *cap, size_t at);

/* The bin i of width w (> 0) whose computed edges i*w <= t < (i+1)*w hold
 * t (comparison, not the quotient's rounding), for 0 <= t with i < max;
 * -1 otherwise (t negative, not finite, or beyond the bins). */
int64_t store_sumio_bin(double t, double w, int64_t max);

/* How summary rows are read back: their exact sum's parts are column
 * pcol, the run duration they were made for column rcol (it must equal
 * duration), and row(call, st, parts, nparts) takes each (parts borrowed
 * for the call); row's non-zero return stops the read and is returned. */
struct store_sumio_read {
	int pcol, rcol;
	double duration;
	int (*row)(void *call, sqlite3_stmt *st, const double *parts,
	           size_t nparts);
	void *call;
};

/* Steps st (prepared and bound; finalized here, whatever happens) over
 * the summary rows as rd says.  *have = 1, or 0 (and the read stops) at
 * a malformed row or one made for another duration: the caller answers
 * without the summary.  0, row's code, or ERR_DATA "cannot read the
 * summary: ..." (e filled). */
int store_sumio_read(sqlite3 *db, sqlite3_stmt *st,
                     const struct store_sumio_read *rd, int *have,
                     struct err *e);

#endif
