/* partcost: the rows' weight per millisecond (see partcost.h). */
#include "report/partcost.h"
#include "base/cancel.h"
#include "report/rowscan.h"
#include "store/store_late.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

static long bin(double t, long end_ms)
{
	if (!(t > 0))
		return 0;
	double m = floor(t * 1000.0);
	return m >= (double)end_ms ? end_ms : (long)m;
}

static int add_row(void *ctx, enum shard_kind kind, int64_t index,
                   double start, double end, const char *text, size_t len,
                   struct err *e)
{
	struct partcost *c = ctx;
	(void)kind;
	(void)index;
	(void)text;
	(void)e;
	c->starts[bin(start, c->end_ms)] += len + 1;
	c->ends[bin(end, c->end_ms)] += len + 1;
	return 0;
}

int partcost_scan(const char *sqlite_path, const json_t *catalog,
                  double duration, const cancel_flag *cancel,
                  struct partcost **out, struct err *e)
{
	struct partcost *c;
	sqlite3 *db = NULL;
	int rc;

	*out = NULL;
	if (!(duration > 0) || !isfinite(duration) || duration > 1e8)
		return err_set(e, ERR_DATA, "meta.duration: expected a finite number > 0");
	if (!(c = calloc(1, sizeof *c)))
		return err_set(e, ERR_NOMEM, "Out of memory slicing the parts");
	c->end_ms = (long)ceil(duration * 1000.0);
	c->starts = calloc((size_t)c->end_ms + 1, sizeof *c->starts);
	c->ends = calloc((size_t)c->end_ms + 1, sizeof *c->ends);
	if (!c->starts || !c->ends) {
		rc = err_set(e, ERR_NOMEM, "Out of memory slicing the parts");
		goto out;
	}
	if (store_late_open_reader(sqlite_path, &db) != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "Cannot open %s: %s", sqlite_path,
		             db ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	cancel_sqlite(db, cancel); /* the scan stops with SQLITE_INTERRUPT */
	if ((rc = rowscan_all(db, catalog, add_row, c, e)))
		goto out;
	if (cancel_requested(cancel)) {
		rc = err_set(e, ERR_DATA, "interrupted");
		goto out;
	}
	for (long m = 1; m <= c->end_ms; m++) {
		c->starts[m] += c->starts[m - 1];
		c->ends[m] += c->ends[m - 1];
	}
out:
	sqlite3_close(db);
	if (rc)
		partcost_free(c);
	else
		*out = c;
	return rc;
}

int64_t partcost_slice(const struct partcost *c, long a, long b)
{
	return (int64_t)c->starts[b] - (a > 0 ? (int64_t)c->ends[a - 1] : 0);
}

void partcost_free(struct partcost *c)
{
	if (!c)
		return;
	free(c->starts);
	free(c->ends);
	free(c);
}
