/* webreport: shards + density + index.html for a build (see webreport.h). */
#include "report/webreport.h"
#include "base/cancel.h"
#include "report/html.h"
#include "report/nvtxsum.h"
#include "report/seriessum.h"
#include "report/parts.h"
#include "report/shard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
	const volatile sig_atomic_t *cancel; /* borrowed */
};

void webreport_cancel(struct webreport *wr, const volatile sig_atomic_t *cancel)
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
static int density(struct webreport *wr, const json_t *catalog,
                   const char *sqlite_path, size_t nprofiles, uint64_t **out,
                   struct err *e)
{
	uint64_t *bins = calloc(nprofiles ? nprofiles : 1,
	                        SHARD_DENSITY_BINS * sizeof *bins);
	sqlite3 *db = NULL;
	double duration;
	int rc;

	*out = NULL;
	if (!bins)
		return err_set(e, ERR_NOMEM, "Out of memory for density bins");
	if (shard_writer_has_density(wr->w)) {
		for (size_t i = 0; i < nprofiles; i++)
			shard_writer_density(wr->w, (int64_t)i, bins + i * SHARD_DENSITY_BINS);
		*out = bins;
		return 0;
	}
	duration = json_number_value(json_object_get(json_object_get(catalog, "meta"),
	                                             "duration"));
	if (!(duration > 0)) {
		free(bins);
		return err_set(e, ERR_DATA, "meta.duration: expected a finite number > 0");
	}
	if (sqlite3_open_v2(sqlite_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		err_set(e, ERR_DATA, "Cannot open %s for density: %s", sqlite_path,
		        db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		free(bins);
		return ERR_DATA;
	}
	cancel_sqlite(db, wr->cancel);
	rc = shard_density_from_db(db, duration, nprofiles, bins, e);
	sqlite3_close(db);
	if (rc) {
		free(bins);
		return rc;
	}
	*out = bins;
	return 0;
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
                 struct webreport_stats *st, struct err *e)
{
	struct html_stats hs;
	struct parts_result pr;
	double duration = json_number_value(json_object_get(
		json_object_get(catalog, "meta"), "duration"));
	int rc;

	if ((rc = html_write_from(page, core, NULL, sqlite_path, &hs, e)))
		return rc;
	if (parts_page_bound(core, hs.bytes) <= wr->max_part_bytes)
		return 0;
	if ((rc = parts_write(wr->staging, core, wr->shard_dir, sqlite_path, hs.bytes,
	                      wr->max_part_bytes, duration, wr->cancel, &pr, e)))
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

int webreport_finish(struct webreport *wr, const json_t *catalog,
                     const char *sqlite_path, struct webreport_stats *st,
                     struct err *e)
{
	struct html_stats hs;
	uint64_t *bins = NULL;
	struct nvtxsum *sums = NULL;
	struct seriessum *ssum = NULL;
	json_t *core = NULL;
	size_t nprofiles = json_array_size(json_object_get(catalog, "profiles"));
	char *page = NULL;
	int rc;

	memset(st, 0, sizeof *st);
	if ((rc = nvtxsum_build(&sums, wr->w, sqlite_path, json_number_value(
	             json_object_get(json_object_get(catalog, "meta"), "duration")),
	             nprofiles, wr->cancel, e)) ||
	    (rc = seriessum_build(&ssum, wr->w, sqlite_path, catalog, wr->cancel, e)) ||
	    (rc = shard_writer_finish(wr->w, e)) ||
	    (rc = density(wr, catalog, sqlite_path, nprofiles, &bins, e)))
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
		if (ns)
			json_object_set_new(pr, "nvtx_summary", ns);
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
	if (wr->single_file && wr->max_part_bytes > 0 &&
	    (rc = split(wr, core, page, catalog, sqlite_path, st, e)))
		goto out;
	if (st->parts == 0 &&
	    (rc = html_write_from(page, core, wr->single_file ? wr->shard_dir : NULL,
	                          sqlite_path, &hs, e)))
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
	free(page);
	free(bins);
	nvtxsum_free(sums);
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
