/*
 * query-timer: in-process timings of the query engine on one dataset (the
 * warm path a daemon runs: the dataset is opened once).
 *
 *   query-timer REPORT [--repeat N] [--kind KIND]
 *   query-timer REPORT [--repeat N] --params JSON [--params JSON]...
 *
 * Prints one line per figure: the median engine time of summary and of
 * every kind with default parameters (request and lifecycle on the first
 * request, timeline with 1-second buckets, sql counting the requests),
 * and for nsys the median over
 * 1-second windows at 10 positions of one profile of (a) the full nsys
 * query, (b) the indexed overlap scan alone and (c) a full scan of the
 * same profile's events filtered by the same window, with the ratio b/c.
 * A kind that fails (sql on an evidence document) is named on stderr and
 * makes the exit status 1; the other figures are still printed.
 *
 * With --params, times each query given by its RPC parameters (a JSON
 * object, e.g. {"kind":"nsys","limit":5}) with the build-time summaries
 * and without them (dataset_set_summaries), checks that both answers are
 * byte-identical, and prints one line per query: the two medians and
 * their ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "query/dataset.h"
#include "base/err.h"
#include "query/query.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds one query took, or -1 (message on stderr) when it failed. */
static double time_query(struct dataset *ds, const struct query_params *p,
                         size_t *bytes)
{
	struct buf out;
	struct err e;
	double t0 = now(), t;
	buf_init(&out, 0);
	if (query_run(ds, p, &out, &e)) {
		fprintf(stderr, "query-timer: %s: %s\n", p->kind, e.msg);
		buf_free(&out);
		return -1;
	}
	t = now() - t0;
	*bytes = out.len;
	buf_free(&out);
	return t;
}

struct counter {
	double start, end;
	long n;
};

static int count_any(void *ctx, int64_t ordinal,
                     const struct row_event *row)
{
	struct counter *c = ctx;
	(void)ordinal;
	(void)row;
	c->n++;
	return 0;
}

static int count_filtered(void *ctx, int64_t ordinal,
                          const struct row_event *row)
{
	struct counter *c = ctx;
	(void)ordinal;
	if (row->start <= c->end && row->end >= c->start)
		c->n++;
	return 0;
}

/*
 * The id of the dataset's first request (in the order of the requests
 * kind), asked through the query engine as any client would: the catalog
 * tree of a cache no longer holds the requests.  Returns a malloc'd string
 * the caller frees, or NULL (message on stderr) when there is none.
 */
static char *first_request_id(struct dataset *ds)
{
	struct query_params p;
	struct buf out;
	struct err e;
	json_t *j = NULL;
	char *id = NULL;

	query_params_init(&p);
	p.kind = "requests";
	p.limit = 1;
	buf_init(&out, 0);
	if (query_run(ds, &p, &out, &e))
		fprintf(stderr, "query-timer: requests: %s\n", e.msg);
	else if (!(j = json_loadb(out.data, out.len, 0, NULL)))
		fputs("query-timer: requests: unreadable answer\n", stderr);
	else {
		const char *s = json_string_value(json_object_get(
			json_array_get(json_object_get(j, "items"), 0), "id"));
		if (s)
			id = strdup(s);
		else
			fputs("query-timer: the dataset has no request\n",
			      stderr);
	}
	json_decref(j);
	buf_free(&out);
	return id;
}

/* Times one query given as RPC JSON with summaries on and off. */
static int compare_summaries(struct dataset *ds, const char *text, int repeat)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	struct query_params p;
	struct buf out[2];
	struct err e;
	double *t = malloc(sizeof(double) * (size_t)repeat), med[2];
	int runs[2] = {repeat, repeat < 3 ? repeat : 3}, rc = 0;

	if (json_is_object(j)) {
		const char *key;
		json_t *v;
		json_object_foreach(j, key, v) {
			if (!qparam_by_name(key)) {
				printf("%-58s  fails: this build has no parameter "
				       "%s\n", text, key);
				json_decref(j);
				free(t);
				return 1;
			}
		}
	}
	if (!j || !t || query_params_from_json(j, &p, &e)) {
		printf("%-58s  invalid parameters: %s\n", text,
		       j ? e.msg : je.text);
		json_decref(j);
		free(t);
		return 1;
	}
	for (int mode = 0; mode < 2; mode++) {
		dataset_set_summaries(ds, mode == 0);
		buf_init(&out[mode], 0);
		for (int k = 0; k < runs[mode]; k++) {
			double t0 = now();
			buf_reset(&out[mode]);
			if (query_run(ds, &p, &out[mode], &e)) {
				printf("%-58s  fails: %s\n", text, e.msg);
				rc = 1;
				goto out;
			}
			t[k] = now() - t0;
		}
		med[mode] = median(t, runs[mode]);
	}
	if (out[0].len != out[1].len ||
	    memcmp(out[0].data, out[1].data, out[0].len)) {
		printf("%-58s  DIFFERENT answers with and without summaries\n",
		       text);
		rc = 1;
		goto out;
	}
	printf("%-58s  %9.3f ms  without summaries %9.3f ms  (%.1fx)\n",
	       text, med[0] * 1e3, med[1] * 1e3, med[1] / med[0]);
out:
	query_params_free(&p);
	dataset_set_summaries(ds, 1);
	buf_free(&out[0]);
	buf_free(&out[1]);
	json_decref(j);
	free(t);
	return rc;
}

