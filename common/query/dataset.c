/* dataset: open any dataset behind one backend interface (see dataset.h). */
#include "query/dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileid.h"
#include "base/hash.h"
#include "query/memrows.h"
#include "store/store.h"
#include "store/store_coll.h"
#include "store/store_ordered.h"
#include "store/store_summary.h"

enum { DS_SQLITE = 1, DS_DOCUMENT };

/* What all handles of one dataset share (refcounted, read-only). */
struct ds_core {
	atomic_int refs;
	int kind;
	char *data_path;
	char generation[STORE_GENERATION_MAX + 1];
	json_t *catalog;
	struct memrows *rows; /* DS_DOCUMENT */
	struct fileid id;     /* of data_path, unchanged across the open */
	int ext;              /* DS_SQLITE: collections in dsight's tables */
};

struct dataset {
	struct ds_core *core;
	struct store *store; /* DS_SQLITE: this handle's connection */
	struct store_coll *coll; /* its extension reader (core->ext) */
	int summaries;       /* use build-time summaries (DS_SQLITE) */
	int sum_tried;       /* sum/ord opened (lazily, on first use) */
	struct store_summary *sum; /* NULL: the cache has none */
	struct store_ordered *ord;
};

/* DSIGHT_NO_SUMMARIES=1 answers every query by scanning, as a cache
 * without summaries would (benchmarks and parity compare both ways). */
static int summaries_from_env(void)
{
	const char *v = getenv("DSIGHT_NO_SUMMARIES");
	return !(v && *v && strcmp(v, "0") != 0);
}

static void core_release(struct ds_core *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	json_decref(c->catalog);
	memrows_free(c->rows);
	free(c->data_path);
	free(c);
}

/* Reads up to 16 leading bytes of path into hdr; returns the count, -1
 * (errno set) or -2 when path is not a regular file.  O_NONBLOCK: a FIFO
 * put in the file's place never blocks the open. */
static ssize_t read_header(const char *path, unsigned char hdr[16])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n, got = 0;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -2;
	}
	while (got < 16 && (n = read(fd, hdr + got, (size_t)(16 - got))) > 0)
		got += n;
	close(fd);
	return got;
}

/* generation = first 32 hex digits of the SHA-256 of the file. */
static int file_generation(const char *path, char *out, struct err *e)
{
	char hex[HASH_HEX_LEN + 1];
	int rc = hash_sha256_file(path, hex, NULL, e);

	if (rc)
		return rc;
	memcpy(out, hex, 32);
	out[32] = '\0';
	return 0;
}

/* Finds the data file that path names.  *file is malloc'd. */
static int resolve(const char *path, char **file, int *kind, struct err *e)
{
	struct stat st;
	unsigned char hdr[16];
	ssize_t n;
	char *p = NULL;

	*file = NULL;
	if (stat(path, &st) != 0)
		return err_sys(e, ERR_DATA, "Cannot open dataset %s", path);
	if (S_ISDIR(st.st_mode)) {
		static const char *const names[] = {"trace-data.sqlite",
		                                    "trace-data.json.gz"};
		for (int k = 0; k < 2 && !p; k++) {
			struct stat fs;
			size_t len = strlen(path) + strlen(names[k]) + 2;
			char *c = malloc(len);
			if (!c)
				return err_set(e, ERR_NOMEM, "out of memory");
			snprintf(c, len, "%s/%s", path, names[k]);
			if (stat(c, &fs) == 0 && S_ISREG(fs.st_mode)) {
				p = c;
			} else if (stat(c, &fs) == 0 || errno != ENOENT) {
				/* there, but no data file: say which and why */
				if (stat(c, &fs) == 0)
					err_set(e, ERR_DATA, "%s is not a regular "
					        "file (a FIFO, socket or device "
					        "cannot be a dataset)", c);
				else
					err_sys(e, ERR_DATA, "Cannot open dataset"
					        " %s", c);
				free(c);
				return ERR_DATA;
			} else {
				free(c);
			}
		}
		if (!p)
			return err_set(e, ERR_DATA,
			               "%s is not a DSight report: it holds neither "
			               "trace-data.sqlite nor trace-data.json.gz",
			               path);
	} else {
		p = strdup(path);
		if (!p)
			return err_set(e, ERR_NOMEM, "out of memory");
	}
	memset(hdr, 0, sizeof hdr);
	n = read_header(p, hdr);
	if (n == -2) {
		err_set(e, ERR_DATA,
		        "%s is not a regular file (a FIFO, socket or device cannot be a dataset)", p);
		free(p);
		return ERR_DATA;
	}
	if (n < 0) {
		err_sys(e, ERR_DATA, "Cannot open dataset %s", p);
		free(p);
		return ERR_DATA;
	}
	if (n == 16 && store_is_sqlite_header(hdr)) {
		*kind = DS_SQLITE;
	} else if ((n >= 2 && hdr[0] == 0x1f && hdr[1] == 0x8b) ||
	           (n >= 3 && hdr[0] == 0xef && hdr[1] == 0xbb && hdr[2] == 0xbf)) {
		/* gzip, or a UTF-8 BOM that the evidence reader names */
		*kind = DS_DOCUMENT;
	} else {
		ssize_t k = 0;
		while (k < n && (hdr[k] == ' ' || hdr[k] == '\n' ||
		                 hdr[k] == '\r' || hdr[k] == '\t'))
			k++;
		if (k == n || hdr[k] != '{') {
			err_set(e, ERR_DATA,
			        "%s is neither a DSight SQLite cache nor an evidence "
			        "document (JSON or gzip)",
			        p);
			free(p);
			return ERR_DATA;
		}
		*kind = DS_DOCUMENT;
	}
	*file = realpath(p, NULL);
	free(p);
	if (!*file)
		return err_sys(e, ERR_DATA, "Cannot resolve %s", path);
	return 0;
}

