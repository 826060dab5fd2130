/* webreport: shards + density + index.html for a build (see webreport.h). */
#include "report/webreport.h"
#include "base/cancel.h"
#include "report/catshard.h"
#include "report/html.h"
#include "report/gpusum.h"
#include "report/nvtxsum.h"
#include "report/seriessum.h"
#include "report/partcost.h"
#include "report/parts.h"
#include "report/shard.h"
#include "store/store_ext.h"
#include "store/store_late.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DETAIL_DIR "detail"
#define SCRATCH_DIR ".shards" /* single-file: shards before embedding */

struct webreport {
	char *staging;
	char *shard_dir;
	int single_file;
	uint64_t max_part_bytes;
	struct shard_writer *w;
	const cancel_flag *cancel; /* borrowed */
};

void webreport_cancel(struct webreport *wr, const cancel_flag *cancel)
{
	wr->cancel = cancel;
}

int webreport_open(struct webreport **out, const char *staging, int single_file,
                   uint64_t max_part_bytes, double duration, struct err *e)
{
	struct webreport *wr = calloc(1, sizeof *wr);
	struct shard_writer_opts o = {0};
	size_t n;

	*out = NULL;
	if (!wr)
		return err_set(e, ERR_NOMEM, "Out of memory");
	n = strlen(staging) + sizeof SCRATCH_DIR + 2;
	wr->staging = strdup(staging);
	wr->shard_dir = malloc(n);
	if (!wr->staging || !wr->shard_dir) {
		webreport_free(wr);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	wr->single_file = single_file;
	wr->max_part_bytes = max_part_bytes;
	snprintf(wr->shard_dir, n, "%s/%s", staging,
	         single_file ? SCRATCH_DIR : DETAIL_DIR);
	if (mkdir(wr->shard_dir, 0755) != 0) {
		err_sys(e, ERR_DATA, "Cannot create %s", wr->shard_dir);
		webreport_free(wr);
		return ERR_DATA;
	}
	o.dir = wr->shard_dir;
	o.threads = 1; /* the second core: compress while the main thread parses */
	if (shard_writer_open(&wr->w, &o, e)) {
		webreport_free(wr);
		return e->code;
	}
	if (duration > 0)
		shard_writer_set_duration(wr->w, duration);
	*out = wr;
	return 0;
}

void webreport_set_duration(struct webreport *wr, double duration)
{
	shard_writer_set_duration(wr->w, duration);
}

void webreport_sink(struct webreport *wr, struct row_sink *sink)
{
	shard_writer_sink(wr->w, sink);
}

/* Every profile's bins, nprofiles x SHARD_DENSITY_BINS (caller frees). */
/* The density bins the shard writer counted as the events passed. */
static int density_live(struct webreport *wr, size_t nprofiles, uint64_t **out,
                        struct err *e)
{
	uint64_t *bins = calloc(nprofiles ? nprofiles : 1,
	                        SHARD_DENSITY_BINS * sizeof *bins);

	*out = bins;
	if (!bins)
		return err_set(e, ERR_NOMEM, "Out of memory for density bins");
	for (size_t i = 0; i < nprofiles; i++)
		shard_writer_density(wr->w, (int64_t)i, bins + i * SHARD_DENSITY_BINS);
	return 0;
}

/* The density bins counted from the staged cache (the duration was not
 * known before the first event); touches no shard writer. */
static int density_from_db(const json_t *catalog, const char *sqlite_path,
                           size_t nprofiles, const cancel_flag *cancel,
                           uint64_t **out, struct err *e)
{
	uint64_t *bins = calloc(nprofiles ? nprofiles : 1,
	                        SHARD_DENSITY_BINS * sizeof *bins);
	sqlite3 *db = NULL;
	double duration;
	int rc;

	*out = NULL;
	if (!bins)
		return err_set(e, ERR_NOMEM, "Out of memory for density bins");
	duration = json_number_value(json_object_get(json_object_get(catalog, "meta"),
	                                             "duration"));
	if (!(duration > 0)) {
		free(bins);
		return err_set(e, ERR_DATA, "meta.duration: expected a finite number > 0");
	}
	if (store_late_open_reader(sqlite_path, &db) != SQLITE_OK) {
		err_set(e, ERR_DATA, "Cannot open %s for density: %s", sqlite_path,
		        db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		free(bins);
		return ERR_DATA;
	}
	cancel_sqlite(db, cancel);
	rc = shard_density_from_db(db, duration, nprofiles, bins, e);
	sqlite3_close(db);
	if (rc) {
		free(bins);
		return rc;
	}
	*out = bins;
	return 0;
}

/*
 * The reading that needs no shard writer, run on a second thread while the
 * NVTX summaries are written (both read the staged cache, each with its own
 * connection): the metric summaries' read-ahead and, when the shard writer
 * could not count it live, the density.  Errors are kept apart so that
 * webreport_finish reports them in the order of a sequential build.
 */
struct ahead {
	const char *sqlite_path;
	const json_t *catalog; /* read only until joined */
	const cancel_flag *cancel;
	size_t nprofiles;
	int want_density;
	struct seriessum_scan *scan; /* results, owned by the caller once joined */
	uint64_t *bins;
	int scan_rc, density_rc;
	struct err scan_err, density_err;
	/* fine_ahead: the thread bins the metric summaries' fine level too,
	 * after it set ready (under mu): scan, scan_rc and scan_err are then
	 * the caller's, while the fine level is handed over through scan */
	int fine_ahead, ready;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;

	err_clear(&a->scan_err);
	err_clear(&a->density_err);
	a->scan_rc = seriessum_scan_new(&a->scan, a->sqlite_path, a->catalog,
	                                a->cancel, a->fine_ahead, &a->scan_err);
	if (!a->scan_rc && a->want_density)
		a->density_rc = density_from_db(a->catalog, a->sqlite_path, a->nprofiles,
		                                a->cancel, &a->bins, &a->density_err);
	if (a->fine_ahead) {
		struct seriessum_scan *sc = a->scan;
		pthread_mutex_lock(&a->mu);
		a->ready = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		seriessum_scan_fine(sc); /* returns at once when sc is NULL */
	}
	return NULL;
}

/*
 * The parts' weights (partcost), scanned on a thread of their own while
 * the summaries are written, when a single-file page is likely to be
 * split: the staged store is larger than COST_AHEAD_RATIO times the part
 * budget (the page embeds the detail shards, compressed and in base64: a
 * quarter to a third of the store's size on the benchmark captures).  A
 * page that turns out to fit leaves the weights unused; a scan that fails
 * (cost left NULL by partcost_scan) is done again by parts_write, which
 * then reports the error.
 */
#ifndef COST_AHEAD_RATIO
#define COST_AHEAD_RATIO 3
#endif

struct cost_ahead {
	const char *sqlite_path;
	const json_t *catalog; /* read only until joined */
	double duration;
	const cancel_flag *cancel;
	struct partcost *cost; /* the caller's once joined; NULL: failed */
};

static void *cost_main(void *arg)
{
	struct cost_ahead *c = arg;
	struct err e;

	err_clear(&e);
	partcost_scan(c->sqlite_path, c->catalog, c->duration, c->cancel,
	              &c->cost, &e);
	return NULL;
}

/* 1 when the page of a single-file build is likely to be split. */
static int split_likely(const struct webreport *wr, const char *sqlite_path)
{
	struct stat sb;

	return wr->single_file && wr->max_part_bytes > 0 &&
	       stat(sqlite_path, &sb) == 0 &&
	       (uint64_t)sb.st_size / COST_AHEAD_RATIO > wr->max_part_bytes;
}

/* Removes the flat scratch directory of single-file mode. */
static int remove_scratch(const char *dir, struct err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return err_sys(e, ERR_DATA, "Cannot open %s", dir);
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) != 0) {
			err_sys(e, ERR_DATA, "Cannot remove %s/%s", dir, de->d_name);
			closedir(d);
			return ERR_DATA;
		}
	}
	closedir(d);
	if (rmdir(dir) != 0)
		return err_sys(e, ERR_DATA, "Cannot remove %s", dir);
	return 0;
}

