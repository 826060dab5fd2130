/* nsys: import Nsight Systems SQLite exports (see nsys.h, doc/nsight-import.md).
 *
 * This file owns the orchestration: expanding the given paths (directories
 * walked recursively for *.sqlite in byte order of relative paths), the
 * first pass over every export's metadata (errors, skips, the run origin),
 * the second, streaming pass (nsys_profile) and the document edits:
 * profiles, sources, workers, audit counters, warnings, capabilities, and
 * the whole document of an Nsight-only build. */
#include "ingest/nsys.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/buf.h"
#include "base/vec.h"
#include "ingest/capabilities.h"
#include "ingest/nsys_export.h"
#include "ingest/nsys_name.h"
#include "ingest/nsys_profile.h"

struct item {
	char *path;    /* to open */
	char *display; /* as named to the user */
	const char *file; /* base name, points into path */
	int skipped;
	int64_t cap_start_abs, cap_stop_abs;
	uint64_t bytes; /* file size, for progress */
};

struct items {
	struct item *v;
	size_t n, cap;
};

static void items_free(struct items *it)
{
	for (size_t i = 0; i < it->n; i++) {
		free(it->v[i].path);
		free(it->v[i].display);
	}
	free(it->v);
}

static int items_add(struct items *it, const char *path, const char *display)
{
	if (vec_reserve(&it->v, &it->cap, it->n + 1, sizeof *it->v))
		return -1;
	struct item *x = &it->v[it->n];
	memset(x, 0, sizeof *x);
	x->path = strdup(path);
	x->display = strdup(display);
	if (!x->path || !x->display) {
		free(x->path);
		free(x->display);
		return -1;
	}
	const char *slash = strrchr(x->path, '/');
	x->file = slash ? slash + 1 : x->path;
	it->n++;
	return 0;
}

static int warn(json_t *warnings, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int warn(json_t *warnings, struct err *e, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	buf_init(&b, 0);
	va_start(ap, fmt);
	char tmp[2048];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	buf_puts(&b, tmp);
	json_t *s = b.failed ? NULL : nsys_export_string(b.data, b.len);
	buf_free(&b);
	if (!s || json_array_append_new(warnings, s) != 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

/* A walked directory's relative file names. */
struct names {
	char **v;
	size_t n, cap;
	size_t reps; /* .nsys-rep files seen */
};

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int walk(const char *root, const char *rel, struct names *out,
                struct err *e, int depth)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel) >=
	    (int)sizeof dir)
		return err_set(e, ERR_DATA, "%s/%s: path too long", root, rel);
	if (depth > 64)
		return err_set(e, ERR_DATA, "%s: directories nested too deeply",
		               dir);
	DIR *d = opendir(dir);
	if (!d)
		return err_sys(e, ERR_DATA, "%s: cannot read the directory", dir);
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		char child[PATH_MAX], full[PATH_MAX];
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "",
		             de->d_name) >= (int)sizeof child ||
		    snprintf(full, sizeof full, "%s/%s", root, child) >=
		    (int)sizeof full) {
			rc = err_set(e, ERR_DATA, "%s/%s: path too long", dir,
			             de->d_name);
			break;
		}
		if (lstat(full, &st) != 0) {
			rc = err_sys(e, ERR_DATA, "%s: cannot stat", full);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = walk(root, child, out, e, depth + 1);
			continue;
		}
		if (ends_with(de->d_name, ".nsys-rep")) {
			out->reps++;
			continue;
		}
		if (!ends_with(de->d_name, ".sqlite"))
			continue;
		if (vec_reserve(&out->v, &out->cap, out->n + 1, sizeof *out->v)) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		if (!(out->v[out->n] = strdup(child))) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			break;
		}
		out->n++;
	}
	closedir(d);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expands the given paths into exports to import. */
