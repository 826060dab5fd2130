/* Unit tests for common/store/store_depth's stream: the depths counted as
 * ranges arrive in containment order, each equal to the definition
 * counted pair by pair, and every input the stream cannot count (out of
 * order, an end before its start, a profile after a later one) handed to
 * the table pass. */
#include "testlib.h"

#include "store/store_depth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct range {
	double start, end;
	int tid;
	int64_t ordinal;
};

/* What the stream emitted. */
struct got {
	int64_t profile[8192], ordinal[8192], depth[8192];
	size_t n;
	int unsorted; /* an emit before the previous one in key order */
};

static int emit(void *ctx, int64_t profile, int64_t ordinal, int64_t depth,
                struct err *e)
{
	struct got *g = ctx;
	(void)e;
	if (g->n && (profile < g->profile[g->n - 1] ||
	             (profile == g->profile[g->n - 1] &&
	              ordinal <= g->ordinal[g->n - 1])))
		g->unsorted = 1;
	if (g->n < 8192) {
		g->profile[g->n] = profile;
		g->ordinal[g->n] = ordinal;
		g->depth[g->n] = depth;
		g->n++;
	}
	return 0;
}

/* Containment order: start ascending, end descending. */
static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return 0;
}

/* The definition: ranges of the same tid containing r, an identical one
 * only when it comes earlier. */
static int64_t depth_of(const struct range *r, size_t n, size_t k)
{
	int64_t d = 0;
	for (size_t i = 0; i < n; i++)
		if (i != k && r[i].tid == r[k].tid && r[i].end == r[i].end &&
		    r[i].start <= r[k].start && r[i].end >= r[k].end &&
		    !(r[i].start == r[k].start && r[i].end == r[k].end && i > k))
			d++;
	return d;
}

/* Feeds the n ranges of profile p (in their order, ordinal = index). */
static int feed(struct store_depth *d, int64_t p, const struct range *r,
                size_t n)
{
	static const char *const tids[3] = {"7", "8", ""};
	struct err e;
	for (size_t k = 0; k < n; k++) {
		int rc = store_depth_add(d, p, (int64_t)k, r[k].start, r[k].end,
		                         tids[r[k].tid], strlen(tids[r[k].tid]), &e);
		if (rc)
			return rc;
	}
	return 0;
}

/* n random ranges of three tids, nested and overlapping, some identical,
 * some with a NaN end, some before 0 and some ending at -0; sorted into
 * containment order. */
static void ranges(struct range *r, size_t n, unsigned seed)
{
	unsigned x = seed;
	for (size_t k = 0; k < n; k++) {
		x = x * 1103515245u + 12345u;
		r[k].start = ((double)(x >> 8 & 255) - 32.0) / 4.0;
		r[k].end = r[k].start + (double)(x >> 16 & 63) / 2.0;
		r[k].tid = (int)(x >> 28 & 3) % 3;
		if (k % 50 == 7)
			r[k].end = NAN;
		if (k % 60 == 11)
			r[k].start = -1.0, r[k].end = k % 120 == 11 ? 1.0 : -0.0;
		if (k % 40 == 3 && k + 1 < n) {
			r[k + 1] = r[k];
			k++;
		}
	}
	/* NaN ends sort anywhere: put them first, where the stream skips them */
	for (size_t k = 0; k < n; k++)
		if (r[k].end != r[k].end)
			r[k].start = -1e9, r[k].end = -1e9 - 1, r[k].tid = 0;
	qsort(r, n, sizeof *r, cmp_range);
	for (size_t k = 0; k < n; k++)
		if (r[k].start == -1e9)
			r[k].end = NAN;
}

TEST(streamed_depths_are_the_definition)
{
	static struct range r[2][1500];
	static struct got g;
	struct store_depth *d = store_depth_new(&(struct store_depth_out){emit, &g});
	struct err e;
	size_t at = 0, wrong = 0, nested = 0;

	CHECK(d != NULL);
	for (int p = 0; p < 2; p++) {
		ranges(r[p], 1500, 777u + (unsigned)p);
		CHECK_EQ(feed(d, p, r[p], 1500), 0);
	}
	CHECK_EQ(store_depth_finish(d, &e), 0); /* streamed, not the table pass */
	CHECK_EQ(g.unsorted, 0);
	for (int p = 0; p < 2; p++)
		for (size_t k = 0; k < 1500; k++) {
			int64_t want = r[p][k].end == r[p][k].end ? depth_of(r[p], 1500, k) : 0;
			int64_t have = 0;
			if (at < g.n && g.profile[at] == p && g.ordinal[at] == (int64_t)k)
				have = g.depth[at++];
			wrong += have != want;
			nested += want > 0;
		}
	CHECK_EQ(at, g.n); /* nothing emitted twice or for another range */
	CHECK_EQ(wrong, 0);
	CHECK(nested > 1000);
	store_depth_free(d);
}