/*
 * Single-file with a part budget: measures the page without shards (written
 * to page, overwritten afterwards) and, when the shards would push it over
 * the budget, writes the parts and the list page (st->parts > 0).
 */
static int split(struct webreport *wr, const json_t *core, const char *page,
                 const json_t *catalog, const char *sqlite_path,
                 const struct partcost *cost, struct webreport_stats *st,
                 struct err *e)
{
	struct html_stats hs;
	struct parts_result pr;
	struct parts_job job;
	double duration = json_number_value(json_object_get(
		json_object_get(catalog, "meta"), "duration"));
	int rc;

	if ((rc = html_write_from(page, core, NULL, sqlite_path, &hs, e)))
		return rc;
	if (parts_page_bound(core, hs.bytes) <= wr->max_part_bytes)
		return 0;
	job.dir = wr->staging;
	job.core = core;
	job.shard_dir = wr->shard_dir;
	job.sqlite_path = sqlite_path;
	job.base = hs.bytes;
	job.budget = wr->max_part_bytes;
	job.duration = duration;
	job.cost = cost;
	job.cancel = wr->cancel;
	if ((rc = parts_write(&job, &pr, e)))
		return rc;
	st->parts = pr.parts;
	st->max_part_bytes = pr.max_bytes;
	st->html_bytes = pr.index_bytes;
	if (pr.oversized) {
		st->oversized = 1;
		if (pr.oversized > 1)
			snprintf(st->warning, sizeof st->warning,
			         "%s (and %zu more parts over the budget)",
			         pr.warning, pr.oversized - 1);
		else
			snprintf(st->warning, sizeof st->warning, "%s", pr.warning);
	}
	return 0;
}

