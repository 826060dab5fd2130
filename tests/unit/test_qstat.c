/* Unit tests: exact sums, nearest-rank order statistics and timeline
 * bucket edges, against hand-computed values. */
#include <math.h>

#include "query/qbucket.h"
#include "query/qstat.h"
#include "testlib.h"

static double fsum(const double *v, size_t n)
{
	struct qsum s;
	double r;
	qsum_init(&s);
	for (size_t k = 0; k < n; k++)
		qsum_add(&s, v[k]);
	r = qsum_value(&s);
	qsum_free(&s);
	return r;
}

#define FSUM(...)                                                          \
	fsum((const double[]){__VA_ARGS__},                                \
	     sizeof((const double[]){__VA_ARGS__}) / sizeof(double))

TEST(fsum_hand_values)
{
	double tenth[10];
	for (int k = 0; k < 10; k++)
		tenth[k] = 0.1;
	CHECK_EQ(FSUM(1e16, 1.0, -1e16), 1.0);
	CHECK_EQ(fsum(tenth, 10), 1.0); /* sequential: 0.9999999999999999 */
	CHECK_EQ(FSUM(1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50), 1e-100);
	/* half-even rounding across several parts (CPython's cases) */
	CHECK_EQ(FSUM(ldexp(1, 53), -0.5, -ldexp(1, -54)), ldexp(1, 53) - 1.0);
	CHECK_EQ(FSUM(ldexp(1, 53), 1.0, ldexp(1, -100)), ldexp(1, 53) + 2.0);
	CHECK(FSUM(ldexp(1, 53) + 10.0, 1.0, ldexp(1, -100)) ==
	      ldexp(1, 53) + 12.0);
	CHECK(FSUM(ldexp(1, 53) - 4.0, 0.5, ldexp(1, -54)) ==
	      ldexp(1, 53) - 3.0);
	CHECK_EQ(FSUM(ldexp(1, 53), 1.0), ldexp(1, 53)); /* tie to even */
	CHECK_EQ(fsum(NULL, 0), 0.0);
	CHECK(isinf(FSUM(1.0, INFINITY)) && FSUM(1.0, INFINITY) > 0);
	CHECK(isnan(FSUM(INFINITY, -INFINITY)));
	/* an intermediate overflow is not a value (Python raises) */
	CHECK(isnan(FSUM(1.7e308, 1.7e308, -1.7e308)));
}

TEST(fsum_merge_is_exact_in_any_order)
{
	const double v[] = {1e16, 0.1, -3.3e-7, 1.0, -1e16, 2.5e-300, 7.0,
	                    0.3, 1e-16, 123456.789};
	size_t n = sizeof v / sizeof v[0];
	double whole = fsum(v, n);
	for (size_t cut = 0; cut <= n; cut++) {
		struct qsum a, b, c;
		const double *parts;
		size_t np;
		qsum_init(&a);
		qsum_init(&b);
		qsum_init(&c);
		for (size_t k = 0; k < cut; k++)
			qsum_add(&a, v[k]);
		for (size_t k = n; k-- > cut;) /* reverse order */
			qsum_add(&b, v[k]);
		qsum_merge(&a, &b);
		CHECK_EQ(qsum_value(&a), whole);
		/* parts rebuild the same exact value */
		np = qsum_parts(&a, &parts);
		for (size_t k = np; k-- > 0;)
			qsum_add(&c, parts[k]);
		CHECK_EQ(qsum_value(&c), whole);
		qsum_free(&a);
		qsum_free(&b);
		qsum_free(&c);
	}
	/* many parts spill from the inline storage */
	{
		struct qsum s;
		qsum_init(&s);
		for (int k = 0; k < 60; k++)
			qsum_add(&s, ldexp(1.0, 17 * k - 500));
		CHECK_GT(s.n, QSUM_INLINE);
		for (int k = 0; k < 60; k++)
			qsum_add(&s, -ldexp(1.0, 17 * k - 500));
		CHECK_EQ(qsum_value(&s), 0.0);
		qsum_free(&s);
	}
}

static struct num I(int64_t i)
{
	struct num n = {NUM_INT, i, (double)i, NULL, 0};
	return n;
}

static struct num R(double d)
{
	struct num n = {NUM_REAL, 0, d, NULL, 0};
	return n;
}

