/* bsearchd: binary searches over sorted doubles (see bsearchd.h). */
#include "base/bsearchd.h"

size_t bsearchd_lower(const double *t, size_t a, size_t b, double v)
{
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t[mid] < v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

size_t bsearchd_upper(const double *t, size_t a, size_t b, double v)
{
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (t[mid] <= v)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}