int main(int argc, char **argv)
{
	struct dataset *ds;
	struct err e;
	const char *path = NULL, *only = NULL;
	const char **params = calloc((size_t)argc, sizeof *params);
	int repeat = 21, nparams = 0, status = 0;
	double duration;
	const json_t *profiles;
	char *request_id;
	int64_t profile = 0;
	size_t bytes;

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--repeat") && k + 1 < argc)
			repeat = atoi(argv[++k]);
		else if (!strcmp(argv[k], "--kind") && k + 1 < argc)
			only = argv[++k];
		else if (!strcmp(argv[k], "--params") && k + 1 < argc)
			params[nparams++] = argv[++k];
		else
			path = argv[k];
	}
	if (!path || repeat < 1) {
		fputs("usage: query-timer REPORT [--repeat N] [--kind KIND | "
		      "--params JSON...]\n",
		      stderr);
		return 2;
	}
	{
		double t0 = now();
		if (dataset_open(path, &ds, &e)) {
			fprintf(stderr, "query-timer: %s\n", e.msg);
			return 1;
		}
		printf("open: %.1f ms\n", (now() - t0) * 1e3);
	}
	if (nparams) {
		int bad = 0;
		printf("%-58s  %12s  %31s\n", "query (RPC parameters)",
		       "median", "");
		for (int k = 0; k < nparams; k++)
			bad |= compare_summaries(ds, params[k], repeat);
		dataset_close(ds);
		free(params);
		return bad;
	}
	free(params);
	duration = json_number_value(json_object_get(
		json_object_get(dataset_catalog(ds), "meta"), "duration"));
	profiles = json_object_get(dataset_catalog(ds), "profiles");
	/* the profile with the most events */
	{
		int64_t best = -1;
		for (size_t k = 0; k < json_array_size(profiles); k++) {
			json_int_t n = json_integer_value(json_object_get(
				json_array_get(profiles, k), "event_count"));
			if (n > best) {
				best = n;
				profile = (int64_t)k;
			}
		}
		printf("nsys profile: %lld (%lld events)\n", (long long)profile,
		       (long long)best);
	}
	request_id = first_request_id(ds);
	for (size_t ki = 0; ki < query_kind_count; ki++) {
		const char *const *kind = &query_kind_table[ki].name;
		struct query_params p;
		double *t;
		int n = !strcmp(*kind, "summary") ? repeat * 10 : repeat;
		int failed = 0;
		/* the kinds that answer about one request: the others run
		 * with default parameters (a request would join them) */
		int per_request = !strcmp(*kind, "request") ||
		                  !strcmp(*kind, "lifecycle");
		if ((only && strcmp(only, *kind)) ||
		    (per_request && !request_id))
			continue;
		query_params_init(&p);
		p.kind = *kind;
		if (per_request)
			p.request_id = request_id;
		if (!strcmp(*kind, "timeline")) { /* its one required value */
			p.has_bucket = 1;
			p.bucket = 1;
		}
		if (!strcmp(*kind, "sql"))
			p.sql = "SELECT count(*) FROM requests";
		if (!only && (!strcmp(*kind, "nsys") || !strcmp(*kind, "metrics") ||
		              !strcmp(*kind, "cpu")))
			n = 3; /* whole-run scans: a few are enough */
		if (!(t = malloc(sizeof(double) * (size_t)n))) {
			fputs("query-timer: out of memory\n", stderr);
			return 1;
		}
		for (int k = 0; k < n && !failed; k++)
			failed = (t[k] = time_query(ds, &p, &bytes)) < 0;
		if (failed) /* said on stderr; the other kinds still run */
			status = 1;
		else
			printf("engine %-13s median %9.3f ms (%d runs, %zu "
			       "bytes)\n",
			       *kind, median(t, n) * 1e3, n, bytes);
		free(t);
	}
	free(request_id);
	if (!only || !strcmp(only, "nsys")) {
		double tq[10], ti[10], tf[10];
		long hits = 0;
		for (int k = 0; k < 10; k++) {
			struct query_params p;
			struct row_window w;
			struct counter ci, cf;
			double best_q = 1e9, best_i = 1e9, best_f = 1e9;
			memset(&w, 0, sizeof w); /* narrow: the indexed scan */
			w.start = duration * (k + 0.5) / 10.5;
			w.end = w.start + 1.0;
			query_params_init(&p);
			p.kind = "nsys";
			p.has_profile = p.has_start = p.has_end = 1;
			p.profile = profile;
			p.start = w.start;
			p.end = w.end;
			for (int r = 0; r < 5; r++) {
				double t0, t;
				if ((t = time_query(ds, &p, &bytes)) < 0) {
					dataset_close(ds);
					return 1;
				}
				best_q = t < best_q ? t : best_q;
				ci = (struct counter){w.start, w.end, 0};
				t0 = now();
				dataset_events(ds, profile, &w, count_any, &ci, &e);
				t = now() - t0;
				best_i = t < best_i ? t : best_i;
			}
			for (int r = 0; r < 2; r++) {
				double t0 = now(), t;
				cf = (struct counter){w.start, w.end, 0};
				dataset_events(ds, profile, NULL, count_filtered, &cf,
				               &e);
				t = now() - t0;
				best_f = t < best_f ? t : best_f;
			}
			if (ci.n != cf.n) {
				fprintf(stderr,
				        "query-timer: indexed scan found %ld, full "
				        "scan %ld in [%g, %g]\n",
				        ci.n, cf.n, w.start, w.end);
				return 1;
			}
			hits += ci.n;
			tq[k] = best_q;
			ti[k] = best_i;
			tf[k] = best_f;
		}
		{
			double mq = median(tq, 10), mi = median(ti, 10),
			       mf = median(tf, 10);
			printf("nsys 1-second windows x10: query median %.3f ms; "
			       "indexed scan %.3f ms vs full scan %.3f ms: "
			       "ratio %.4f (%.0fx faster); %ld matches\n",
			       mq * 1e3, mi * 1e3, mf * 1e3, mi / mf, mf / mi,
			       hits);
		}
	}
	dataset_close(ds);
	return status;
}
