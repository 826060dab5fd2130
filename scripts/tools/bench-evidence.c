/*
 * bench-evidence: throughput of the evidence reader alone.
 *
 *   bench-evidence [--repeat N] FILE
 *
 * Reads FILE (evidence JSON, gzip or a legacy report directory) N times
 * (default 1) through common/evidence with a sink that only counts rows,
 * and prints one JSON line per run: input bytes, rows, wall and CPU
 * seconds (both threads: the gzip inflater runs beside the parser), MB/s
 * of input and of wall time, rows per second and peak RSS.  Make the big
 * input with `gen-capture --preset large` (plain and --gzip).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/buf.h"
#include "ingest/evidence.h"
#include "base/jsonout.h"

struct count {
	uint64_t rows;
	double checksum; /* keeps the row fields live */
};

static int on_event(void *ctx, int64_t p, int64_t k, const struct row_event *r,
                    struct err *e)
{
	struct count *c = ctx;
	(void)p, (void)k, (void)e;
	c->rows++;
	c->checksum += r->end - r->start;
	return 0;
}

static int on_sample(void *ctx, int64_t p, int64_t k, const struct row_sample *r,
                     struct err *e)
{
	struct count *c = ctx;
	(void)p, (void)k, (void)e;
	c->rows++;
	c->checksum += r->time;
	return 0;
}

static int on_point(void *ctx, int64_t s, int64_t k, const struct row_point *r,
                    struct err *e)
{
	struct count *c = ctx;
	(void)s, (void)k, (void)e;
	c->rows++;
	c->checksum += r->time;
	return 0;
}

static double now(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fputs("usage: bench-evidence [--repeat N] FILE\n", f);
}

int main(int argc, char **argv)
{
	const char *file = NULL;
	int repeat = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			repeat = atoi(argv[++i]);
		} else if (argv[i][0] != '-' && !file) {
			file = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!file || repeat < 1) {
		usage(stderr);
		return 2;
	}
	for (int r = 0; r < repeat; r++) {
		struct count c = { 0, 0 };
		struct row_sink sink = { &c, on_event, on_sample, on_point, NULL, NULL, NULL, NULL };
		struct evstats st;
		json_t *cat = NULL;
		struct err e;
		double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);

		if (evidence_read(file, &sink, &cat, &st, &e)) {
			fprintf(stderr, "bench-evidence: %s\n", e.msg);
			return 1;
		}
		double wall = now(CLOCK_MONOTONIC) - w0;
		double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);

		struct buf b;
		buf_init(&b, 0);
		buf_puts(&b, "{\"file\":");
		jsonout_cstr(&b, file);
		buf_puts(&b, ",\"input_bytes\":");
		jsonout_int(&b, (int64_t)st.input_bytes);
		buf_puts(&b, ",\"rows\":");
		jsonout_int(&b, (int64_t)c.rows);
		buf_puts(&b, ",\"wall_s\":");
		jsonout_real(&b, wall);
		buf_puts(&b, ",\"cpu_s\":");
		jsonout_real(&b, cpu);
		buf_puts(&b, ",\"input_mb_per_wall_s\":");
		jsonout_real(&b, (double)st.input_bytes / 1e6 / wall);
		buf_puts(&b, ",\"input_mb_per_cpu_s\":");
		jsonout_real(&b, (double)st.input_bytes / 1e6 / cpu);
		buf_puts(&b, ",\"rows_per_wall_s\":");
		jsonout_real(&b, (double)c.rows / wall);
		buf_puts(&b, ",\"peak_rss_kib\":");
		jsonout_int(&b, ru.ru_maxrss);
		buf_puts(&b, "}\n");
		fwrite(b.data, 1, b.len, stdout);
		buf_free(&b);
		json_decref(cat);
		evstats_free(&st);
	}
	return 0;
}
