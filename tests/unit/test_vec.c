/* Unit tests for common/base/vec: growth, zeroing, failure leaves the array. */
#include "testlib.h"

#include "base/vec.h"

#include <stdint.h>

struct pair {
	int64_t a;
	double b;
};

TEST(reserve_grows_by_doubling_and_keeps_elements)
{
	struct pair *v = NULL;
	size_t cap = 0, n = 0;

	for (int k = 0; k < 1000; k++) {
		size_t before = cap;
		CHECK_EQ(vec_reserve(&v, &cap, n + 1, sizeof *v), 0);
		CHECK_GE(cap, n + 1);
		if (before && before < n + 1)
			CHECK_EQ(cap, before * 2);
		v[n].a = k;
		v[n].b = k * 0.5;
		n++;
	}
	CHECK_EQ(cap, 1024);
	for (int k = 0; k < 1000; k++)
		CHECK(v[k].a == k && v[k].b == k * 0.5);
	free(v);
}

TEST(reserve_starts_at_16_and_jumps_to_need)
{
	int *v = NULL;
	size_t cap = 0;
	CHECK_EQ(vec_reserve(&v, &cap, 1, sizeof *v), 0);
	CHECK_EQ(cap, 16);
	CHECK_EQ(vec_reserve(&v, &cap, 16, sizeof *v), 0);
	CHECK_EQ(cap, 16); /* enough already: unchanged */
	CHECK_EQ(vec_reserve(&v, &cap, 100, sizeof *v), 0);
	CHECK_EQ(cap, 100);
	free(v);
}

TEST(reserve_zero_clears_new_slots_only)
{
	uint64_t *v = NULL;
	size_t cap = 0;
	CHECK_EQ(vec_reserve_zero(&v, &cap, 3, sizeof *v), 0);
	for (size_t k = 0; k < cap; k++)
		CHECK_EQ(v[k], 0);
	v[2] = 42;
	CHECK_EQ(vec_reserve_zero(&v, &cap, 500, sizeof *v), 0);
	CHECK_EQ(v[2], 42);
	for (size_t k = 16; k < cap; k++)
		CHECK_EQ(v[k], 0);
	free(v);
}

TEST(overflow_fails_and_leaves_the_array)
{
	int *v = NULL;
	size_t cap = 0;
	CHECK_EQ(vec_reserve(&v, &cap, 4, sizeof *v), 0);
	v[0] = 7;
	int *before = v;
	CHECK_EQ(vec_reserve(&v, &cap, SIZE_MAX / 2, sizeof *v), -1);
	CHECK(v == before);
	CHECK_EQ(cap, 16);
	CHECK_EQ(v[0], 7);
	CHECK_EQ(vec_resize(&v, SIZE_MAX / 4 + 1, 8), -1);
	CHECK(v == before);
	free(v);
}

TEST(resize_exact)
{
	double *v = NULL;
	CHECK_EQ(vec_resize(&v, 3, sizeof *v), 0);
	v[0] = 1.5, v[2] = 2.5;
	CHECK_EQ(vec_resize(&v, 1000, sizeof *v), 0);
	CHECK(v[0] == 1.5 && v[2] == 2.5);
	free(v);
}

int main(void)
{
	RUN(reserve_grows_by_doubling_and_keeps_elements);
	RUN(reserve_starts_at_16_and_jumps_to_need);
	RUN(reserve_zero_clears_new_slots_only);
	RUN(overflow_fails_and_leaves_the_array);
	RUN(resize_exact);
	return testlib_done();
}
