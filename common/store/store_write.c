/* store_write: the SQLite v1 writer (see store_write.h). */
#include "store/store_write.h"
#include "base/cancel.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/num.h"
#include "store/store_catrow.h"
#include "store/store_depth.h"
#include "store/store_durations.h"
#include "store/store_summary.h"
#include "store/store_typed.h"
#include "store/store_views.h"
#include "store/store_ext.h"
#include "store/store_gpu.h"
#include "store/store_gpukeys.h"
#include "store/store_late.h"

#define BATCH_ROWS 16384
#define BATCH_TEXT (2u << 20)
#define QUEUE_MAX 4 /* full batches waiting for the writer thread */
#define MULTI_ROWS 32 /* rows per multi-row INSERT */
#define BATCH_ELEMS 1024 /* catalog elements per batch */
#define BATCH_GPU 8192 /* GPU rows per batch */

static const char schema_sql[] =
	"CREATE TABLE catalog   (json TEXT NOT NULL, generation TEXT NOT NULL);"
	"CREATE TABLE events    (profile INTEGER, ordinal INTEGER, bucket INTEGER,"
	" start REAL, end REAL, name INTEGER, tid TEXT, source_row INTEGER,"
	" PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	"CREATE TABLE durations (profile INTEGER, bucket INTEGER, maximum REAL,"
	" PRIMARY KEY (profile, bucket)) WITHOUT ROWID;"
	"CREATE TABLE samples   (profile INTEGER, ordinal INTEGER, time REAL,"
	" payload TEXT, PRIMARY KEY (profile, ordinal)) WITHOUT ROWID;"
	"CREATE TABLE points    (series INTEGER, ordinal INTEGER, time REAL,"
	" payload TEXT, PRIMARY KEY (series, ordinal)) WITHOUT ROWID;"
	/* before the load: rows arrive about in key order, so an insert
	 * appends (doc/performance.md "Window indexes during the load") */
	"CREATE INDEX event_window  ON events  (profile, bucket, start);"
	"CREATE INDEX point_window  ON points  (series, time);";

static const char index_sql[] =
	"CREATE INDEX sample_window ON samples (profile, time);";

/* REC_DEPTH: a range's nesting depth (store_depth.h), computed as the
 * ranges arrive and loaded beside them */
enum rec_kind { REC_EVENT, REC_SAMPLE, REC_POINT, REC_DEPTH, REC_KINDS };

/* One row waiting to be inserted.  Its text lives in the batch's text
 * buffer: an event's tid, or a sample's or point's whole payload JSON,
 * formatted by the producer (which also keeps the summaries), so the
 * writer thread, the load's bottleneck, only binds and inserts. */
static const int rec_cols[REC_KINDS] = {8, 4, 4, 3};
static const char *const rec_what[REC_KINDS] = {"events", "samples", "points",
                                                "nvtx depths"};

struct rec {
	int64_t key, ordinal;
	int64_t name;       /* event: name index; sample: stack; point: source
	                       id; depth: the depth */
	int64_t source_row;
	double t0, t1;      /* event: start, end; sample/point: time, - */
	size_t off, len;    /* event: tid; sample/point: payload */
	size_t voff, vlen;  /* sample/point: the payload's second element */
	struct num value;   /* point value (big: its digits at voff/vlen) */
	int kind, bucket;   /* bucket: an event's duration bucket */
};

struct batch {
	struct rec *recs;
	size_t n;
	struct ext_rec *elems; /* catalog collection elements */
	size_t nelems;
	struct store_gpu_rec *gpus; /* GPU rows (allocated on first use) */
	size_t ngpus;
	struct buf text;
	struct batch *next;
};

struct store_writer {
	char *path;
	sqlite3 *db;
	sqlite3_stmt *ins[REC_KINDS];   /* one row, by rec_kind */
	sqlite3_stmt *multi[REC_KINDS]; /* MULTI_ROWS rows, by rec_kind */
	struct store_ext ext;   /* the extension tables' inserts */
	sqlite3_stmt *gpu_ins;  /* STORE_GPU_TABLE's insert */
	struct store_typed typed; /* the typed tables' inserts */

	/* touched by the producer only */
	struct store_durations dur; /* maxima by (profile, bucket) */
	struct store_summary_acc *sum; /* whole-run summaries */
	struct store_depth *depth; /* the ranges' depths */
	int depth_redo; /* ranges out of order: depths from the table */

	/* producer side */
	struct batch *cur;
	struct store_write_stats stats;
	uint64_t elements[EVIDENCE_NCOLLECTIONS];
	uint64_t element_bytes; /* their compact JSON, commas included */
	unsigned irregular[EVIDENCE_NCOLLECTIONS];

	/* queue between producer and writer thread */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *full_head, *full_tail;
	size_t nfull;
	struct batch *free_list;
	int done;       /* producer finished (or aborts) */
	int failed;     /* writer thread hit an error (err in thread_err) */
	struct err thread_err;
	int thread_started;
	pthread_t thread;
	struct store_late *late; /* the name index, between finish and settle */
	int late_begun;
};

static int db_fail(struct store_writer *w, struct err *e, const char *what)
{
	int sys = w->db ? sqlite3_system_errno(w->db) : 0;

	if (sys)
		return err_set(e, ERR_DATA, "cannot write %s (%s): %s (%s)",
		               w->path, what, sqlite3_errmsg(w->db), strerror(sys));
	return err_set(e, ERR_DATA, "cannot write %s (%s): %s", w->path, what,
	               w->db ? sqlite3_errmsg(w->db) : "out of memory");
}

static int exec(struct store_writer *w, const char *sql, const char *what,
                struct err *e)
{
	if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(w, e, what);
	return 0;
}

/* ---- writer thread ---- */

/* Appends the JSON payload of rec r, sample sm or point pt (the other
 * NULL), to batch b's text and records where it and its second element
 * are: the sample's tid or the point's value (the big-integer digits of
 * r->value, not owned, are dropped: the typed insert reads them from the
 * payload).  Returns 0, or an error when the row cannot be encoded. */
static int format_payload(struct batch *b, struct rec *r,
                          const struct row_sample *sm,
                          const struct row_point *pt, struct err *e)
{
	struct buf *out = &b->text;

	r->off = out->len;
	if (pt) {
		row_point_print(out, pt, &r->voff, &r->vlen);
		r->value.big = NULL;
	} else {
		row_sample_print(out, sm, &r->voff, &r->vlen);
	}
	r->len = out->len - r->off;
	if (out->failed)
		return err_set(e, out->failed == ERR_DATA ? ERR_DATA : ERR_NOMEM,
		               "%s of %s %lld: cannot encode the row (ordinal %lld)",
		               rec_what[r->kind],
		               r->kind == REC_POINT ? "series" : "profile",
		               (long long)r->key, (long long)r->ordinal);
	return 0;
}

/* Binds rec r of batch b as the row starting at parameter base of st. */
static void bind_rec(sqlite3_stmt *st, int base, const struct batch *b,
                     const struct rec *r)
{
	sqlite3_bind_int64(st, base, r->key);
	sqlite3_bind_int64(st, base + 1, r->ordinal);
	if (r->kind == REC_EVENT) {
		sqlite3_bind_int(st, base + 2, r->bucket);
		sqlite3_bind_double(st, base + 3, r->t0);
		sqlite3_bind_double(st, base + 4, r->t1);
		sqlite3_bind_int64(st, base + 5, r->name);
		/* "" when the batch holds no text yet: a NULL pointer would
		 * bind NULL, a tid the evidence cannot give */
		sqlite3_bind_text(st, base + 6, b->text.data ? b->text.data + r->off
		                                            : "",
		                  (int)r->len, SQLITE_STATIC);
		sqlite3_bind_int64(st, base + 7, r->source_row);
	} else if (r->kind == REC_DEPTH) {
		sqlite3_bind_int64(st, base + 2, r->name);
	} else {
		sqlite3_bind_double(st, base + 2, r->t0);
		sqlite3_bind_text(st, base + 3, b->text.data + r->off, (int)r->len,
		                  SQLITE_STATIC);
	}
}

/* Inserts the typed rows of the run of n sample or point rows r of
 * batch b. */
static int insert_typed(struct store_writer *w, const struct batch *b,
                        const struct rec *r, size_t n, struct err *e)
{
	enum store_typed_kind k = r->kind == REC_SAMPLE ? STORE_TYPED_SAMPLE
	                                                : STORE_TYPED_POINT;
	sqlite3_stmt *st = store_typed_stmt(&w->typed, k, (int)n);

	for (size_t j = 0; j < n; j++) {
		const struct rec *x = &r[j];
		const char *text = b->text.data + x->voff;
		if (k == STORE_TYPED_SAMPLE) {
			const struct row_sample s = {x->t0, text, x->vlen, x->name,
			                             x->source_row};
			store_typed_bind_sample(st, (int)j, x->key, x->ordinal, &s);
		} else
			store_typed_bind_point(st, (int)j, x->key, x->ordinal, x->t0,
			                       &x->value, text, x->vlen);
	}
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_fail(w, e, k == STORE_TYPED_SAMPLE
	                                             ? STORE_TYPED_SAMPLES
	                                             : STORE_TYPED_POINTS);
}

/* Inserts a batch: runs of MULTI_ROWS rows of one kind with the multi-row
 * statement, the rest one by one. */
static int insert_batch(struct store_writer *w, struct batch *b,
                        struct err *e)
{
	size_t i = 0;

	while (i < b->n) {
		const struct rec *r = &b->recs[i];
		size_t run = 1;
		while (run < MULTI_ROWS && i + run < b->n &&
		       b->recs[i + run].kind == r->kind)
			run++;
		int multi = run == MULTI_ROWS;
		sqlite3_stmt *st = multi ? w->multi[r->kind] : w->ins[r->kind];
		int ncols = rec_cols[r->kind];
		if (!multi)
			run = 1;
		for (size_t k = 0; k < run; k++)
			bind_rec(st, 1 + (int)k * ncols, b, &b->recs[i + k]);
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return db_fail(w, e, rec_what[r->kind]);
		if ((r->kind == REC_SAMPLE || r->kind == REC_POINT) &&
		    insert_typed(w, b, r, run, e))
			return e->code;
		i += run;
	}
	for (size_t k = 0; k < b->nelems; k++)
		if (store_ext_insert(&w->ext, b->text.data, &b->elems[k], e))
			return e->code;
	for (size_t k = 0; k < b->ngpus; k++)
		if (store_gpu_insert(w->db, w->gpu_ins, b->text.data, &b->gpus[k],
		                     e))
			return e->code;
	return 0;
}

static void *writer_thread(void *arg)
{
	struct store_writer *w = arg;
	struct err e;

	err_clear(&e);
	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->full_head && !w->done)
			pthread_cond_wait(&w->cv, &w->mu);
		struct batch *b = w->full_head;
		if (!b) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		w->full_head = b->next;
		if (!w->full_head)
			w->full_tail = NULL;
		w->nfull--;
		int skip = w->failed;
		pthread_mutex_unlock(&w->mu);

		int rc = skip ? 0 : insert_batch(w, b, &e);

		pthread_mutex_lock(&w->mu);
		if (rc && !w->failed) {
			w->failed = rc;
			w->thread_err = e;
		}
		b->n = 0;
		b->nelems = 0;
		b->ngpus = 0;
		buf_reset(&b->text);
		b->next = w->free_list;
		w->free_list = b;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	return NULL;
}

