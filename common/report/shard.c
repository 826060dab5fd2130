/* shard: detail shard cutting, gzip, SHA-256 names, descriptors; density
 * bins (see shard.h). */
#include "report/shard.h"
#include "base/fdio.h"
#include "base/gz.h"
#include "base/hash.h"
#include "base/jsonout.h"
#include "base/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUEUE_SLOTS 4

/* One cut shard on its way to the worker. */
struct job {
	struct shard_desc *desc; /* filled by the worker */
	char *data;              /* decoded JSON text, owned */
	size_t len;
};

/* Rows of one (kind, index) not yet flushed, and its descriptors. */
struct stream {
	struct buf rows;   /* "[row,row" without the closing bracket */
	uint64_t count;
	uint64_t budget;   /* 2 + sum(row length + 1) */
	double bounds[4];
	struct shard_desc **descs;
	size_t ndescs, cap;
};

struct streams {
	struct stream **v; /* by index; NULL until the first row */
	size_t n;
};

struct shard_writer {
	char *dir;
	struct streams kinds[SHARD_KINDS];
	struct stream *active; /* the stream rows went to last */
	struct buf row;        /* scratch: one formatted row */

	/* density */
	double duration; /* > 0 when known before the first event */
	int events_seen;
	uint64_t *density; /* ndensity * SHARD_DENSITY_BINS */
	size_t ndensity;

	/* compression: the worker's state, or the caller's when no thread */
	struct gz gz;
	unsigned char *zout;
	size_t zcap;

	/* worker thread and queue */
	int threaded;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t not_empty, not_full;
	struct job queue[QUEUE_SLOTS];
	size_t qhead, qlen;
	int closing;   /* no more jobs will come */
	int failed;    /* worker error recorded in werr */
	struct err werr;
};

/* ---- hashing, compression, writing ------------------------------------ */

static int write_file(const char *dir, const char *sha, const unsigned char *p,
                      size_t n, struct err *e)
{
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s.json.gz", dir, sha) >= sizeof path)
		return err_set(e, ERR_DATA, "Shard path too long under %s", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno == EEXIST) /* same name, same bytes: already there */
			return 0;
		return err_sys(e, ERR_DATA, "Cannot create %s", path);
	}
	if (fdio_write_all(fd, p, n) != 0) {
		err_sys(e, ERR_DATA, "Cannot write %s", path);
		close(fd);
		unlink(path);
		return ERR_DATA;
	}
	/* start the write-back now, beside the build, so that the publish
	 * step's fsync of every file finds little left to wait for (a hint:
	 * an error here shows again at that fsync) */
	sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	if (close(fd) != 0) {
		err_sys(e, ERR_DATA, "Cannot write %s", path);
		unlink(path);
		return ERR_DATA;
	}
	return 0;
}

/* Compresses, hashes and writes one shard; fills its descriptor. */
static int process_job(struct shard_writer *w, struct job *j, struct err *e)
{
	size_t zlen = 0;
	int rc = gz_member(&w->gz, j->data, j->len, &w->zout, &w->zcap, &zlen,
	                   "a shard", e);

	if (rc)
		return rc;
	if ((rc = hash_sha256_hex(j->data, j->len, j->desc->decoded_sha256, e)) ||
	    (rc = hash_sha256_hex(w->zout, zlen, j->desc->sha256, e)))
		return rc;
	j->desc->bytes = zlen;
	j->desc->decoded_bytes = j->len;
	return write_file(w->dir, j->desc->sha256, w->zout, zlen, e);
}

int shard_write_text(const char *dir, const char *data, size_t len,
                     struct shard_desc *d, struct err *e)
{
	struct shard_writer w;
	struct job j = {d, (char *)data, len};
	int rc;

	memset(&w, 0, sizeof w);
	w.dir = (char *)dir;
	gz_init(&w.gz, SHARD_GZIP_LEVEL);
	rc = process_job(&w, &j, e);
	gz_free(&w.gz);
	free(w.zout);
	return rc;
}

