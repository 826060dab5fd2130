/* build: the report pipeline (see build.h). */
#include "report/build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/docwrite.h"
#include "ingest/evidence.h"
#include "base/fswalk.h"
#include "report/manifest.h"
#include "ingest/nsys.h"
#include "report/publish.h"
#include "ingest/sink_tee.h"
#include "store/store_write.h"
#include "report/webreport.h"
#include "query/dataset.h"
#include "query/query.h"

#define DATA_SQLITE "trace-data.sqlite"
#define DATA_DOCUMENT "trace-data.json.gz"
/* libdeflate level 1 in members of 1 MiB: on the large capture's 512-MB
 * document the phase takes 6.2 s where zlib level 6 took 27.6 s, for 3%
 * more bytes (doc/performance.md "Shard compression") */
#define DOCUMENT_GZIP_LEVEL 1

/* Everything one build holds; released by build_state_free. */
struct build_state {
	const struct build_options *o;
	struct publish *pub;
	struct store_writer *store;
	struct webreport *web; /* detail shards + index.html */
	struct webreport_stats webstats;
	struct sink_tee tee;
	json_t *catalog;
	json_t *warnings; /* added by this build, for the user */
	struct evstats stats;
	char generation[STORE_GENERATION_LEN + 1];
	char path[4096]; /* scratch for staging paths */
	int phases;            /* DSIGHT_BUILD_PHASES set: print phase times */
	double phase_wall, phase_cpu; /* at the last mark */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* DSIGHT_BUILD_PHASES=1 (doc/performance.md): one line per phase on stderr
 * with the wall and CPU seconds (all threads) since the previous mark and
 * the CLOCK_MONOTONIC time it ended (scripts/bench/profile-build lines
 * perf samples up with it). */
static void phase_mark(struct build_state *s, const char *name)
{
	double w, c;

	if (!s->phases)
		return;
	w = now_seconds();
	c = cpu_seconds();
	if (name)
		fprintf(stderr, "dsight build phase %-8s wall %7.3f s  cpu %7.3f s"
		        "  ends at %.6f\n", name, w - s->phase_wall,
		        c - s->phase_cpu, w);
	s->phase_wall = w;
	s->phase_cpu = c;
}

static void progress(const struct build_options *o, enum build_phase ph,
                     uint64_t done, uint64_t total)
{
	if (o->progress)
		o->progress(o->progress_ctx, ph, done, total);
}

static void on_read_progress(void *ctx, uint64_t done, uint64_t total)
{
	progress(ctx, BUILD_READ, done, total);
}

static int check_cancel(const struct build_options *o, struct err *e)
{
	if (o->cancel && *o->cancel)
		return err_set(e, ERR_DATA,
		               "interrupted; the previous report is unchanged");
	return 0;
}

static int cancel_event(void *ctx, int64_t p, int64_t k,
                        const struct row_event *row, struct err *e)
{
	(void)p;
	(void)k;
	(void)row;
	return check_cancel(ctx, e);
}

static int cancel_sample(void *ctx, int64_t p, int64_t k,
                         const struct row_sample *row, struct err *e)
{
	(void)p;
	(void)k;
	(void)row;
	return check_cancel(ctx, e);
}

static int cancel_point(void *ctx, int64_t p, int64_t k,
                        const struct row_point *row, struct err *e)
{
	(void)p;
	(void)k;
	(void)row;
	return check_cancel(ctx, e);
}

static int cancel_gpu(void *ctx, int64_t p, int64_t k,
                      const struct row_gpu *row, struct err *e)
{
	(void)p;
	(void)k;
	(void)row;
	return check_cancel(ctx, e);
}

static int cancel_element(void *ctx, enum evidence_collection c, int64_t k,
                          const json_t *el, struct err *e)
{
	(void)c;
	(void)k;
	(void)el;
	return check_cancel(ctx, e);
}

static const char *staged(struct build_state *s, const char *rel)
{
	snprintf(s->path, sizeof s->path, "%s/%s", publish_staging(s->pub), rel);
	return s->path;
}

/*
 * The row writers: every sink added to the tee receives each event, sample
 * and point once, in document order.  A new per-row output (e.g. detail
 * shards) adds its sink here.
 */
static int open_row_writers(struct build_state *s, struct err *e)
{
	struct row_sink sink;

	if (store_write_open(staged(s, DATA_SQLITE), &s->store, e))
		return e->code;
	store_write_cancel(s->store, s->o->cancel);
	store_write_sink(s->store, &sink);
	sink_tee_add(&s->tee, &sink);

	if (webreport_open(&s->web, publish_staging(s->pub), s->o->single_file,
	                   s->o->max_part_bytes, 0, e))
		return e->code;
	webreport_cancel(s->web, s->o->cancel);
	webreport_sink(s->web, &sink);
	sink_tee_add(&s->tee, &sink);

	memset(&sink, 0, sizeof sink);
	sink.ctx = (void *)s->o;
	sink.progress = on_read_progress;
	sink.cancel = s->o->cancel;
	if (s->o->cancel) {
		sink.event = cancel_event;
		sink.sample = cancel_sample;
		sink.point = cancel_point;
		sink.gpu = cancel_gpu;
		sink.element = cancel_element;
	}
	sink_tee_add(&s->tee, &sink);
	return 0;
}

/* Appends the --nsys-sqlite exports (doc/nsight-import.md) to the catalog, or makes
 * an Nsight-only one. */
static int import_nsys(struct build_state *s, const struct row_sink *tee,
                       struct err *e)
{
	const struct build_options *o = s->o;
	struct nsys_options no;
	char job[256];
	size_t n = strlen(o->output);