/*
 * The cache's catalog: with dsight's extension (consistent with the
 * catalog row) only dsight_core is read and the collections stay in their
 * tables; without it the v1 catalog row, unless that row says its
 * collections are external.
 */
static int open_cache(struct dataset *ds, struct err *e)
{
	struct ds_core *c = ds->core;
	json_t *core = NULL;
	int stale = 0, rc;

	rc = store_read_generation(ds->store, c->generation, e);
	if (!rc)
		rc = store_coll_open(ds->store, c->generation, &ds->coll, &core,
		                     &stale, e);
	if (rc)
		return rc;
	if (ds->coll) {
		c->catalog = core;
		c->ext = 1;
		return 0;
	}
	rc = store_read_catalog(ds->store, &c->catalog, c->generation, e);
	if (!rc && json_is_string(json_object_get(c->catalog, "dsight_collections")))
		rc = err_set(e, ERR_DATA, "%s: the request tables are missing or "
		             "from another build; rebuild the report", c->data_path);
	return rc;
}

/* Opens the data file once; *out owned by the caller. */
static int open_once(const char *path, struct dataset **out, struct err *e)
{
	struct ds_core *c;
	struct dataset *ds;
	struct fileid after;
	char *file;
	int kind = 0, rc;

	*out = NULL;
	rc = resolve(path, &file, &kind, e);
	if (rc)
		return rc;
	c = calloc(1, sizeof *c);
	ds = calloc(1, sizeof *ds);
	if (!c || !ds) {
		free(c);
		free(ds);
		free(file);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	atomic_init(&c->refs, 1);
	c->kind = kind;
	c->data_path = file;
	ds->core = c;
	ds->summaries = summaries_from_env();
	rc = fileid_get(file, &c->id, e);
	if (!rc && kind == DS_SQLITE) {
		rc = store_open(file, &ds->store, e);
		if (!rc)
			rc = open_cache(ds, e);
	} else if (!rc) {
		rc = memrows_load(file, &c->catalog, &c->rows, e);
		if (!rc)
			rc = file_generation(file, c->generation, e);
	}
	if (!rc && !json_is_object(c->catalog))
		rc = err_set(e, ERR_DATA, "%s: the catalog is not a JSON object",
		             file);
	/* A rebuild that replaced the file while we read it: say so, and let
	 * dataset_open try again. */
	if (!rc && (fileid_get(file, &after, e) != 0 ||
	            !fileid_equal(&after, &c->id)))
		rc = err_set(e, ERR_REBUILT, "%s changed while it was opened", file);
	if (rc) {
		dataset_close(ds);
		return rc;
	}
	*out = ds;
	return 0;
}

int dataset_open(const char *path, struct dataset **out, struct err *e)
{
	int rc;

	/* The identity recorded is that of the very file read: it is taken
	 * before opening and checked after, and a report rebuilt in between
	 * is opened again (a few times at most). */
	for (int tries = 0;; tries++) {
		rc = open_once(path, out, e);
		if (rc != ERR_REBUILT || tries == 4)
			return rc;
	}
}

const struct fileid *dataset_fileid(const struct dataset *ds)
{
	return &ds->core->id;
}

int dataset_clone(struct dataset *ds, struct dataset **out, struct err *e)
{
	struct dataset *n = calloc(1, sizeof *n);

	*out = NULL;
	if (!n)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (ds->core->kind == DS_SQLITE) {
		int rc = store_open(ds->core->data_path, &n->store, e);
		if (!rc && ds->core->ext) {
			json_t *core = NULL;
			int stale = 0;
			rc = store_coll_open(n->store, ds->core->generation,
			                     &n->coll, &core, &stale, e);
			json_decref(core);
			if (!rc && !n->coll)
				rc = err_set(e, ERR_REBUILT, "DSight dataset was "
				             "rebuilt; reopen it before querying");
		}
		if (rc) {
			store_coll_close(n->coll);
			store_close(n->store);
			free(n);
			return rc;
		}
	}
	atomic_fetch_add(&ds->core->refs, 1);
	n->core = ds->core;
	n->summaries = ds->summaries;
	*out = n;
	return 0;
}

void dataset_close(struct dataset *ds)
{
	if (!ds)
		return;
	store_coll_close(ds->coll);
	store_summary_close(ds->sum);
	store_ordered_close(ds->ord);
	store_close(ds->store);
	core_release(ds->core);
	free(ds);
}

const json_t *dataset_catalog(const struct dataset *ds)
{
	return ds->core->catalog;
}

const char *dataset_generation(const struct dataset *ds)
{
	return ds->core->generation;
}

int dataset_has_cache(const struct dataset *ds)
{
	return ds->core->kind == DS_SQLITE;
}

const char *dataset_data_path(const struct dataset *ds)
{
	return ds->core->data_path;
}

int dataset_check_generation(struct dataset *ds, struct err *e)
{
	if (ds->core->kind != DS_SQLITE)
		return 0;
	if (ds->coll)
		return store_coll_check_generation(ds->coll, ds->core->generation, e);
	return store_check_generation(ds->store, ds->core->generation, e);
}

/* ---- catalog collections ---- */

static const json_t *tree_array(const struct dataset *ds,
                                enum evidence_collection c)
{
	const json_t *a = json_object_get(ds->core->catalog,
	                                  evidence_collection_key(c));
	return json_is_array(a) ? a : NULL;
}

int64_t dataset_count(const struct dataset *ds, enum evidence_collection c)
{
	if (store_coll_has(ds->coll, c))
		return store_coll_count(ds->coll, c);
	return (int64_t)json_array_size(tree_array(ds, c));
}

int dataset_foreach(struct dataset *ds, enum evidence_collection c,
                    dataset_elem_fn fn, void *ctx, struct err *e)
{
	const json_t *a = tree_array(ds, c), *v;
	size_t k;
	int rc;

	if (store_coll_has(ds->coll, c))
		return store_coll_foreach(ds->coll, c, fn, ctx, e);
	json_array_foreach(a, k, v)
		if ((rc = fn(ctx, (int64_t)k, v)))
			return rc;
	return 0;
}

int dataset_find_request(struct dataset *ds, const char *id, json_t **out,
                         struct err *e)
{
	const json_t *a = tree_array(ds, EVIDENCE_REQUESTS), *v;
	size_t k, n = strlen(id);

	*out = NULL;
	if (store_coll_has(ds->coll, EVIDENCE_REQUESTS))
		return store_coll_request(ds->coll, id, n, out, e);
	json_array_foreach(a, k, v) {
		const json_t *x = json_object_get(v, "id");
		if (json_is_string(x) && json_string_length(x) == n &&
		    !memcmp(json_string_value(x), id, n)) {
			*out = json_incref((json_t *)v);
			return 0;
		}
	}
	return 0;
}

int dataset_names(struct dataset *ds, enum dataset_names which,
                  int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
                  struct err *e)
{
	static const struct { int coll; const char *key; int list; } m[] = {
		[SN_REQ_SESSION] = {EVIDENCE_REQUESTS, "session", 0},
		[SN_REQ_AGENT] = {EVIDENCE_REQUESTS, "agent", 0},
		[SN_REQ_WORKER] = {EVIDENCE_REQUESTS, "workers", 1},
		[SN_SESS_ID] = {EVIDENCE_SESSIONS, "id", 0},
		[SN_SESS_AGENT] = {EVIDENCE_SESSIONS, "agents", 1},
	};
	const json_t *a = tree_array(ds, m[which].coll), *el, *v, *x;
	size_t k, i;
	int rc;

	if (store_coll_has(ds->coll, m[which].coll))
		return store_coll_names(ds->coll, (enum store_names)which, fn, ctx, e);
	json_array_foreach(a, k, el) {
		v = json_object_get(el, m[which].key);
		if (!m[which].list) {
			if (json_is_string(v) &&
			    (rc = fn(ctx, json_string_value(v), json_string_length(v))))
				return rc;
			continue;
		}
		json_array_foreach(v, i, x)
			if (json_is_string(x) &&
			    (rc = fn(ctx, json_string_value(x), json_string_length(x))))
				return rc;
	}
	return 0;
}

int dataset_select(struct dataset *ds, enum evidence_collection c,
                   const struct store_select *sel, int64_t *total,
                   int64_t *unaligned, dataset_elem_fn fn, void *ctx,
                   struct err *e)
{
	if (!store_coll_has(ds->coll, c) || getenv("DSIGHT_NO_PUSHDOWN"))
		return DATASET_FALLBACK;
	return store_coll_select(ds->coll, c, sel, total, unaligned, fn, ctx, e);
}

int dataset_gpu_rows(struct dataset *ds, int64_t profile,
                     const struct row_window *w, double max_duration,
                     int with_nvtx_name, store_gpu_fn fn, void *ctx,
                     struct err *e)
{
	if (!ds->store)
		return err_set(e, ERR_USAGE, DATASET_NO_GPU_ROWS);
	return store_gpu_rows(store_db(ds->store), profile, w, max_duration,
	                      with_nvtx_name, fn, ctx, e);
}

int dataset_gpu_count(struct dataset *ds, int64_t profile,
                      const struct row_window *w, double max_duration,
                      int64_t *out, struct err *e)
{
	*out = 0;
	if (!ds->store)
		return err_set(e, ERR_USAGE, DATASET_NO_GPU_ROWS);
	return store_gpu_count(store_db(ds->store), profile, w, max_duration,
	                       out, e);
}

int dataset_gpu_projected(struct dataset *ds, int64_t profile,
                          const char *tid, size_t tid_len, double start,
                          double end, struct store_gpu_span *out,
                          struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!ds->store)
		return 0;
	return store_gpu_projected(store_db(ds->store), profile, tid, tid_len,
	                           start, end, out, e);
}