static void *worker_main(void *arg)
{
	struct shard_writer *w = arg;

	for (;;) {
		struct job j;
		pthread_mutex_lock(&w->mu);
		while (w->qlen == 0 && !w->closing)
			pthread_cond_wait(&w->not_empty, &w->mu);
		if (w->qlen == 0) {
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		j = w->queue[w->qhead];
		w->qhead = (w->qhead + 1) % QUEUE_SLOTS;
		w->qlen--;
		int skip = w->failed;
		pthread_cond_signal(&w->not_full);
		pthread_mutex_unlock(&w->mu);

		if (!skip) {
			struct err e;
			err_clear(&e);
			if (process_job(w, &j, &e)) {
				pthread_mutex_lock(&w->mu);
				if (!w->failed) {
					w->failed = 1;
					w->werr = e;
				}
				pthread_cond_broadcast(&w->not_full);
				pthread_mutex_unlock(&w->mu);
			}
		}
		free(j.data);
	}
}

/* Hands a job over (takes j.data).  Blocks while the queue is full. */
static int submit(struct shard_writer *w, struct job j, struct err *e)
{
	if (!w->threaded) {
		int rc = process_job(w, &j, e);
		free(j.data);
		return rc;
	}
	pthread_mutex_lock(&w->mu);
	while (w->qlen == QUEUE_SLOTS && !w->failed)
		pthread_cond_wait(&w->not_full, &w->mu);
	if (w->failed) {
		*e = w->werr;
		pthread_mutex_unlock(&w->mu);
		free(j.data);
		return e->code ? e->code : ERR_DATA;
	}
	w->queue[(w->qhead + w->qlen) % QUEUE_SLOTS] = j;
	w->qlen++;
	pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

int shard_writer_submit(struct shard_writer *w, char *data, size_t len,
                        struct shard_desc *d, struct err *e)
{
	struct job j = {d, data, len};
	return submit(w, j, e);
}

/* ---- streams and the cut rule ----------------------------------------- */

static struct stream *stream_get(struct shard_writer *w, int kind,
                                 int64_t index, struct err *e)
{
	struct streams *s = &w->kinds[kind];

	if (index < 0 || (uint64_t)index > SIZE_MAX / sizeof(void *) / 2) {
		err_set(e, ERR_DATA, "Shard stream index out of range: %lld",
		        (long long)index);
		return NULL;
	}
	if (vec_reserve_zero(&s->v, &s->n, (size_t)index + 1, sizeof *s->v)) {
		err_set(e, ERR_NOMEM, "Out of memory cutting shards");
		return NULL;
	}
	if (!s->v[index]) {
		struct stream *st = calloc(1, sizeof *st);
		if (!st) {
			err_set(e, ERR_NOMEM, "Out of memory cutting shards");
			return NULL;
		}
		buf_init(&st->rows, 0);
		s->v[index] = st;
	}
	return s->v[index];
}

/* Cuts the stream's pending rows into a shard (no-op when empty). */
static int stream_flush(struct shard_writer *w, struct stream *st, struct err *e)
{
	struct shard_desc *d;
	struct job j;
	size_t len;

	if (st->count == 0)
		return 0;
	buf_putc(&st->rows, ']');
	if (st->rows.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting shards");
	if (vec_reserve(&st->descs, &st->cap, st->ndescs + 1, sizeof *st->descs))
		return err_set(e, ERR_NOMEM, "Out of memory cutting shards");
	d = calloc(1, sizeof *d);
	if (!d)
		return err_set(e, ERR_NOMEM, "Out of memory cutting shards");
	d->count = st->count;
	memcpy(d->bounds, st->bounds, sizeof d->bounds);
	st->descs[st->ndescs++] = d;

	j.desc = d;
	j.data = buf_detach(&st->rows, &len);
	j.len = len;
	buf_init(&st->rows, 0);
	st->count = 0;
	st->budget = 0;
	return submit(w, j, e);
}

/* Appends w->row (one formatted row) to the stream, cutting as needed. */
static int stream_add(struct shard_writer *w, int kind, int64_t index,
                      double start, double end, struct err *e)
{
	struct stream *st;
	size_t len = w->row.len;
	int rc;

	if (w->row.failed)
		return err_set(e, w->row.failed == ERR_LIMIT ? ERR_LIMIT : ERR_NOMEM,
		               "Cannot format a shard row");
	st = stream_get(w, kind, index, e);
	if (!st)
		return e->code;
	if (w->active && w->active != st && (rc = stream_flush(w, w->active, e)))
		return rc;
	w->active = st;
	if (st->count > 0 && (st->count + 1 > SHARD_MAX_ROWS ||
	                      st->budget + len + 1 > SHARD_MAX_DECODED)) {
		if ((rc = stream_flush(w, st, e)))
			return rc;
	}
	if (st->count == 0) {
		buf_putc(&st->rows, '[');
		st->budget = 2;
	} else {
		buf_putc(&st->rows, ',');
	}
	shard_bounds_add(st->bounds, st->count == 0, start, end);
	buf_append(&st->rows, w->row.data, len);
	if (st->rows.failed)
		return err_set(e, ERR_NOMEM, "Out of memory cutting shards");
	st->count++;
	st->budget += len + 1;
	return 0;
}

/* ---- density ----------------------------------------------------------- */

static long bin_of(double t, double duration)
{
	double x = floor(t * SHARD_DENSITY_BINS / duration);
	if (!(x >= 0))
		return 0;
	if (x > SHARD_DENSITY_BINS - 1)
		return SHARD_DENSITY_BINS - 1;
	return (long)x;
}

void shard_bounds_add(double b[4], int first, double start, double end)
{
	if (first) {
		b[0] = b[2] = start;
		b[1] = b[3] = end;
		return;
	}
	if (start < b[0]) b[0] = start;
	if (end < b[1]) b[1] = end;
	if (start > b[2]) b[2] = start;
	if (end > b[3]) b[3] = end;
}

void shard_density_add(uint64_t bins[SHARD_DENSITY_BINS], double duration,
                       double start, double end)
{
	if (!(duration > 0) || !(start <= duration) || !(end >= 0))
		return;
	long a = bin_of(start, duration), b = bin_of(end, duration);
	for (long i = a; i <= b; i++)
		bins[i]++;
}

static int density_add_live(struct shard_writer *w, int64_t profile,
                            double start, double end, struct err *e)
{
	/* one element = one profile's bins */
	if (vec_reserve_zero(&w->density, &w->ndensity, (size_t)profile + 1,
	                     SHARD_DENSITY_BINS * sizeof *w->density))
		return err_set(e, ERR_NOMEM, "Out of memory for density bins");
	shard_density_add(w->density + (size_t)profile * SHARD_DENSITY_BINS,
	                  w->duration, start, end);
	return 0;
}

int shard_density_from_db(sqlite3 *db, double duration, size_t nprofiles,
                          uint64_t *bins, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (nprofiles)
		memset(bins, 0, nprofiles * SHARD_DENSITY_BINS * sizeof *bins);
	if (sqlite3_prepare_v2(db, "SELECT profile, start, end FROM events",
	                       -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "Cannot read events for density: %s",
		               sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 p = sqlite3_column_int64(st, 0);
		if (p < 0 || (uint64_t)p >= nprofiles) {
			sqlite3_finalize(st);
			return err_set(e, ERR_DATA, "Event of unknown profile %lld in the store",
			               (long long)p);
		}
		shard_density_add(bins + (size_t)p * SHARD_DENSITY_BINS, duration,
		                  sqlite3_column_double(st, 1),
		                  sqlite3_column_double(st, 2));
	}
	if (rc != SQLITE_DONE) {
		err_set(e, ERR_DATA, "Cannot read events for density: %s",
		        sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return ERR_DATA;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- sink callbacks ---------------------------------------------------- */

int shard_writer_event(void *ctx, int64_t profile, int64_t ordinal,
                       const struct row_event *r, struct err *e)
{
	struct shard_writer *w = ctx;
	(void)ordinal;

	if (!w->events_seen) {
		w->events_seen = 1;
		if (!(w->duration > 0))
			w->duration = -1; /* too late: density from the store */
	}
	buf_reset(&w->row);
	buf_putc(&w->row, '[');
	jsonout_real(&w->row, r->start);
	buf_putc(&w->row, ',');
	jsonout_real(&w->row, r->end);
	buf_putc(&w->row, ',');
	jsonout_int(&w->row, r->name);
	buf_putc(&w->row, ',');
	jsonout_str(&w->row, r->tid, r->tid_len);
	buf_putc(&w->row, ',');
	jsonout_int(&w->row, r->source_row);
	buf_putc(&w->row, ']');
	int rc = stream_add(w, SHARD_EVENTS, profile, r->start, r->end, e);
	if (!rc && w->duration > 0)
		rc = density_add_live(w, profile, r->start, r->end, e);
	return rc;
}

int shard_writer_sample(void *ctx, int64_t profile, int64_t ordinal,
                        const struct row_sample *r, struct err *e)
{
	struct shard_writer *w = ctx;
	(void)ordinal;

	buf_reset(&w->row);
	row_sample_print(&w->row, r, NULL, NULL);
	return stream_add(w, SHARD_SAMPLES, profile, r->time, r->time, e);
}

int shard_writer_point(void *ctx, int64_t series, int64_t ordinal,
                       const struct row_point *r, struct err *e)
{
	struct shard_writer *w = ctx;
	(void)ordinal;

	buf_reset(&w->row);
	row_point_print(&w->row, r, NULL, NULL);
	return stream_add(w, SHARD_POINTS, series, r->time, r->time, e);
}

/* An integer of a GPU row, or null. */
static void gpu_int(struct buf *b, const struct row_gpu *r, int slot)
{
	buf_putc(b, ',');
	if (r->nulls & (1u << slot))
		buf_puts(b, "null");
	else
		jsonout_int(b, r->v[slot]);
}

static void gpu_index(struct buf *b, int64_t k)
{
	buf_putc(b, ',');
	if (k >= 0)
		jsonout_int(b, k);
	else
		buf_puts(b, "null");
}

void shard_gpu_text(struct buf *b, const struct row_gpu *r)
{
	buf_reset(b);
	buf_putc(b, '[');
	jsonout_real(b, r->start);
	buf_putc(b, ',');
	jsonout_real(b, r->end);
	buf_putc(b, ',');
	jsonout_int(b, r->kind);
	gpu_int(b, r, ROW_GPU_DEVICE);
	gpu_int(b, r, ROW_GPU_STREAM);
	gpu_index(b, r->name);
	gpu_int(b, r, ROW_GPU_CORRELATION);
	buf_putc(b, ',');
	if (r->launch_tid) {
		jsonout_str(b, r->launch_tid, r->launch_tid_len);
		buf_putc(b, ',');
		jsonout_real(b, r->launch_start);
	} else {
		buf_puts(b, "null,null");
	}
	gpu_index(b, r->launch_name);
	gpu_index(b, r->nvtx);
	buf_putc(b, ',');
	jsonout_int(b, r->source_row);
	gpu_index(b, r->short_name);
	for (int k = ROW_GPU_BYTES; k <= ROW_GPU_GRAPH_NODE; k++)
		gpu_int(b, r, k);
	buf_putc(b, ']');
}

int shard_writer_gpu(void *ctx, int64_t profile, int64_t ordinal,
                     const struct row_gpu *r, struct err *e)
{
	struct shard_writer *w = ctx;
	(void)ordinal;
	shard_gpu_text(&w->row, r);
	return stream_add(w, SHARD_GPU, profile, r->start, r->end, e);
}

int shard_writer_add_text(struct shard_writer *w, enum shard_kind kind,
                          int64_t index, double start, double end,
                          const char *text, size_t len, struct err *e)
{
	buf_reset(&w->row);
	buf_append(&w->row, text, len);
	return stream_add(w, (int)kind, index, start, end, e);
}

void shard_writer_sink(struct shard_writer *w, struct row_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ctx = w;
	sink->event = shard_writer_event;
	sink->sample = shard_writer_sample;
	sink->point = shard_writer_point;
	sink->gpu = shard_writer_gpu;
}

/* ---- lifecycle --------------------------------------------------------- */

int shard_writer_open(struct shard_writer **out,
                      const struct shard_writer_opts *opts, struct err *e)
{
	struct shard_writer *w = calloc(1, sizeof *w);

	*out = NULL;
	if (!w || !(w->dir = strdup(opts->dir))) {
		free(w);
		return err_set(e, ERR_NOMEM, "Out of memory starting the shard writer");
	}
	gz_init(&w->gz, opts->level ? opts->level : SHARD_GZIP_LEVEL);
	buf_init(&w->row, 0);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->not_empty, NULL);
	pthread_cond_init(&w->not_full, NULL);
	if (opts->threads > 0) {
		int rc = pthread_create(&w->thread, NULL, worker_main, w);
		if (rc != 0) {
			errno = rc;
			err_sys(e, ERR_DATA, "Cannot start the shard thread");
			shard_writer_free(w);
			return ERR_DATA;
		}
		w->threaded = 1;
	}
	*out = w;
	return 0;
}

void shard_writer_set_duration(struct shard_writer *w, double duration)
{
	if (!w->events_seen && duration > 0 && isfinite(duration))
		w->duration = duration;
}

static void stop_worker(struct shard_writer *w)
{
	if (!w->threaded)
		return;
	pthread_mutex_lock(&w->mu);
	w->closing = 1;
	pthread_cond_signal(&w->not_empty);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->threaded = 0;
}

int shard_writer_finish(struct shard_writer *w, struct err *e)
{
	int rc = 0;

	for (int k = 0; k < SHARD_KINDS && !rc; k++)
		for (size_t i = 0; i < w->kinds[k].n && !rc; i++)
			if (w->kinds[k].v[i])
				rc = stream_flush(w, w->kinds[k].v[i], e);
	w->active = NULL;
	stop_worker(w);
	if (!rc && w->failed) {
		*e = w->werr;
		rc = e->code ? e->code : ERR_DATA;
	}
	return rc;
}

void shard_writer_free(struct shard_writer *w)
{
	if (!w)
		return;
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->failed = 1; /* drop what is queued */
		pthread_mutex_unlock(&w->mu);
		stop_worker(w);
	}
	for (int k = 0; k < SHARD_KINDS; k++) {
		for (size_t i = 0; i < w->kinds[k].n; i++) {
			struct stream *st = w->kinds[k].v[i];
			if (!st)
				continue;
			for (size_t d = 0; d < st->ndescs; d++)
				free(st->descs[d]);
			free(st->descs);
			buf_free(&st->rows);
			free(st);
		}
		free(w->kinds[k].v);
	}
	gz_free(&w->gz);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->not_empty);
	pthread_cond_destroy(&w->not_full);
	free(w->zout);
	free(w->density);
	buf_free(&w->row);
	free(w->dir);
	free(w);
}

/* ---- results ----------------------------------------------------------- */

const struct shard_desc *const *shard_writer_descs(const struct shard_writer *w,
                                                   enum shard_kind kind,
                                                   int64_t index, size_t *n)
{
	const struct streams *s = &w->kinds[kind];

	if (index < 0 || (size_t)index >= s->n || !s->v[index]) {
		*n = 0;
		return NULL;
	}
	*n = s->v[index]->ndescs;
	return (const struct shard_desc *const *)s->v[index]->descs;
}

int shard_desc_set_names(json_t *o, const struct shard_desc *d)
{
	char url[80];

	snprintf(url, sizeof url, "detail/%s.json.gz", d->sha256);
	return json_object_set_new(o, "url", json_string(url)) |
	       json_object_set_new(o, "sha256", json_string(d->sha256)) |
	       json_object_set_new(o, "decoded_sha256",
	                           json_string(d->decoded_sha256)) |
	       json_object_set_new(o, "bytes", json_integer((json_int_t)d->bytes)) |
	       json_object_set_new(o, "decoded_bytes",
	                           json_integer((json_int_t)d->decoded_bytes));
}

json_t *shard_desc_json(const struct shard_desc *d)
{
	json_t *o = json_object(), *b = json_array();

	for (int i = 0; i < 4; i++)
		json_array_append_new(b, json_real(d->bounds[i]));
	shard_desc_set_names(o, d);
	json_object_set_new(o, "count", json_integer((json_int_t)d->count));
	json_object_set_new(o, "bounds", b);
	return o;
}

json_t *shard_writer_descs_json(const struct shard_writer *w,
                                enum shard_kind kind, int64_t index)
{
	size_t n;
	const struct shard_desc *const *d = shard_writer_descs(w, kind, index, &n);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, shard_desc_json(d[i]));
	return a;
}

size_t shard_writer_total(const struct shard_writer *w)
{
	size_t n = 0;
	for (int k = 0; k < SHARD_KINDS; k++)
		for (size_t i = 0; i < w->kinds[k].n; i++)
			if (w->kinds[k].v[i])
				n += w->kinds[k].v[i]->ndescs;
	return n;
}

static int cmp_desc(const void *a, const void *b)
{
	const struct shard_desc *x = *(const struct shard_desc *const *)a;
	const struct shard_desc *y = *(const struct shard_desc *const *)b;
	return strcmp(x->sha256, y->sha256);
}

/* Every descriptor, sorted by name (caller frees the array). */
static const struct shard_desc **sorted_descs(const struct shard_writer *w,
                                              size_t *n)
{
	size_t total = shard_writer_total(w), k = 0;
	const struct shard_desc **v = malloc((total ? total : 1) * sizeof *v);

	*n = 0;
	if (!v)
		return NULL;
	for (int kind = 0; kind < SHARD_KINDS; kind++)
		for (size_t i = 0; i < w->kinds[kind].n; i++) {
			struct stream *st = w->kinds[kind].v[i];
			for (size_t d = 0; st && d < st->ndescs; d++)
				v[k++] = st->descs[d];
		}
	qsort(v, k, sizeof *v, cmp_desc);
	*n = k;
	return v;
}

json_t *shard_writer_files(const struct shard_writer *w)
{
	size_t n;
	const struct shard_desc **v = sorted_descs(w, &n);
	json_t *a = json_array();
	char path[80];

	for (size_t i = 0; v && i < n; i++) {
		if (i > 0 && strcmp(v[i]->sha256, v[i - 1]->sha256) == 0)
			continue;
		snprintf(path, sizeof path, "detail/%s.json.gz", v[i]->sha256);
		json_array_append_new(a, json_string(path));
	}
	free(v);
	return a;
}

uint64_t shard_writer_bytes(const struct shard_writer *w)
{
	size_t n;
	const struct shard_desc **v = sorted_descs(w, &n);
	uint64_t sum = 0;

	for (size_t i = 0; v && i < n; i++)
		if (i == 0 || strcmp(v[i]->sha256, v[i - 1]->sha256) != 0)
			sum += v[i]->bytes;
	free(v);
	return sum;
}

int shard_writer_has_density(const struct shard_writer *w)
{
	return w->duration > 0 || !w->events_seen;
}

void shard_writer_density(const struct shard_writer *w, int64_t profile,
                          uint64_t out[SHARD_DENSITY_BINS])
{
	if (profile >= 0 && (size_t)profile < w->ndensity)
		memcpy(out, w->density + (size_t)profile * SHARD_DENSITY_BINS,
		       SHARD_DENSITY_BINS * sizeof *out);
	else
		memset(out, 0, SHARD_DENSITY_BINS * sizeof *out);
}