	while (n > 1 && o->output[n - 1] == '/')
		n--;
	const char *base = o->output + n;
	while (base > o->output && base[-1] != '/')
		base--;
	snprintf(job, sizeof job, "%.*s", (int)(o->output + n - base), base);
	no.max_events = o->max_profile_events;
	no.job = o->job ? o->job : job;
	size_t before = json_array_size(json_object_get(
		json_object_get(s->catalog, "meta"), "warnings"));
	if (nsys_import_all(o->nsys_paths, o->nnsys, &s->catalog, &no, tee,
	                    &s->stats, e))
		return e->code;
	json_t *all = json_object_get(json_object_get(s->catalog, "meta"),
	                              "warnings");
	s->warnings = json_array();
	for (size_t i = before; s->warnings && i < json_array_size(all); i++)
		json_array_append(s->warnings, json_array_get(all, i));
	return 0;
}

/* Streams every source into the row writers and leaves the catalog in
 * s->catalog. */
static int read_sources(struct build_state *s, struct err *e)
{
	const struct build_options *o = s->o;
	struct row_sink tee;

	sink_tee_sink(&s->tee, &tee);
	if (o->input &&
	    evidence_read(o->input, &tee, &s->catalog, &s->stats, e))
		return e->code;
	if (o->nnsys && import_nsys(s, &tee, e))
		return e->code;
	if (!s->catalog)
		return err_set(e, ERR_USAGE, "no evidence to build from");
	return 0;
}

/*
 * Files derived from the finished store and catalog, written into the
 * staging directory before the manifest lists them: the detail shards
 * (already streamed into detail/) are flushed, and index.html written
 * (webreport).
 */
static int write_extra_files(struct build_state *s, struct err *e)
{
	if (webreport_finish(s->web, s->catalog, staged(s, DATA_SQLITE),
	                     &s->webstats, e))
		return e->code;
	if (s->webstats.oversized) {
		if (!s->warnings)
			s->warnings = json_array();
		json_array_append_new(s->warnings,
		                      json_string(s->webstats.warning));
	}
	if (s->webstats.catalog_warning[0]) {
		if (!s->warnings)
			s->warnings = json_array();
		json_array_append_new(s->warnings,
		                      json_string(s->webstats.catalog_warning));
	}
	return 0;
}

/* --single-file: the whole document replaces the SQLite cache. */
static int write_single_file(struct build_state *s, struct err *e)
{
	char db[4096];

	snprintf(db, sizeof db, "%s", staged(s, DATA_SQLITE));
	if (docwrite_gzip(db, s->catalog, staged(s, DATA_DOCUMENT),
	                  DOCUMENT_GZIP_LEVEL, NULL, e))
		return e->code;
	if (unlink(db))
		return err_sys(e, ERR_DATA, "cannot remove %s", db);
	return 0;
}

/* The catalog row went over 32 MiB: its collections live only in dsight's
 * extension tables (store_ext.h), which other schema-v1 readers ignore.
 * (Not said for --single-file, whose report keeps no SQLite cache.) */
static int warn_external(struct build_state *s,
                         const struct store_write_stats *ws, struct err *e)
{
	char msg[400];
	snprintf(msg, sizeof msg,
	         "the catalog with its %llu requests would make a %.1f MiB "
	         "catalog row (over 32 MiB): the requests, sessions, server spans "
	         "and iterations are kept only in dsight's extension tables, so "
	         "other schema-v1 readers of trace-data.sqlite will see no "
	         "requests",
	         (unsigned long long)s->stats.elements[EVIDENCE_REQUESTS],
	         (double)ws->whole_catalog_bytes / 1048576.0);
	if (!s->warnings)
		s->warnings = json_array();
	if (!s->warnings ||
	    json_array_append_new(s->warnings, json_string(msg)))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

struct size_ctx {
	const char *root;
	uint64_t bytes;
	size_t files;
};

static int add_size(void *ctx, const char *rel, enum fswalk_type type,
                    struct err *e)
{
	struct size_ctx *c = ctx;
	char path[4096];
	struct stat st;

	(void)e;
	if (type != FSWALK_FILE)
		return 0;
	snprintf(path, sizeof path, "%s/%s", c->root, rel);
	if (lstat(path, &st) == 0)
		c->bytes += (uint64_t)st.st_size;
	c->files++;
	return 0;
}

static void build_state_free(struct build_state *s)
{
	store_write_close(s->store);
	webreport_free(s->web);
	publish_end(s->pub);
	json_decref(s->catalog);
	json_decref(s->warnings);
	evstats_free(&s->stats);
}

/* The last line of defence before publishing: the staged report must be
 * one the reader opens and answers a summary from, with a manifest that a
 * later build of the same output accepts.  Otherwise nothing is published
 * and the previous report stays. */
/* A read of the staged document keeps no catalog element (the reader
 * validates and counts the rows, and keeps none without a row callback). */
static int drop_element(void *ctx, enum evidence_collection c,
                        int64_t ordinal, const json_t *elem, struct err *e)
{
	(void)ctx, (void)c, (void)ordinal, (void)elem, (void)e;
	return 0;
}

/*
 * A --single-file report's document read back the way a query reads it,
 * every row validated but none kept (loading it as a dataset held every
 * row: 720 MiB for the large capture), and its rows and catalog elements
 * counted against what the build wrote.
 */
static int verify_document(struct build_state *s,
                           const struct store_write_stats *ws, struct err *e)
{
	const uint64_t want[3] = {ws->events, ws->samples, ws->points};
	static const char *const what[3] = {"NVTX ranges", "CPU samples",
	                                    "metric points"};
	struct row_sink sink;
	struct evstats st;
	json_t *catalog = NULL;
	int rc;

	memset(&sink, 0, sizeof sink);
	memset(&st, 0, sizeof st);
	sink.element = drop_element;
	sink.cancel = s->o->cancel;
	rc = evidence_read(staged(s, DATA_DOCUMENT), &sink, &catalog, &st, e);
	json_decref(catalog);
	const uint64_t n[3] = {st.events, st.samples, st.points};
	for (int k = 0; !rc && k < 3; k++)
		if (n[k] != want[k])
			rc = err_set(e, ERR_DATA, "%s holds %llu %s, not the %llu "
			             "written", DATA_DOCUMENT, (unsigned long long)n[k],
			             what[k], (unsigned long long)want[k]);
	for (int k = 0; !rc && k < EVIDENCE_NCOLLECTIONS; k++)
		if (st.elements[k] != s->stats.elements[k])
			rc = err_set(e, ERR_DATA, "%s holds %llu catalog elements of "
			             "collection %d, not the %llu written",
			             DATA_DOCUMENT, (unsigned long long)st.elements[k],
			             k, (unsigned long long)s->stats.elements[k]);
	evstats_free(&st);
	return rc;
}

/* The staged report reads back: its files' hashes, then a summary query
 * (a --single-file report: its document, row by row). */
static int verify_staged(struct build_state *s,
                         const struct store_write_stats *ws, struct err *e)
{
	struct dataset *ds = NULL;
	struct query_params qp;
	struct buf out;
	int rc;

	/* tests only: damage one staged file to exercise this defence */
	const char *damage = getenv("DSIGHT_TEST_DAMAGE_STAGED");
	if (damage && *damage && !strchr(damage, '/') && truncate(staged(s, damage), 1))
		return err_sys(e, ERR_DATA, "DSIGHT_TEST_DAMAGE_STAGED");
	if ((rc = publish_verify_staged(s->pub, e)))
		goto fail;
	if (s->o->single_file) {
		if (!(rc = verify_document(s, ws, e)))
			return 0;
		goto fail;
	}
	if ((rc = dataset_open(publish_staging(s->pub), &ds, e)))
		goto fail;
	query_params_init(&qp);
	buf_init(&out, 0);
	rc = query_run(ds, &qp, &out, e);
	buf_free(&out);
	dataset_close(ds);
	if (!rc)
		return 0;
fail:
	err_prefix(e, "refusing to publish: the new report does not read back "
	              "(the previous report is unchanged)");
	return rc == ERR_NOMEM ? rc : ERR_DATA;
}

int build_run(const struct build_options *o, struct build_result *r,
              struct err *e)
{
	struct build_state s;
	struct manifest_info mi;
	struct size_ctx sz;
	const char *inputs[64];
	size_t ninputs = 0;
	double t0 = now_seconds();
	int rc;

	memset(r, 0, sizeof *r);
	memset(&s, 0, sizeof s);
	s.o = o;
	s.phases = getenv("DSIGHT_BUILD_PHASES") && *getenv("DSIGHT_BUILD_PHASES");
	phase_mark(&s, NULL);
	sink_tee_init(&s.tee);
	if (!o->input && !o->nnsys)
		return err_set(e, ERR_USAGE, "no evidence given: name an evidence document or --nsys-sqlite exports");
	if (o->input)
		inputs[ninputs++] = o->input;
	for (size_t i = 0; i < o->nnsys && ninputs < 64; i++)
		inputs[ninputs++] = o->nsys_paths[i];
	if (o->nnsys >= 64)
		return err_set(e, ERR_USAGE, "too many --nsys-sqlite paths (at most 63)");

	if ((rc = publish_begin(o->output, inputs, ninputs, &s.pub, e)) ||
	    (rc = store_generation_new(s.generation, e)) ||
	    (rc = open_row_writers(&s, e)) || (rc = read_sources(&s, e)) ||
	    (rc = check_cancel(o, e)))
		goto out;
	phase_mark(&s, "read");

	progress(o, BUILD_INDEX, 0, 0);
	/* The name index is built while the web files are written (it is
	 * the one the web phase does not read); --single-file's cache is
	 * read once and removed, so it gets none. */
	if ((rc = store_write_finish(s.store, s.catalog, s.generation, e)) ||
	    (rc = check_cancel(o, e)) ||
	    (rc = o->single_file ? store_write_settle(s.store, 1, e)
	                         : store_write_index_begin(s.store, e)))
		goto out;
	phase_mark(&s, "store");
	struct store_write_stats ws;
	store_write_get_stats(s.store, &ws);
	if (ws.external && !o->single_file && (rc = warn_external(&s, &ws, e)))
		goto out;

	progress(o, BUILD_WRITE, 0, 0);
	if ((rc = write_extra_files(&s, e)))
		goto out;
	phase_mark(&s, "web");
	if (!o->single_file && ((rc = store_write_settle(s.store, 0, e)) ||
	                        (rc = check_cancel(o, e))))
		goto out;
	store_write_close(s.store);
	s.store = NULL;
	if (!o->single_file)
		phase_mark(&s, "index");
	if (o->single_file && (rc = write_single_file(&s, e)))
		goto out;
	if (o->single_file)
		phase_mark(&s, "document");
	mi.delivery = o->single_file ? MANIFEST_DELIVERY_EMBEDDED
	                             : MANIFEST_DELIVERY_STATIC;
	mi.generation = s.generation;
	mi.data_file = o->single_file ? DATA_DOCUMENT : DATA_SQLITE;
	mi.elements = s.stats.elements;
	mi.cancel = o->cancel;
	if ((rc = manifest_write(publish_staging(s.pub), s.catalog, &mi, e)))
		goto out;
	sz.root = publish_staging(s.pub);
	sz.bytes = 0;
	sz.files = 0;
	if ((rc = fswalk(sz.root, add_size, &sz, e)))
		goto out;
	phase_mark(&s, "manifest");

	if ((rc = check_cancel(o, e)) || (rc = verify_staged(&s, &ws, e)) ||
	    (rc = check_cancel(o, e)))
		goto out;
	phase_mark(&s, "verify");
	progress(o, BUILD_PUBLISH, 0, 0); /* from here on the build completes */
	if ((rc = publish_commit(s.pub, e)))
		goto out;
	phase_mark(&s, "publish");

	r->output = strdup(publish_output(s.pub));
	memcpy(r->generation, s.generation, sizeof r->generation);
	r->counts = manifest_counts(s.catalog, s.stats.elements);
	r->events = ws.events;
	r->samples = ws.samples;
	r->points = ws.points;
	r->bytes = sz.bytes;
	r->files = sz.files;
	r->shards = s.webstats.shards;
	r->html_bytes = s.webstats.html_bytes;
	r->parts = s.webstats.parts;
	r->seconds = now_seconds() - t0;
	r->warnings = s.warnings ? json_incref(s.warnings) : json_array();
	if (!r->output || !r->counts) {
		build_result_free(r);
		rc = err_set(e, ERR_NOMEM, "out of memory");
	}
out:
	/* whatever stopped first (a row, an SQLite statement, a hash), a
	 * signal is reported as such */
	if (rc && o->cancel && *o->cancel)
		rc = check_cancel(o, e);
	build_state_free(&s);
	sink_tee_free(&s.tee);
	return rc;
}

void build_result_free(struct build_result *r)
{
	free(r->output);
	json_decref(r->counts);
	json_decref(r->warnings);
	memset(r, 0, sizeof *r);
}