/* ---- producer side ---- */

static struct batch *batch_new(void)
{
	struct batch *b = calloc(1, sizeof *b);
	if (!b)
		return NULL;
	b->recs = malloc(BATCH_ROWS * sizeof *b->recs);
	b->elems = malloc(BATCH_ELEMS * sizeof *b->elems);
	if (!b->recs || !b->elems) {
		free(b->recs);
		free(b->elems);
		free(b);
		return NULL;
	}
	buf_init(&b->text, 0);
	return b;
}

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	free(b->recs);
	free(b->elems);
	free(b->gpus);
	buf_free(&b->text);
	free(b);
}

/* Hands the current batch to the writer thread and takes an empty one. */
static int push_batch(struct store_writer *w, struct err *e)
{
	struct batch *b = w->cur;

	if (b->text.failed)
		return err_set(e, b->text.failed, "out of memory buffering rows");
	pthread_mutex_lock(&w->mu);
	while (w->nfull >= QUEUE_MAX && !w->failed)
		pthread_cond_wait(&w->cv, &w->mu);
	if (w->failed) {
		*e = w->thread_err;
		pthread_mutex_unlock(&w->mu);
		return e->code;
	}
	b->next = NULL;
	if (w->full_tail)
		w->full_tail->next = b;
	else
		w->full_head = b;
	w->full_tail = b;
	w->nfull++;
	struct batch *nb = w->free_list;
	if (nb)
		w->free_list = nb->next;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (!nb)
		nb = batch_new();
	w->cur = nb;
	if (!nb)
		return err_set(e, ERR_NOMEM, "out of memory buffering rows");
	return 0;
}