TEST(number_sums_keep_integers_exact)
{
	struct qnsum s;
	struct num r;

	qnsum_init(&s);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_INT && r.i == 0);
	qnsum_add(&s, &(struct num){NUM_INT, 1, 1, NULL, 0});
	r = I(INT64_MAX - 1);
	qnsum_add(&s, &r);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_INT && r.i == INT64_MAX);
	/* past 64 bits: the correctly rounded sum of the nearest doubles */
	r = I(1);
	qnsum_add(&s, &r);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_REAL && r.d == 9223372036854775808.0);
	/* back inside 64 bits: exact again */
	r = I(-2);
	qnsum_add(&s, &r);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_INT && r.i == INT64_MAX - 1);
	qnsum_free(&s);

	qnsum_init(&s);
	r = I(1);
	qnsum_add(&s, &r);
	r = R(0.5);
	qnsum_add(&s, &r);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_REAL && r.d == 1.5);
	qnsum_free(&s);

	/* an integer beyond 2^53 enters a real sum as its nearest double */
	qnsum_init(&s);
	r = I(((int64_t)1 << 53) + 1);
	qnsum_add(&s, &r);
	r = R(1.0);
	qnsum_add(&s, &r);
	r = qnsum_value(&s);
	CHECK(r.kind == NUM_REAL && r.d == 9007199254740992.0);
	qnsum_free(&s);
}

static void stats(struct qobs *v, size_t n, struct num out[QSTAT_N])
{
	qobs_sort(v, n);
	qstat_compute(v, n, out);
}

TEST(nearest_rank_percentiles)
{
	struct num st[QSTAT_N];
	struct qobs one[] = {{I(7), 0}};
	struct qobs two[] = {{I(2), 0}, {I(1), 1}};
	struct qobs ten[10];
	struct qobs hundred[100];

	stats(one, 1, st);
	for (int k = 0; k < 5; k++)
		CHECK(st[k].kind == NUM_INT && st[k].i == 7);
	CHECK(st[5].kind == NUM_REAL && st[5].d == 7.0);

	/* n = 2: p50 is the ceil(1.0) = 1st, p90 the ceil(1.8) = 2nd */
	stats(two, 2, st);
	CHECK(st[0].i == 1 && st[1].i == 1 && st[2].i == 2 && st[3].i == 2 &&
	      st[4].i == 2);
	CHECK(st[5].kind == NUM_REAL && st[5].d == 1.5);

	for (int k = 0; k < 10; k++)
		ten[k] = (struct qobs){I(10 - k), (size_t)k};
	stats(ten, 10, st);
	CHECK(st[1].i == 5 && st[2].i == 9 && st[3].i == 10);
	CHECK_EQ(st[5].d, 5.5);

	for (int k = 0; k < 100; k++)
		hundred[k] = (struct qobs){R(k + 1), (size_t)k};
	stats(hundred, 100, st);
	CHECK(st[1].d == 50.0 && st[2].d == 90.0 && st[3].d == 99.0 &&
	      st[4].d == 100.0 && st[1].kind == NUM_REAL);

	stats(NULL, 0, st);
	for (int k = 0; k < QSTAT_N; k++)
		CHECK_EQ(st[k].kind, NUM_NULL);
}

TEST(percentile_ties_keep_the_first_in_default_order)
{
	struct num st[QSTAT_N];
	/* 2.0 comes before 2 in default order: every tie returns the real */
	struct qobs a[] = {{R(2.0), 0}, {I(2), 1}, {I(1), 2}};
	struct qobs b[] = {{I(2), 0}, {R(2.0), 1}, {I(1), 2}};

	stats(a, 3, st);
	CHECK(st[0].kind == NUM_INT && st[0].i == 1);
	CHECK(st[1].kind == NUM_REAL && st[1].d == 2.0); /* 2nd smallest */
	CHECK(st[4].kind == NUM_REAL && st[4].d == 2.0);
	stats(b, 3, st);
	CHECK(st[1].kind == NUM_INT && st[1].i == 2);
	CHECK(st[4].kind == NUM_INT && st[4].i == 2);
	/* exact comparison: 2^53 + 1 is above the real 2^53 */
	{
		struct qobs c[] = {{I(((int64_t)1 << 53) + 1), 0},
		                   {R(9007199254740992.0), 1}};
		stats(c, 2, st);
		CHECK(st[0].kind == NUM_REAL && st[4].kind == NUM_INT);
	}
}