int dataset_events(struct dataset *ds, int64_t profile,
                   const struct row_window *w, row_event_fn fn,
                   void *ctx, struct err *e)
{
	if (ds->store)
		return store_events(ds->store, profile, w, fn, ctx, e);
	return memrows_events(ds->core->rows, profile, w, fn, ctx);
}

int dataset_event_at(struct dataset *ds, int64_t profile, int64_t ordinal,
                     row_event_fn fn, void *ctx, struct err *e)
{
	if (ds->store)
		return store_event_at(ds->store, profile, ordinal, fn, ctx, e);
	return memrows_event_at(ds->core->rows, profile, ordinal, fn, ctx);
}

int dataset_samples(struct dataset *ds, int64_t profile,
                    const struct row_window *w, row_sample_fn fn,
                    void *ctx, struct err *e)
{
	if (ds->store)
		return store_samples(ds->store, profile, w, fn, ctx, e);
	return memrows_samples(ds->core->rows, profile, w, fn, ctx);
}

int dataset_points(struct dataset *ds, int64_t series,
                   const struct row_window *w, row_point_fn fn,
                   void *ctx, struct err *e)
{
	if (ds->store)
		return store_points(ds->store, series, w, fn, ctx, e);
	return memrows_points(ds->core->rows, series, w, fn, ctx);
}

