/* row: streamed rows and their sink (see row.h); the duration bucket. */
#include "base/row.h"

#include <math.h>
#include <string.h>

int row_bucket(double start, double end)
{
	double d = end - start;

	if (!(d > 1e-9))
		return ROW_BUCKET_MIN; /* also end < start */
	if (!isfinite(d))
		return ROW_BUCKET_MAX;
	double b = ceil(log2(d));
	if (b < ROW_BUCKET_MIN)
		return ROW_BUCKET_MIN;
	if (b > ROW_BUCKET_MAX)
		return ROW_BUCKET_MAX;
	return (int)b;
}

const char *evidence_collection_key(enum evidence_collection c)
{
	static const char *const keys[EVIDENCE_NCOLLECTIONS] = {
		"requests", "sessions", "server_spans", "iterations"
	};
	return (unsigned)c < EVIDENCE_NCOLLECTIONS ? keys[c] : "";
}

struct row_event row_event_of(int64_t name, double start, double end)
{
	struct row_event row;

	memset(&row, 0, sizeof row);
	row.start = start;
	row.end = end;
	row.name = name;
	row.tid = "";
	return row;
}
