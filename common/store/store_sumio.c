/* store_sumio: summary row I/O (see store_sumio.h). */
#include "store/store_sumio.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

int store_sumio_fail(sqlite3 *db, struct err *e)
{
	return err_set(e, ERR_DATA, "cannot write the summaries: %s",
	               sqlite3_errmsg(db));
}

int store_sumio_step(sqlite3 *db, sqlite3_stmt *st, struct err *e)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : store_sumio_fail(db, e);
}

int store_sumio_bind_parts(sqlite3_stmt *st, int k, const struct qsum *s,
                           unsigned char **blob, size_t *cap)
{
	const double *p;
	size_t n = qsum_parts(s, &p);

	if (vec_reserve(blob, cap, n * 8 + 1, 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &p[i], 8);
		for (int b = 0; b < 8; b++)
			(*blob)[i * 8 + (size_t)b] = (unsigned char)(u >> (8 * b));
	}
	sqlite3_bind_blob(st, k, *blob, (int)(n * 8), SQLITE_TRANSIENT);
	return 0;
}

long store_sumio_parts(sqlite3_stmt *st, int col, double **parts,
                       size_t *cap, size_t at)
{
	const unsigned char *b = sqlite3_column_blob(st, col);
	size_t len = (size_t)sqlite3_column_bytes(st, col);
	size_t n = len / 8;

	/* the builder writes a BLOB, empty for an empty sum: NULL or any
	 * other type is malformed */
	if (sqlite3_column_type(st, col) != SQLITE_BLOB)
		return -1;
	if (len % 8 || n > STORE_SUMIO_PARTS_MAX ||
	    vec_reserve(parts, cap, at + n + 1, sizeof **parts))
		return -1;
	for (size_t k = 0; k < n; k++) {
		uint64_t u = 0;
		for (int i = 0; i < 8; i++)
			u |= (uint64_t)b[k * 8 + (size_t)i] << (8 * i);
		memcpy(&(*parts)[at + k], &u, 8);
		if (!isfinite((*parts)[at + k]))
			return -1;
	}
	return (long)n;
}

int64_t store_sumio_bin(double t, double w, int64_t max)
{
	double fl;

	if (!(t >= 0) || !isfinite(t))
		return -1;
	fl = floor(t / w);
	if (fl >= (double)max)
		return -1;
	while (fl > 0 && fl * w > t)
		fl -= 1;
	while ((fl + 1) * w <= t)
		fl += 1;
	return fl < (double)max ? (int64_t)fl : -1;
}

int store_sumio_read(sqlite3 *db, sqlite3_stmt *st,
                     const struct store_sumio_read *rd, int *have,
                     struct err *e)
{
	double *parts = NULL;
	size_t cap = 0;
	int r, rc = 0;

	*have = 1;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		long np = store_sumio_parts(st, rd->pcol, &parts, &cap, 0);
		if (np < 0 ||
		    sqlite3_column_double(st, rd->rcol) != rd->duration) {
			*have = 0; /* malformed, or for another duration */
			break;
		}
		if ((rc = rd->row(rd->call, st, parts, (size_t)np)) != 0)
			break;
	}
	if (!rc && *have && r != SQLITE_DONE)
		rc = err_set(e, ERR_DATA, "cannot read the summary: %s",
		             sqlite3_errmsg(db));
	sqlite3_finalize(st);
	free(parts);
	return rc;
}