/*
 * Progressive report whose collections exceed the embedding budget: writes
 * the catalog shards and puts their index into core (`catalog_shards`,
 * the collections emptied); *sharded = 1 then.  Otherwise nothing changes.
 */
static int shard_catalog(struct webreport *wr, json_t *core,
                         const char *sqlite_path, int *sharded,
                         struct webreport_stats *st, struct err *e)
{
	static const char *const keys[] = {"requests", "sessions", "server_spans",
	                                   "iterations"};
	struct catshard_stats cs;
	sqlite3 *db = NULL;
	unsigned mask = 0;
	json_t *index = NULL;
	double duration = json_number_value(json_object_get(
		json_object_get(core, "meta"), "duration"));
	int over = 0, rc;

	*sharded = 0;
	if ((rc = store_ext_open_collections(sqlite_path, &db, &mask, e)))
		return rc;
	cancel_sqlite(db, wr->cancel);
	if (mask != 0xFu || (rc = catshard_over_budget(db, &over, e)) || !over ||
	    (rc = catshard_write(db, wr->shard_dir, duration, &index, &cs, e))) {
		sqlite3_close(db);
		return rc;
	}
	sqlite3_close(db);
	for (size_t k = 0; k < 4; k++)
		json_object_set_new(core, keys[k], json_array());
	if (json_object_set_new(core, "catalog_shards", index))
		return err_set(e, ERR_NOMEM, "Out of memory for the catalog index");
	st->catalog_shards = cs.shards;
	st->lookup_shards = cs.lookups;
	if (cs.oversized > 1)
		snprintf(st->catalog_warning, sizeof st->catalog_warning,
		         "%s (and %llu more sessions over the budget)", cs.warning,
		         (unsigned long long)(cs.oversized - 1));
	else
		snprintf(st->catalog_warning, sizeof st->catalog_warning, "%s",
		         cs.warning);
	*sharded = 1;
	return 0;
}

int webreport_finish(struct webreport *wr, const json_t *catalog,
                     const char *sqlite_path, struct webreport_stats *st,
                     struct err *e)
{
	struct html_stats hs;
	uint64_t *bins = NULL;
	struct nvtxsum *sums = NULL;
	struct gpusum *gsums = NULL;
	struct seriessum *ssum = NULL;
	json_t *core = NULL;
	size_t nprofiles = json_array_size(json_object_get(catalog, "profiles"));
	char *page = NULL;
	int rc, sharded = 0;

	struct ahead a;
	struct cost_ahead ca = {sqlite_path, catalog, 0, wr->cancel, NULL};
	pthread_t th, cth;
	int threaded, costing = 0;

