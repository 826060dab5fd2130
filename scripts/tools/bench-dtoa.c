/*
 * bench-dtoa: speed of dtoa_shortest (fast) against dtoa_shortest_slow.
 *
 *   bench-dtoa [--count N] [--slow-count M]
 *
 * Two inputs: realistic doubles (run times printed to the nanosecond, like
 * 123.456789012, and two-decimal gauges) and random finite bit patterns.
 * The fast path runs over N doubles of each (default 10,000,000), the slow
 * path over M (default 1,000,000: it is 10-50x slower); prints the best of
 * three runs in CPU ns/double for both and the ratio, and checks that both
 * agree on the slow sample.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/dtoa.h"

static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: steadier on a shared machine */
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Fills n doubles: kind 0 realistic, 1 random finite positive. */
static void fill(double *v, long n, int kind)
{
	uint64_t x = 0x853c49e6748fea9bULL + (uint64_t)kind;
	for (long k = 0; k < n; k++) {
		uint64_t r = xs(&x);
		if (kind == 0) {
			v[k] = k % 4 == 3 ? (double)(r % 10001) / 100.0 : (double)(r % 900000000000ULL) / 1e9;
			if (v[k] == 0)
				v[k] = 1.5;
		} else {
			double d;
			do {
				r = xs(&x) & ~(1ULL << 63);
				memcpy(&d, &r, sizeof d);
			} while (!isfinite(d) || d == 0);
			v[k] = d;
		}
	}
}

static double run(const double *v, long n, int slow, unsigned long *sum)
{
	char d[17];
	int decpt;
	double t0 = now();
	for (long k = 0; k < n; k++) {
		int len = slow ? dtoa_shortest_slow(v[k], d, &decpt) : dtoa_shortest(v[k], d, &decpt);
		*sum += (unsigned long)(len + decpt + d[0]);
	}
	return (now() - t0) * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	long n = 10000000, m = 1000000;
	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--count") && k + 1 < argc)
			n = atol(argv[++k]);
		else if (!strcmp(argv[k], "--slow-count") && k + 1 < argc)
			m = atol(argv[++k]);
		else {
			fprintf(stderr, "usage: bench-dtoa [--count N] [--slow-count M]\n");
			return strcmp(argv[k], "--help") ? 2 : 0;
		}
	}
	if (n < 1 || m < 1) {
		fprintf(stderr, "bench-dtoa: counts must be positive\n");
		return 2;
	}
	if (m > n)
		m = n;
	double *v = malloc((size_t)n * sizeof *v);
	if (!v) {
		fprintf(stderr, "bench-dtoa: out of memory\n");
		return 1;
	}
	static const char *names[] = {"realistic", "random"};
	unsigned long sum = 0;
	int rc = 0;
	for (int kind = 0; kind < 2; kind++) {
		fill(v, n, kind);
		double fast = run(v, n, 0, &sum), slow = run(v, m, 1, &sum);
		for (int rep = 0; rep < 2; rep++) { /* best of three: the machine is shared */
			double f2 = run(v, n, 0, &sum), s2 = run(v, m, 1, &sum);
			fast = f2 < fast ? f2 : fast, slow = s2 < slow ? s2 : slow;
		}
		long bad = 0;
		for (long k = 0; k < m; k++) {
			char a[17], b[17];
			int pa, pb, na = dtoa_shortest(v[k], a, &pa), nb = dtoa_shortest_slow(v[k], b, &pb);
			bad += na != nb || pa != pb || memcmp(a, b, (size_t)na) != 0;
		}
		printf("%-9s fast %7.1f ns/double (%ld)  slow %7.1f ns/double (%ld)  ratio %.1fx%s\n",
		       names[kind], fast, n, slow, m, slow / fast, bad ? "  MISMATCHES" : "");
		rc |= bad != 0;
	}
	printf("# checksum %lu\n", sum);
	free(v);
	return rc;
}