/* Feeds the ranges and returns what store_depth_finish says. */
static int stream_of(const struct range *r, size_t n)
{
	static struct got g;
	struct store_depth *d;
	struct err e;
	int rc;

	memset(&g, 0, sizeof g);
	d = store_depth_new(&(struct store_depth_out){emit, &g});
	CHECK(d != NULL);
	CHECK_EQ(feed(d, 0, r, n), 0);
	rc = store_depth_finish(d, &e);
	store_depth_free(d);
	return rc;
}

TEST(what_the_stream_hands_to_the_table_pass)
{
	/* a later start before an earlier one, on the same thread */
	struct range late[2] = {{2, 3, 0, 0}, {1, 4, 0, 0}};
	/* the same start with a larger end after a smaller one */
	struct range tie[2] = {{1, 2, 1, 0}, {1, 3, 1, 0}};
	/* an end before its start */
	struct range inverted[2] = {{1, 5, 0, 0}, {3, 2, 0, 0}};
	/* out of order on two different threads: each thread is ordered */
	struct range threads[2] = {{2, 3, 0, 0}, {1, 4, 1, 0}};

	CHECK_EQ(stream_of(late, 2), STORE_DEPTH_UNORDERED);
	CHECK_EQ(stream_of(tie, 2), STORE_DEPTH_UNORDERED);
	CHECK_EQ(stream_of(inverted, 2), STORE_DEPTH_UNORDERED);
	CHECK_EQ(stream_of(threads, 2), 0);
}

TEST(a_profile_after_a_later_one)
{
	static struct got g;
	struct range one[1] = {{0, 1, 0, 0}};
	struct store_depth *d = store_depth_new(&(struct store_depth_out){emit, &g});
	struct err e;

	CHECK(d != NULL);
	CHECK_EQ(feed(d, 1, one, 1), 0);
	CHECK_EQ(feed(d, 0, one, 1), 0);
	CHECK_EQ(store_depth_finish(d, &e), STORE_DEPTH_UNORDERED);
	store_depth_free(d);
}

TEST(deep_nesting_beside_crossing_ranges)
{
	/* thread 0 nests N/2 deep; thread 2's ranges each start inside every
	 * earlier one and end after it (depth 0, all open); on thread 1 every
	 * other range starts inside the one before it and either ends with it
	 * (depth 1) or after it (crossing: depth 0) */
	enum { N = 6000 };
	static struct range r[N];
	static struct got g;
	struct store_depth *d = store_depth_new(&(struct store_depth_out){emit, &g});
	struct err e;
	size_t wrong = 0, at = 0;
	int64_t deepest = 0;

	CHECK(d != NULL);
	for (int k = 0; k < N; k++)
		r[k] = k % 3 == 2    ? (struct range){k, 20.0 * N + k, 2, 0}
		     : k % 2 == 0    ? (struct range){k, 10.0 * N - k, 0, 0}
		     : k % 4 == 1    ? (struct range){k, k + 2.5, 1, 0}
		                     : (struct range){k, k + (k % 8 == 3 ? 0.5 : 1.0), 1, 0};
	CHECK_EQ(feed(d, 0, r, N), 0);
	CHECK_EQ(store_depth_finish(d, &e), 0);
	CHECK_EQ(g.unsorted, 0);
	for (int k = 0; k < N; k++) {
		int64_t want = depth_of(r, N, (size_t)k), have = 0;
		if (at < g.n && g.ordinal[at] == k)
			have = g.depth[at++];
		wrong += have != want;
		deepest = want > deepest ? want : deepest;
	}
	CHECK(deepest >= 1000);
	CHECK_EQ(at, g.n);
	CHECK_EQ(wrong, 0);
	store_depth_free(d);
}

int main(void)
{
	RUN(streamed_depths_are_the_definition);
	RUN(what_the_stream_hands_to_the_table_pass);
	RUN(a_profile_after_a_later_one);
	RUN(deep_nesting_beside_crossing_ranges);
	return testlib_done();
}