int dataset_points_before(struct dataset *ds, int64_t series, double t,
                          row_point_fn fn, void *ctx, struct err *e)
{
	if (ds->store)
		return store_points_before(ds->store, series, t, fn, ctx, e);
	return memrows_points_before(ds->core->rows, series, t, fn, ctx);
}

int dataset_read_begin(struct dataset *ds, struct err *e)
{
	return ds->core->kind == DS_SQLITE ? store_read_begin(ds->store, e) : 0;
}

void dataset_read_end(struct dataset *ds)
{
	if (ds->core->kind == DS_SQLITE)
		store_read_end(ds->store);
}

/* ---- build-time summaries and ordered reads (SQLite only) ---- */

void dataset_set_summaries(struct dataset *ds, int on)
{
	ds->summaries = on;
}

/* Opens the summary and ordered readers once; 1 when summaries apply. */
static int sum_ready(struct dataset *ds, struct err *e, int *rc)
{
	*rc = 0;
	if (!ds->summaries || ds->core->kind != DS_SQLITE)
		return 0;
	if (!ds->sum_tried) {
		const json_t *d = json_object_get(
			json_object_get(ds->core->catalog, "meta"), "duration");
		ds->sum_tried = 1;
		*rc = store_summary_open(store_db(ds->store), json_number_value(d),
		                         &ds->sum, e);
		if (!*rc && ds->sum)
			*rc = store_ordered_open(ds->store, &ds->ord, e);
		if (*rc) {
			store_summary_close(ds->sum);
			ds->sum = NULL;
			ds->sum_tried = 0;
		}
	}
	return !*rc && ds->sum && ds->ord;
}