TEST(bucket_edges_by_comparison)
{
	struct qbucket q;

	CHECK_EQ(qbucket_init(&q, 0, 10, 3), 0);
	CHECK(q.n == 4 && q.b[3] == 9 && qbucket_length(&q, 3) == 1);
	CHECK(qbucket_find(&q, 3) == 1 && qbucket_find(&q, 2.9999) == 0);
	CHECK(qbucket_find(&q, 10) == 3 && qbucket_find(&q, 0) == 0);
	CHECK(qbucket_find(&q, -0.1) == -1 &&
	      qbucket_find(&q, nextafter(10, 11)) == -1);
	CHECK_EQ(qbucket_first_overlap(&q, 3, 3), 0); /* touches bucket 0 */
	CHECK_EQ(qbucket_first_overlap(&q, -5, -1), q.n);
	CHECK_EQ(qbucket_first_overlap(&q, 10, 20), 3);
	qbucket_free(&q);

	/* 3 * 0.3 = 0.8999999999999999 < 0.9: a fourth, tiny bucket
	 * (division would say 3) */
	CHECK_EQ(qbucket_init(&q, 0, 0.9, 0.3), 0);
	CHECK(q.n == 4 && q.b[3] == 0.8999999999999999);
	CHECK_EQ(qbucket_find(&q, 0.9), 3);
	qbucket_free(&q);
	/* 7 * 0.3 = 2.1 exactly as a double: 7 buckets (ceil of the
	 * quotient says 8) */
	CHECK_EQ(qbucket_init(&q, 0, 2.1, 0.3), 0);
	CHECK_EQ(q.n, 7);
	qbucket_free(&q);

	/* a zero-length window: one bucket of length 0 */
	CHECK_EQ(qbucket_init(&q, 5, 5, 1), 0);
	CHECK(q.n == 1 && qbucket_length(&q, 0) == 0 &&
	      qbucket_find(&q, 5) == 0);
	qbucket_free(&q);

	CHECK(qbucket_init(&q, 0, 10000, 1) == 0 && q.n == 10000);
	qbucket_free(&q);
	CHECK_EQ(qbucket_init(&q, 0, 10000.5, 1), 1);
	CHECK(qbucket_init(&q, 0, 1, 1e300) == 0 && q.n == 1);
	qbucket_free(&q);
}

/* Which windows and widths the build-time bins answer, and the bucket of
 * each bin. */
TEST(buckets_made_of_whole_bins)
{
	struct qbucket q;
	struct qbucket_bins b;

	/* [0, 900] at 1 s over 1 s bins: bins 0..899, nothing left over but
	 * the instant 900 */
	CHECK_EQ(qbucket_init(&q, 0, 900, 1), 0);
	CHECK_EQ(qbucket_bins(&q, 1, &b), 1);
	CHECK(b.i0 == 0 && b.i1 == 900 && b.per == 1 && b.rest == 900);
	CHECK_EQ(qbucket_bin_bucket(&q, &b, 899), 899);
	CHECK_EQ(qbucket_bins(&q, 10, &b), 0); /* 1 s is not 10 s bins */
	qbucket_free(&q);
	/* [20, 95.5] at 30 s: 10 s bins 2..8, three per bucket, the last
	 * bucket [80, 95.5] taking bin 8 and the scan of [90, 95.5] */
	CHECK_EQ(qbucket_init(&q, 20, 95.5, 30), 0);
	CHECK_EQ(qbucket_bins(&q, 10, &b), 1);
	CHECK(b.i0 == 2 && b.i1 == 9 && b.per == 3 && b.rest == 90);
	CHECK(qbucket_bin_bucket(&q, &b, 4) == 0 &&
	      qbucket_bin_bucket(&q, &b, 5) == 1 &&
	      qbucket_bin_bucket(&q, &b, 8) == 2);
	qbucket_free(&q);
	/* a start off the bins, a width not a whole number of bins, a window
	 * inside one bin */
	CHECK_EQ(qbucket_init(&q, 0.5, 10, 1), 0);
	CHECK_EQ(qbucket_bins(&q, 1, &b), 0);
	qbucket_free(&q);
	CHECK_EQ(qbucket_init(&q, 0, 10, 1.5), 0);
	CHECK_EQ(qbucket_bins(&q, 1, &b), 0);
	qbucket_free(&q);
	CHECK_EQ(qbucket_init(&q, 3, 3.9, 1), 0);
	CHECK_EQ(qbucket_bins(&q, 1, &b), 0);
	qbucket_free(&q);
	/* 0.3 s buckets never align, even where 10 of them make 3 s */
	CHECK_EQ(qbucket_init(&q, 0, 9, 0.3), 0);
	CHECK_EQ(qbucket_bins(&q, 1, &b), 0);
	qbucket_free(&q);
}

int main(void)
{
	RUN(fsum_hand_values);
	RUN(fsum_merge_is_exact_in_any_order);
	RUN(number_sums_keep_integers_exact);
	RUN(nearest_rank_percentiles);
	RUN(percentile_ties_keep_the_first_in_default_order);
	RUN(bucket_edges_by_comparison);
	RUN(buckets_made_of_whole_bins);
	return testlib_done();
}