static int expand(const char *const *paths, size_t npaths, struct items *it,
                  json_t *warnings, struct err *e)
{
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		int rc = 0;
		if (stat(paths[i], &st) != 0)
			return err_sys(e, ERR_DATA, "%s: cannot open the Nsight "
			               "export", paths[i]);
		if (!S_ISDIR(st.st_mode)) {
			if (items_add(it, paths[i], paths[i]) != 0)
				return err_set(e, ERR_NOMEM, "out of memory");
			continue;
		}
		struct names nm = {0};
		rc = walk(paths[i], "", &nm, e, 0);
		if (rc == 0) {
			if (nm.n)
				qsort(nm.v, nm.n, sizeof *nm.v, cmp_str);
			if (nm.n == 0 && nm.reps)
				rc = warn(warnings, e, "%s: holds only .nsys-rep "
				          "files, which are not parsed; export each "
				          "with `nsys export --type sqlite --output "
				          "X.sqlite X.nsys-rep` first.", paths[i]);
			else if (nm.n == 0)
				rc = warn(warnings, e, "%s: no *.sqlite Nsight "
				          "export found.", paths[i]);
		}
		for (size_t k = 0; k < nm.n; k++) {
			char full[PATH_MAX * 2];
			snprintf(full, sizeof full, "%s%s%s", paths[i],
			         ends_with(paths[i], "/") ? "" : "/", nm.v[k]);
			if (rc == 0 && items_add(it, full, full) != 0)
				rc = err_set(e, ERR_NOMEM, "out of memory");
			free(nm.v[k]);
		}
		free(nm.v);
		if (rc)
			return rc;
	}
	return 0;
}