/* The next row of the batch being filled, of kind and key (key, ordinal);
 * NULL with e set when out of memory or the writer failed. */
static struct rec *next_rec(struct store_writer *w, int kind, int64_t key,
                            int64_t ordinal, struct err *e)
{
	struct rec *r;

	if (!w->cur) {
		err_set(e, ERR_NOMEM, "out of memory buffering rows");
		return NULL;
	}
	if ((w->cur->n >= BATCH_ROWS || w->cur->text.len >= BATCH_TEXT) &&
	    push_batch(w, e))
		return NULL;
	r = &w->cur->recs[w->cur->n++];
	r->kind = kind;
	r->key = key;
	r->ordinal = ordinal;
	return r;
}

/* store_depth's emitter: a depth row into the batch being filled. */
static int emit_depth(void *ctx, int64_t profile, int64_t ordinal,
                      int64_t depth, struct err *e)
{
	struct rec *r = next_rec(ctx, REC_DEPTH, profile, ordinal, e);

	if (!r)
		return e->code;
	r->name = depth;
	return 0;
}

static int on_event(void *ctx, int64_t profile, int64_t ordinal,
                    const struct row_event *row, struct err *e)
{
	struct store_writer *w = ctx;
	struct rec *r = next_rec(w, REC_EVENT, profile, ordinal, e);

	if (!r)
		return e->code;
	r->t0 = row->start;
	r->t1 = row->end;
	r->bucket = row_bucket(row->start, row->end);
	r->name = row->name;
	r->source_row = row->source_row;
	r->off = w->cur->text.len;
	r->len = row->tid_len;
	buf_append(&w->cur->text, row->tid, row->tid_len);
	w->stats.events++;
	if (store_durations_note(&w->dur, profile, row->end - row->start,
	                         r->bucket, e) ||
	    store_summary_event(w->sum, profile, row->name, row->start,
	                        row->end, e))
		return e->code;
	return store_depth_add(w->depth, profile, ordinal, row->start, row->end,
	                       row->tid, row->tid_len, e);
}

