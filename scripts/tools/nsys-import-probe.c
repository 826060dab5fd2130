/*
 * nsys-import-probe: run the Nsight importer alone (no report written) and
 * print one JSON line: ranges, samples, seconds, ranges per second.  Used
 * by scripts/bench/nsys to separate the importer's cost from the build's.
 *
 *   nsys-import-probe [--max-profile-events N] EXPORT_OR_DIR...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "ingest/nsys.h"

struct counts {
	uint64_t events, samples, gpu;
};

static int on_gpu(void *ctx, int64_t p, int64_t o, const struct row_gpu *r,
                  struct err *e)
{
	(void)p;
	(void)o;
	(void)r;
	(void)e;
	((struct counts *)ctx)->gpu++;
	return 0;
}

static int on_event(void *ctx, int64_t p, int64_t o,
                    const struct row_event *r, struct err *e)
{
	(void)p;
	(void)o;
	(void)r;
	(void)e;
	((struct counts *)ctx)->events++;
	return 0;
}

static int on_sample(void *ctx, int64_t p, int64_t o,
                     const struct row_sample *r, struct err *e)
{
	(void)p;
	(void)o;
	(void)r;
	(void)e;
	((struct counts *)ctx)->samples++;
	return 0;
}

int main(int argc, char **argv)
{
	struct counts c = {0, 0, 0};
	struct row_sink sink = {.ctx = &c, .event = on_event,
	                             .sample = on_sample, .gpu = on_gpu};
	struct nsys_options o = {.max_events = -1, .job = "probe"};
	struct timespec a, b;
	struct err e;
	json_t *doc = NULL;
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "--max-profile-events")) {
		o.max_events = strtoll(argv[2], NULL, 10);
		first = 3;
	}
	if (first >= argc) {
		fputs("usage: nsys-import-probe [--max-profile-events N] "
		      "EXPORT_OR_DIR...\n", stderr);
		return 2;
	}
	err_clear(&e);
	clock_gettime(CLOCK_MONOTONIC, &a);
	int rc = nsys_import_all((const char *const *)argv + first,
	                         (size_t)(argc - first), &doc, &o, &sink, NULL,
	                         &e);
	clock_gettime(CLOCK_MONOTONIC, &b);
	json_decref(doc);
	if (rc) {
		fprintf(stderr, "nsys-import-probe: %s\n", e.msg);
		return 1;
	}
	double s = (double)(b.tv_sec - a.tv_sec) +
	           (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	struct buf out;
	buf_init(&out, 0);
	buf_puts(&out, "{\"ranges\":");
	jsonout_int(&out, (int64_t)c.events);
	buf_puts(&out, ",\"samples\":");
	jsonout_int(&out, (int64_t)c.samples);
	buf_puts(&out, ",\"gpu_rows\":");
	jsonout_int(&out, (int64_t)c.gpu);
	buf_puts(&out, ",\"seconds\":");
	jsonout_real(&out, s);
	buf_puts(&out, ",\"ranges_per_second\":");
	jsonout_real(&out, s > 0 ? (double)c.events / s : 0.0);
	buf_puts(&out, "}\n");
	fwrite(out.data, 1, out.len, stdout);
	buf_free(&out);
	return 0;
}