	memset(st, 0, sizeof *st);
	memset(&a, 0, sizeof a);
	a.sqlite_path = sqlite_path;
	a.catalog = catalog;
	a.cancel = wr->cancel;
	a.nprofiles = nprofiles;
	a.want_density = !shard_writer_has_density(wr->w);
	a.fine_ahead = 1;
	pthread_mutex_init(&a.mu, NULL);
	pthread_cond_init(&a.cv, NULL);
	threaded = pthread_create(&th, NULL, ahead_main, &a) == 0;
	if (!threaded)
		a.fine_ahead = 0;
	ca.duration = json_number_value(json_object_get(
		json_object_get(catalog, "meta"), "duration"));
	if (split_likely(wr, sqlite_path))
		costing = pthread_create(&cth, NULL, cost_main, &ca) == 0;
	rc = nvtxsum_build(&sums, wr->w, sqlite_path, json_number_value(
	             json_object_get(json_object_get(catalog, "meta"), "duration")),
	             nprofiles, wr->cancel, e);
	if (!rc)
		rc = gpusum_build(&gsums, wr->w, sqlite_path, catalog, json_number_value(
		             json_object_get(json_object_get(catalog, "meta"), "duration")),
		             wr->cancel, e);
	if (threaded) {
		pthread_mutex_lock(&a.mu);
		while (!a.ready)
			pthread_cond_wait(&a.cv, &a.mu);
		pthread_mutex_unlock(&a.mu);
	} else if (!rc) {
		ahead_main(&a);
	}
	if (!rc && a.scan_rc) {
		*e = a.scan_err;
		rc = a.scan_rc;
	}
	if (!rc) {
		rc = seriessum_scan_finish(&ssum, a.scan, wr->w, e);
		a.scan = NULL;
	} else {
		seriessum_scan_stop(a.scan); /* its fine level: not wanted */
	}
	if (threaded)
		pthread_join(th, NULL);
	pthread_mutex_destroy(&a.mu);
	pthread_cond_destroy(&a.cv);
	if (!rc)
		rc = shard_writer_finish(wr->w, e);
	if (!rc && a.want_density && a.density_rc) {
		*e = a.density_err;
		rc = a.density_rc;
	}
	if (!rc && a.want_density) {
		bins = a.bins;
		a.bins = NULL;
	} else if (!rc) {
		rc = density_live(wr, nprofiles, &bins, e);
	}
	seriessum_scan_free(a.scan);
	free(a.bins);
	if (rc)
		goto out;
	if (cancel_requested(wr->cancel)) {
		rc = err_set(e, ERR_DATA, "interrupted");
		goto out;
	}
	core = html_core_catalog(catalog, wr->w, bins, nprofiles, wr->single_file, e);
	if (!core) {
		rc = e->code ? e->code : ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nprofiles; i++) {
		json_t *pr = json_array_get(json_object_get(core, "profiles"), i);
		json_t *ns = nvtxsum_profile_json(sums, wr->w, i);
		json_t *cs = nvtxsum_cpu_json(sums, wr->w, i);
		json_t *gs = gpusum_profile_json(gsums, wr->w, i, pr);
		if (ns)
			json_object_set_new(pr, "nvtx_summary", ns);
		if (gs)
			json_object_set_new(pr, "gpu_summary", gs);
		if (cs && json_is_object(json_object_get(pr, "cpu")))
			json_object_set_new(json_object_get(pr, "cpu"), "stack_sums", cs);
		else
			json_decref(cs);
	}
	if (seriessum_annotate(ssum, wr->w, core)) {
		rc = err_set(e, ERR_NOMEM, "Out of memory");
		goto out;
	}
	size_t n = strlen(wr->staging) + sizeof "/index.html";
	page = malloc(n);
	if (!page) {
		rc = err_set(e, ERR_NOMEM, "Out of memory");
		goto out;
	}
	snprintf(page, n, "%s/index.html", wr->staging);
	if (!wr->single_file &&
	    (rc = shard_catalog(wr, core, sqlite_path, &sharded, st, e)))
		goto out;
	if (costing) {
		pthread_join(cth, NULL);
		costing = 0;
	}
	if (wr->single_file && wr->max_part_bytes > 0 &&
	    (rc = split(wr, core, page, catalog, sqlite_path, ca.cost, st, e)))
		goto out;
	if (st->parts == 0 &&
	    (rc = html_write_from(page, core, wr->single_file ? wr->shard_dir : NULL,
	                          sharded ? NULL : sqlite_path, &hs, e)))
		goto out;
	if (st->parts > 0) {
		memset(&hs, 0, sizeof hs); /* html_bytes: the list page */
		hs.bytes = st->html_bytes;
	}
	if (wr->single_file && (rc = remove_scratch(wr->shard_dir, e)))
		goto out;

	json_t *files = shard_writer_files(wr->w);
	st->shards = shard_writer_total(wr->w);
	st->shard_files = json_array_size(files);
	json_decref(files);
	st->shard_bytes = shard_writer_bytes(wr->w);
	st->html_bytes = hs.bytes;
	st->catalog_bytes = hs.catalog_bytes;
	st->embedded_bytes = hs.embedded_bytes;
	memcpy(st->html_sha256, hs.sha256, sizeof st->html_sha256);
	if (wr->single_file && st->parts == 0 &&
	    hs.bytes > HTML_SINGLE_FILE_WARN_BYTES) {
		st->oversized = 1;
		snprintf(st->warning, sizeof st->warning,
		         "the single-file index.html is %.1f MB (%.1f MB of "
		         "embedded detail for %llu shards, %.1f MB of catalog and "
		         "viewer), over 100 MB: browsers may be slow or fail to open "
		         "it; the default progressive report (without --single-file) "
		         "loads only the detail on screen",
		         hs.bytes / 1e6, hs.embedded_bytes / 1e6,
		         (unsigned long long)hs.shards,
		         (hs.bytes - hs.embedded_bytes) / 1e6);
	}
out:
	if (costing)
		pthread_join(cth, NULL);
	partcost_free(ca.cost);
	free(page);
	free(bins);
	nvtxsum_free(sums);
	gpusum_free(gsums);
	seriessum_free(ssum);
	json_decref(core);
	return rc;
}

void webreport_free(struct webreport *wr)
{
	if (!wr)
		return;
	shard_writer_free(wr->w);
	free(wr->staging);
	free(wr->shard_dir);
	free(wr);
}