static int on_sample(void *ctx, int64_t profile, int64_t ordinal,
                     const struct row_sample *row, struct err *e)
{
	struct store_writer *w = ctx;
	struct rec *r = next_rec(w, REC_SAMPLE, profile, ordinal, e);

	if (!r)
		return e->code;
	r->t0 = row->time;
	r->name = row->stack;
	r->source_row = row->source_row;
	w->stats.samples++;
	if (format_payload(w->cur, r, row, NULL, e))
		return e->code;
	return store_summary_sample(w->sum, profile, row->time, row->stack, e);
}

static int on_point(void *ctx, int64_t series, int64_t ordinal,
                    const struct row_point *row, struct err *e)
{
	struct store_writer *w = ctx;
	struct rec *r = next_rec(w, REC_POINT, series, ordinal, e);

	if (!r)
		return e->code;
	r->t0 = row->time;
	r->name = row->source_id;
	r->source_row = row->source_row;
	r->value = row->value;
	w->stats.points++;
	if (format_payload(w->cur, r, NULL, row, e))
		return e->code;
	return store_summary_point(w->sum, series, ordinal, row->time,
	                           &row->value, e);
}

static int on_element(void *ctx, enum evidence_collection c, int64_t ordinal,
                      const json_t *elem, struct err *e)
{
	struct store_writer *w = ctx;
	struct batch *b = w->cur;

	if (!b)
		return err_set(e, ERR_NOMEM, "out of memory buffering rows");
	if ((b->nelems >= BATCH_ELEMS || b->text.len >= BATCH_TEXT) &&
	    push_batch(w, e))
		return e->code;
	b = w->cur;
	if (store_ext_encode(&b->text, c, ordinal, elem, &b->elems[b->nelems],
	                     &w->irregular[c], e))
		return e->code;
	w->element_bytes += b->elems[b->nelems].json_len + (ordinal > 0);
	b->nelems++;
	w->elements[c]++;
	return 0;
}