int dataset_run_events(struct dataset *ds, int64_t profile, int *have,
                       int64_t *count, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_summary_events(ds->sum, profile, have, count, e);
}

int dataset_gpu_sum_names(struct dataset *ds, int64_t profile,
                          double duration, int *have, store_gpu_sum_fn fn,
                          void *ctx, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_gpu_sum_names(store_db(ds->store), profile, duration, have,
	                           fn, ctx, e);
}

int dataset_gpu_sum_keys(struct dataset *ds, int64_t profile,
                         double duration, int *have, store_gpukeys_fn fn,
                         void *ctx, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_gpukeys_read(store_db(ds->store), profile, duration, have,
	                          fn, ctx, e);
}

int dataset_gpu_sum_bins(struct dataset *ds, int64_t profile,
                         double duration, int64_t below, int *have,
                         store_gpu_bin_fn fn, void *ctx, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_gpu_sum_bins(store_db(ds->store), profile, duration, below,
	                          have, fn, ctx, e);
}

int dataset_run_samples(struct dataset *ds, int64_t profile, int *have,
                        int64_t *total, dataset_stack_fn fn, void *ctx,
                        struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_summary_samples(ds->sum, profile, have, total, fn, ctx, e);
}

int dataset_run_series(struct dataset *ds, int64_t series, int *have,
                       struct numstats *out, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_summary_series(ds->sum, series, have, out, e);
}

int dataset_run_names(struct dataset *ds, int64_t profile, int *have,
                      dataset_name_fn fn, void *ctx, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_sumnames_profile(store_summary_names(ds->sum), profile, have,
	                              fn, ctx, e);
}

int dataset_name_bins(struct dataset *ds, const struct row_bins *b,
                      int *have, const struct store_sumnames_visit *v,
                      struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_sumnames_bins(store_summary_names(ds->sum), b, have, v, e);
}

int dataset_range_bins(struct dataset *ds, const struct row_bins *b,
                       int by_name, int *have,
                       const struct store_sumnames_visit *v, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_sumnames_timeline(store_summary_names(ds->sum), b, by_name,
	                               have, v, e);
}

int dataset_sample_bins(struct dataset *ds, const struct row_bins *b,
                        int *have, store_sumbins_sample_fn fn, void *ctx,
                        struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_sumbins_samples(store_summary_bins(ds->sum), b, have, fn,
	                             ctx, e);
}

int dataset_point_bins(struct dataset *ds, const struct row_bins *b,
                       int *have, store_sumbins_point_fn fn, void *ctx,
                       struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	return store_sumbins_points(store_summary_bins(ds->sum), b, have, fn,
	                            ctx, e);
}

int dataset_events_by_start(struct dataset *ds, int64_t profile,
                            const struct row_window *w, int *have,
                            row_event_fn fn, void *ctx, struct err *e)
{
	int rc;

	*have = 0;
	if (!sum_ready(ds, e, &rc))
		return rc;
	*have = 1;
	return store_ordered_events(ds->ord, profile, w->start, w->end, fn, ctx,
	                            e);
}
