/* row: streamed rows and their sink (see row.h); the duration bucket. */
#include "base/row.h"

#include <math.h>

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