static int on_gpu(void *ctx, int64_t profile, int64_t ordinal,
                  const struct row_gpu *row, struct err *e)
{
	struct store_writer *w = ctx;
	struct batch *b = w->cur;

	if (!b)
		return err_set(e, ERR_NOMEM, "out of memory buffering rows");
	if ((b->ngpus >= BATCH_GPU || b->text.len >= BATCH_TEXT) &&
	    push_batch(w, e))
		return e->code;
	b = w->cur;
	if (!b->gpus && !(b->gpus = malloc(BATCH_GPU * sizeof *b->gpus)))
		return err_set(e, ERR_NOMEM, "out of memory buffering rows");
	store_gpu_copy(&b->gpus[b->ngpus++], profile, ordinal, row, &b->text);
	return 0;
}

void store_write_sink(struct store_writer *w, struct row_sink *sink)
{
	memset(sink, 0, sizeof *sink);
	sink->ctx = w;
	sink->event = on_event;
	sink->sample = on_sample;
	sink->point = on_point;
	sink->element = on_element;
	sink->gpu = on_gpu;
}

void store_write_get_stats(const struct store_writer *w,
                           struct store_write_stats *st)
{
	*st = w->stats;
}

/* ---- open / finish / close ---- */

static int prepare_multi(struct store_writer *w, int kind, struct err *e)
{
	static const char *const table[REC_KINDS] = {"events", "samples",
	                                             "points", STORE_DEPTH_TABLE};
	struct buf sql;
	int rc;

	buf_init(&sql, 0);
	/* OR FAIL: no statement journal (a copy of each page a statement
	 * changes, 5 % of the writer's CPU); a duplicate key still fails */
	buf_printf(&sql, "INSERT OR FAIL INTO %s VALUES ", table[kind]);
	for (int r = 0; r < MULTI_ROWS; r++) {
		buf_puts(&sql, r ? ",(" : "(");
		for (int c = 0; c < rec_cols[kind]; c++)
			buf_puts(&sql, c ? ",?" : "?");
		buf_putc(&sql, ')');
	}
	if (sql.failed) {
		buf_free(&sql);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	rc = sqlite3_prepare_v3(w->db, sql.data, -1, SQLITE_PREPARE_PERSISTENT,
	                        &w->multi[kind], NULL);
	buf_free(&sql);
	return rc == SQLITE_OK ? 0 : db_fail(w, e, "prepare");
}

int store_write_open(const char *path, struct store_writer **out,
                     struct err *e)
{
	static const char *const ins_sql[REC_KINDS] = {
		"INSERT INTO events VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
		"INSERT INTO samples VALUES (?1,?2,?3,?4)",
		"INSERT INTO points VALUES (?1,?2,?3,?4)",
		"INSERT INTO " STORE_DEPTH_TABLE " VALUES (?1,?2,?3)",
	};
	struct store_writer *w;
	int rc;

	*out = NULL;
	w = calloc(1, sizeof *w);
	if (!w || !(w->path = strdup(path))) {
		free(w);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	w->sum = store_summary_acc_new();
	w->depth = store_depth_new(&(struct store_depth_out){emit_depth, w});
	if (!w->sum || !w->depth) {
		store_summary_acc_free(w->sum);
		store_depth_free(w->depth);
		free(w->path);
		free(w);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	err_clear(&w->thread_err);
	/* Memory statistics take a global mutex per allocation; the bulk load
	 * does not need them.  Only possible before SQLite is initialised. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);

	rc = sqlite3_open_v2(path, &w->db,
	                     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                     SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
	                     NULL);
	if (rc != SQLITE_OK) {
		db_fail(w, e, "open");
		goto fail;
	}
	/* Memory stays bounded whatever the row count: a 32 MiB page cache
	 * during the load (appends touch only the right edge of each b-tree),
	 * 64 MiB while indexing; the index sorter keeps at most two lists of
	 * cache size in memory (threads=1: one helper thread, both cores). */
	if (exec(w, "PRAGMA page_size=8192; PRAGMA journal_mode=OFF;"
	            " PRAGMA synchronous=OFF; PRAGMA cache_size=-32768;"
	            " PRAGMA temp_store=FILE; PRAGMA locking_mode=EXCLUSIVE;"
	            " PRAGMA threads=1;",
	         "settings", e) ||
	    exec(w, "BEGIN", "begin", e) || exec(w, schema_sql, "schema", e) ||
	    exec(w, store_depth_schema_sql, "schema", e) ||
	    exec(w, store_gpu_schema_sql, "GPU tables", e) ||
	    store_gpu_prepare(w->db, &w->gpu_ins, e) ||
	    store_ext_create(w->db, &w->ext, e) ||
	    store_typed_create(w->db, &w->typed, MULTI_ROWS, e))
		goto fail;
	for (int i = 0; i < REC_KINDS; i++)
		if (sqlite3_prepare_v3(w->db, ins_sql[i], -1,
		                       SQLITE_PREPARE_PERSISTENT, &w->ins[i],
		                       NULL) != SQLITE_OK) {
			db_fail(w, e, "prepare");
			goto fail;
		}
	for (int i = 0; i < REC_KINDS; i++) {
		if (prepare_multi(w, i, e))
			goto fail;
	}
	w->cur = batch_new();
	if (!w->cur) {
		err_set(e, ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (pthread_create(&w->thread, NULL, writer_thread, w)) {
		err_set(e, ERR_NOMEM, "cannot start the store writer thread");
		goto fail;
	}
	w->thread_started = 1;
	*out = w;
	return 0;
fail:
	store_write_close(w);
	return e->code;
}

/* Signals the end of rows and waits for the writer thread; returns its
 * error, if any. */
static int stop_thread(struct store_writer *w, struct err *e)
{
	int rc = 0;

	if (!w->thread_started)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->thread_started = 0;
	if (w->failed) {
		if (e)
			*e = w->thread_err;
		rc = w->failed;
	}
	return rc;
}

static int write_durations(struct store_writer *w, struct err *e)
{
	return store_durations_write(&w->dur, w->db) ? db_fail(w, e, "durations") : 0;
}

static int write_catalog(struct store_writer *w, const json_t *catalog,
                         const char *generation, struct err *e)
{
	struct store_catrow_in in = {w->path, catalog, generation, w->elements,
	                             w->element_bytes};
	struct store_catrow_out out;

	if (store_catrow_write(w->db, &in, &out, e))
		return e->code;
	w->stats.catalog_bytes = out.catalog_bytes;
	w->stats.whole_catalog_bytes = out.whole_catalog_bytes;
	w->stats.external = out.external;
	return 0;
}

void store_write_cancel(struct store_writer *w, const cancel_flag *cancel)
{
	cancel_sqlite(w->db, cancel);
}

int store_write_finish(struct store_writer *w, const json_t *catalog,
                       const char *generation, struct err *e)
{
	int rc = store_depth_finish(w->depth, e);

	if (rc == STORE_DEPTH_UNORDERED)
		w->depth_redo = 1;
	else if (rc) {
		stop_thread(w, NULL);
		return e->code;
	}
	if (w->cur && (w->cur->n || w->cur->nelems || w->cur->ngpus) &&
	    push_batch(w, e)) {
		stop_thread(w, NULL);
		return e->code;
	}
	if (stop_thread(w, e))
		return e->code;
	for (int i = 0; i < REC_KINDS; i++) {
		sqlite3_finalize(w->ins[i]);
		sqlite3_finalize(w->multi[i]);
		w->ins[i] = w->multi[i] = NULL;
	}
	store_ext_close(&w->ext);
	sqlite3_finalize(w->gpu_ins);
	w->gpu_ins = NULL;
	store_typed_close(&w->typed);
	const uint64_t rows[3] = {w->stats.events, w->stats.samples,
	                          w->stats.points};
	if (store_ext_finish(&w->ext, catalog, generation, w->elements,
	                     w->irregular, e) ||
	    write_catalog(w, catalog, generation, e) || write_durations(w, e) ||
	    (w->depth_redo && store_depth_write(w->db, e)) ||
	    store_views_write(w->db, catalog, e) ||
	    store_gpu_finish(w->db, catalog, e) ||
	    store_gpukeys_summarize(w->db, json_number_value(json_object_get(
	                            json_object_get(catalog, "meta"), "duration")),
	                            e) ||
	    store_summary_write(w->sum, w->db, catalog, e) ||
	    exec(w, "PRAGMA user_version=1", "user_version", e) ||
	    exec(w, "COMMIT", "commit", e) ||
	    exec(w, "PRAGMA cache_size=-65536", "index settings", e) ||
	    exec(w, index_sql, "indexes", e) ||
	    exec(w, store_ext_index_sql, "extension indexes", e) ||
	    exec(w, store_gpu_index_sql, "GPU indexes", e) ||
	    store_typed_finish(w->db, rows, e))
		return e->code;
	return 0;
}

/* The indexes the build's web phase does not read, with their statistics
 * (the events' name index first: the largest). */
static const char *const late_sql[] = {store_typed_late_sql,
                                        store_ext_late_index_sql, NULL};

int store_write_index_begin(struct store_writer *w, struct err *e)
{
	if (store_late_begin(w->db, w->path, late_sql, &w->late, e))
		return e->code;
	w->late_begun = 1;
	return 0;
}

int store_write_settle(struct store_writer *w, int scratch, struct err *e)
{
	struct store_late *l = w->late;

	w->late = NULL;
	return store_late_settle(l, &w->db, w->path,
	                         scratch || w->late_begun ? NULL : late_sql,
	                         scratch, e);
}

void store_write_close(struct store_writer *w)
{
	if (!w)
		return;
	store_late_wait(w->late, 1, &(struct err){0});
	stop_thread(w, NULL);
	for (int i = 0; i < REC_KINDS; i++) {
		sqlite3_finalize(w->ins[i]);
		sqlite3_finalize(w->multi[i]);
	}
	store_ext_close(&w->ext);
	sqlite3_finalize(w->gpu_ins);
	store_typed_close(&w->typed);
	if (w->db)
		sqlite3_close(w->db);
	batch_free(w->cur);
	while (w->full_head) {
		struct batch *b = w->full_head;
		w->full_head = b->next;
		batch_free(b);
	}
	while (w->free_list) {
		struct batch *b = w->free_list;
		w->free_list = b->next;
		batch_free(b);
	}
	store_durations_free(&w->dur);
	store_summary_acc_free(w->sum);
	store_depth_free(w->depth);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->path);
	free(w);
}
