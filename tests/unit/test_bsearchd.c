/* Unit tests for common/base/bsearchd: bounds of sorted doubles, against a
 * linear scan, with ties, empty ranges, sub-ranges and values outside. */
#include "testlib.h"

#include "base/bsearchd.h"

#include <math.h>

static size_t scan_lower(const double *t, size_t a, size_t b, double v)
{
	while (a < b && t[a] < v)
		a++;
	return a;
}

static size_t scan_upper(const double *t, size_t a, size_t b, double v)
{
	while (a < b && t[a] <= v)
		a++;
	return a;
}

TEST(bounds_match_a_linear_scan_with_ties_and_subranges)
{
	const double t[] = {-3, -1, -1, 0, 0.5, 2, 2, 2, 7, 1e300};
	const double probes[] = {-INFINITY, -4, -3, -2, -1, -0.5, 0, 0.5, 1,
	                         2, 3, 7, 8, 1e300, INFINITY};
	size_t n = sizeof t / sizeof t[0];

	for (size_t a = 0; a <= n; a++)
		for (size_t b = a; b <= n; b++)
			for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
				CHECK_EQ(bsearchd_lower(t, a, b, probes[k]),
				         scan_lower(t, a, b, probes[k]));
				CHECK_EQ(bsearchd_upper(t, a, b, probes[k]),
				         scan_upper(t, a, b, probes[k]));
			}
}

TEST(ties_give_the_run_of_equal_values)
{
	const double t[] = {1, 2, 2, 2, 3};

	CHECK_EQ(bsearchd_lower(t, 0, 5, 2), 1);
	CHECK_EQ(bsearchd_upper(t, 0, 5, 2), 4);
	CHECK_EQ(bsearchd_lower(t, 0, 0, 2), 0);
	CHECK_EQ(bsearchd_upper(t, 3, 3, 2), 3);
}

int main(void)
{
	RUN(bounds_match_a_linear_scan_with_ties_and_subranges);
	RUN(ties_give_the_run_of_equal_values);
	return testlib_done();
}