/* Parses a decimal int64 string exactly. */
static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	if (!s || !*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* The array at key of o, created when missing. */
static json_t *array_at(json_t *o, const char *key)
{
	json_t *a = json_object_get(o, key);
	if (json_is_array(a))
		return a;
	a = json_array();
	if (!a || json_object_set_new(o, key, a) != 0)
		return NULL;
	return a;
}

static int audit_add(json_t *audit, const char *key, uint64_t n)
{
	json_t *v = json_object_get(audit, key);
	json_int_t base = json_is_integer(v) ? json_integer_value(v) : 0;
	return json_object_set_new(audit, key,
	                           json_integer(base + (json_int_t)n));
}

/* Adds profile id to its worker's profiles, creating the worker entry. */
static int add_to_worker(json_t *workers, const json_t *profile)
{
	const char *wid = json_string_value(json_object_get(profile, "worker"));
	json_t *host = json_object_get(profile, "host");
	json_t *w = NULL;
	size_t i;
	json_t *v;
	json_array_foreach(workers, i, v) {
		const char *id = json_string_value(json_object_get(v, "id"));
		if (id && strcmp(id, wid) == 0) {
			w = v;
			break;
		}
	}
	if (!w) {
		struct nsys_name nm;
		nsys_name_parse(json_string_value(json_object_get(profile,
		                                                  "file")), &nm);
		const char *role = nm.mapped ? nm.role : "unmapped";
		w = json_pack("{s:s,s:s,s:o,s:O,s:[],s:[],s:[],s:[]}",
		              "id", wid, "role", role, "index",
		              nm.mapped && nm.index >= 0 ?
		              json_integer(nm.index) : json_null(),
		              "host", host, "hosts", "process_epochs",
		              "profiles", "metrics");
		if (!w || json_array_append_new(workers, w) != 0)
			return -1;
	}
	json_t *profiles = array_at(w, "profiles");
	json_t *hosts = array_at(w, "hosts");
	if (!profiles || !hosts ||
	    json_array_append(profiles, json_object_get(profile, "id")) != 0)
		return -1;
	if (json_is_string(host)) {
		int seen = 0;
		json_array_foreach(hosts, i, v)
			seen |= json_equal(v, host);
		if (!seen && json_array_append(hosts, host) != 0)
			return -1;
		if (json_is_null(json_object_get(w, "host")) &&
		    json_object_set(w, "host", host) != 0)
			return -1;
	}
	return 0;
}

/* Grows the per-profile counts of stats by one profile. */
static int stats_add(struct evstats *s, int64_t id, uint64_t ev,
                     uint64_t sm, uint64_t bytes)
{
	if (!s)
		return 0;
	if (evstats_note_profile(s, id))
		return -1;
	s->profile_events[id] = ev;
	s->profile_samples[id] = sm;
	s->events += ev;
	s->samples += sm;
	s->input_bytes += bytes;
	return 0;
}

/* The document of an Nsight-only build (no profiles yet). */
static json_t *new_document(const struct nsys_options *opt, int64_t origin,
                            const char *source_root)
{
	char org[32], utc[64];
	time_t secs = (time_t)(origin / 1000000000);
	int64_t frac = origin % 1000000000;
	struct tm tm;
	if (frac < 0) {
		frac += 1000000000;
		secs--;
	}
	snprintf(org, sizeof org, "%" PRId64, origin);
	gmtime_r(&secs, &tm);
	size_t n = strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%S", &tm);
	if (frac / 1000)
		n += (size_t)snprintf(utc + n, sizeof utc - n, ".%06" PRId64,
		                      frac / 1000);
	snprintf(utc + n, sizeof utc - n, "+00:00");
	json_t *meta = json_pack(
		"{s:s,s:s,s:s,s:f,s:s,s:s,s:s,s:b,s:s,s:s,s:n,"
		"s:[s,s],s:[]}",
		"job", opt && opt->job ? opt->job : "nsight",
		"origin_ns", org, "start_utc", utc, "duration", 1.0,
		"source_root", source_root, "phase", "nsight",
		"time_basis", "Nsight capture window: the union of the imported "
		"captures' bounds (no client requests)",
		"otel_enabled", 0, "session_key", "",
		"clock", "Nsight session UTC anchors; cross-host skew not "
		"calibrated", "iteration_timezone",
		"limitations",
		"NVTX ranges are annotations, not CUDA kernel measurements.",
		"Built from Nsight exports alone: no client requests, server "
		"spans or metrics.",
		"warnings");
	if (!meta)
		return NULL;
	return json_pack("{s:s,s:o,s:{},s:[],s:[],s:[],s:[],s:[],s:[],s:[],"
	                 "s:[],s:[]}",
	                 "schema", "srtctl-trace/1", "meta", meta, "audit",
	                 "sources", "requests", "sessions", "workers",
	                 "iterations", "server_spans", "metrics",
	                 "metric_catalog", "profiles");
}

/* What every export of one import shares (all borrowed): the document
 * the profiles join, the common origin, the bytes imported before this
 * export and in all (progress), the options, rows' sink, statistics and
 * the warnings list. */
struct import_run {
	json_t *doc;
	int64_t origin;
	uint64_t done, total;
	const struct nsys_options *opt;
	const struct row_sink *sink;
	struct evstats *stats;
	json_t *warnings;
};

/* Imports one export as the next profile of run->doc. */
static int import_one(struct item *it, const struct import_run *run,
                      struct err *e)
{
	json_t *doc = run->doc, *warnings = run->warnings;
	const struct nsys_options *opt = run->opt;
	const struct row_sink *sink = run->sink;
	struct evstats *stats = run->stats;
	struct nsys_export x;
	char *skip = NULL, abs[PATH_MAX], sha[65];
	int64_t bytes, mtime;
	int rc = nsys_export_open(it->path, it->display, &x, &skip, e);
	if (rc)
		return rc;
	if (skip) {
		rc = warn(warnings, e, "%s", skip);
		free(skip);
		return rc;
	}
	json_t *profiles = array_at(doc, "profiles");
	json_t *sources = array_at(doc, "sources");
	json_t *workers = array_at(doc, "workers");
	json_t *audit = json_object_get(doc, "audit");
	if (!json_is_object(audit)) {
		audit = json_object();
		if (!audit || json_object_set_new(doc, "audit", audit) != 0)
			audit = NULL;
	}
	if (!profiles || !sources || !workers || !audit) {
		nsys_export_close(&x);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	if (!realpath(it->path, abs)) {
		rc = err_sys(e, ERR_DATA, "%s: cannot resolve the path",
		             it->display);
		nsys_export_close(&x);
		return rc;
	}
	if ((rc = nsys_export_file_facts(it->path, it->display, &bytes, &mtime,
	                                 sha, sink ? sink->cancel : NULL, e)) != 0) {
		nsys_export_close(&x);
		return rc;
	}
	struct nsys_profile_in in = {
		.x = &x, .file = it->file, .origin_ns = run->origin,
		.max_events = opt ? opt->max_events : -1,
		.profile_id = (int64_t)json_array_size(profiles),
		.source_id = (int64_t)json_array_size(sources), .sink = sink,
		.file_bytes = it->bytes, .progress_base = run->done,
		.progress_total = run->total};
	struct nsys_profile_out out;
	rc = nsys_profile_import(&in, &out, e);
	nsys_export_close(&x);
	if (rc)
		return rc;
	rc = json_array_extend(warnings, out.gpu_warnings);
	json_decref(out.gpu_warnings);
	if (rc) {
		json_decref(out.profile);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	char mt[32];
	snprintf(mt, sizeof mt, "%" PRId64, mtime);
	json_t *src = json_pack("{s:I,s:o,s:s,s:I,s:s,s:s}", "id",
	                        (json_int_t)in.source_id, "path",
	                        nsys_export_string(abs, strlen(abs)), "kind",
	                        "nsight_sqlite", "bytes", (json_int_t)bytes,
	                        "modified_ns", mt, "sha256", sha);
	if (!src || json_array_append_new(sources, src) != 0 ||
	    json_array_append_new(profiles, out.profile) != 0 ||
	    add_to_worker(workers, out.profile) != 0 ||
	    audit_add(audit, "nsight_reports", 1) != 0 ||
	    audit_add(audit, "nsight_selected_events", out.events) != 0 ||
	    audit_add(audit, "nvtx_without_end", out.without_end) != 0 ||
	    audit_add(audit, "nvtx_invalid_or_boundary", out.invalid) != 0 ||
	    (out.invalid_text &&
	     audit_add(audit, "nsight_invalid_text", out.invalid_text) != 0) ||
	    (out.gpu_rows &&
	     audit_add(audit, "nsight_gpu_rows", out.gpu_rows) != 0) ||
	    (out.gpu_invalid &&
	     audit_add(audit, "nsight_gpu_invalid", out.gpu_invalid) != 0) ||
	    stats_add(stats, in.profile_id, out.events, out.samples,
	              (uint64_t)bytes) != 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (out.truncated &&
	    (rc = warn(warnings, e, "%s: NVTX event limit reached (%" PRId64
	               "); query coverage is partial.", it->file,
	               opt->max_events)) != 0)
		return rc;
	if (out.gpu_truncated)
		return warn(warnings, e, "%s: GPU row limit reached (%" PRId64
		            "); query coverage is partial.", it->file,
		            opt->max_events);
	return 0;
}

/* First pass: open every export once for its errors, skips and bounds. */
static int survey(struct items *it, json_t *warnings, struct err *e)
{
	for (size_t i = 0; i < it->n; i++) {
		struct nsys_export x;
		char *skip = NULL;
		int rc = nsys_export_open(it->v[i].path, it->v[i].display, &x,
		                          &skip, e);
		if (rc)
			return rc;
		if (skip) {
			it->v[i].skipped = 1;
			rc = warn(warnings, e, "%s", skip);
			free(skip);
			if (rc)
				return rc;
			continue;
		}
		struct stat st;
		it->v[i].bytes = stat(it->v[i].path, &st) == 0 ?
		                 (uint64_t)st.st_size : 0;
		it->v[i].cap_start_abs = x.cap_start_abs;
		it->v[i].cap_stop_abs = x.cap_stop_abs;
		nsys_export_close(&x);
	}
	return 0;
}

int nsys_import_all(const char *const *paths, size_t npaths,
                    json_t **catalog, const struct nsys_options *opt,
                    const struct row_sink *sink,
                    struct evstats *stats, struct err *e)
{
	struct items it = {0};
	json_t *warnings = json_array(), *doc = NULL;
	int64_t origin = 0, stop = 0;
	int rc, have = 0;

	if (!warnings)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = expand(paths, npaths, &it, warnings, e)) != 0 ||
	    (rc = survey(&it, warnings, e)) != 0)
		goto out;
	for (size_t i = 0; i < it.n; i++) {
		if (it.v[i].skipped)
			continue;
		if (!have || it.v[i].cap_start_abs < origin)
			origin = it.v[i].cap_start_abs;
		if (!have || it.v[i].cap_stop_abs > stop)
			stop = it.v[i].cap_stop_abs;
		have = 1;
	}
	if (*catalog) {
		doc = *catalog;
		json_t *meta = json_object_get(doc, "meta");
		if (parse_i64(json_string_value(json_object_get(meta,
		                                  "origin_ns")), &origin) != 0) {
			rc = err_set(e, ERR_DATA, "evidence document: "
			             "meta.origin_ns is not a decimal integer "
			             "string of 64-bit nanoseconds");
			goto out;
		}
	} else {
		if (!have) {
			const char *w = json_string_value(json_array_get(warnings, 0));
			rc = err_set(e, ERR_DATA, "no importable Nsight export "
			             "among the --nsys-sqlite paths%s%s",
			             w ? ": " : "", w ? w : "");
			goto out;
		}
		char root[PATH_MAX];
		if (!realpath(paths[0], root))
			snprintf(root, sizeof root, "%s", paths[0]);
		struct stat st;
		if (stat(root, &st) == 0 && !S_ISDIR(st.st_mode)) {
			char *slash = strrchr(root, '/');
			if (slash && slash != root)
				*slash = '\0';
		}
		doc = new_document(opt, origin, root);
		if (!doc) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
		int64_t span;
		if (__builtin_sub_overflow(stop, origin, &span)) {
			rc = err_set(e, ERR_DATA, "the imported Nsight captures "
			             "span more than 64-bit nanoseconds");
			goto out;
		}
		if (span <= 0) {
			rc = err_set(e, ERR_DATA, "the imported Nsight captures "
			             "have zero length: no run window");
			goto out;
		}
		json_object_set_new(json_object_get(doc, "meta"), "duration",
		                    json_real((double)span / 1e9));
	}
	uint64_t total = 0, done = 0;
	for (size_t i = 0; i < it.n; i++)
		total += it.v[i].skipped ? 0 : it.v[i].bytes;
	for (size_t i = 0; i < it.n; i++) {
		if (it.v[i].skipped)
			continue;
		struct import_run run = {doc, origin, done, total, opt, sink,
		                         stats, warnings};
		if ((rc = import_one(&it.v[i], &run, e)) != 0)
			goto out;
		done += it.v[i].bytes;
		if (sink && sink->progress)
			sink->progress(sink->ctx, done, total);
	}
	json_t *meta = json_object_get(doc, "meta");
	json_t *mw = json_is_object(meta) ? array_at(meta, "warnings") : NULL;
	if (!mw || json_array_extend(mw, warnings) != 0) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	json_t *caps = capabilities_compute(doc,
	                                     stats ? stats->series_points : NULL,
	                                     stats ? stats->nseries : 0);
	if (!caps || json_object_set_new(doc, "capabilities", caps) != 0) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	*catalog = doc;
	doc = NULL;
	rc = 0;
out:
	if (doc && doc != *catalog)
		json_decref(doc);
	json_decref(warnings);
	items_free(&it);
	return rc;
}
