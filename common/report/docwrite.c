/* docwrite: rebuild the evidence document from catalog + rows (see
 * docwrite.h). */
#include "report/docwrite.h"
#include "store/store_ext.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/gzpipe.h"
#include "base/jsonout.h"

/* the text of one gzip member: large enough that the 32-KiB window
 * rarely notices the cut */
#define FLUSH_AT (1u << 20)

struct docw {
	sqlite3 *db;
	sqlite3_stmt *ev, *sa, *pt;
	struct buf text;
	struct gzpipe *pipe; /* compresses and writes beside the reads */
	uint64_t members;
};

/*
 * Hands the pending text over as one whole gzip member, appended to the
 * file (finish: also when empty, so an empty document is a member).  A
 * file of several members is one gzip stream to every reader (RFC 1952;
 * dsight's own reader, gzip, zcat, Python's gzip).
 */
static int flush_text(struct docw *w, int finish, struct err *e)
{
	if (w->text.failed)
		return err_set(e, w->text.failed == ERR_DATA ? ERR_DATA : ERR_NOMEM,
		               "cannot encode the document");
	if (!w->text.len && (!finish || w->members))
		return 0;
	w->members++;
	return gzpipe_put(w->pipe, &w->text, e);
}

static int maybe_flush(struct docw *w, struct err *e)
{
	return w->text.len >= FLUSH_AT ? flush_text(w, 0, e) : 0;
}

static int db_err(struct docw *w, struct err *e)
{
	return err_set(e, ERR_DATA, "cannot read rows back: %s",
	               sqlite3_errmsg(w->db));
}

static int emit_events(struct docw *w, int64_t profile, struct err *e)
{
	sqlite3_stmt *st = w->ev;
	int rc, first = 1;

	sqlite3_bind_int64(st, 1, profile);
	buf_putc(&w->text, '[');
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!first)
			buf_putc(&w->text, ',');
		first = 0;
		buf_putc(&w->text, '[');
		jsonout_real(&w->text, sqlite3_column_double(st, 0));
		buf_putc(&w->text, ',');
		jsonout_real(&w->text, sqlite3_column_double(st, 1));
		buf_putc(&w->text, ',');
		jsonout_int(&w->text, sqlite3_column_int64(st, 2));
		buf_putc(&w->text, ',');
		jsonout_str(&w->text, (const char *)sqlite3_column_text(st, 3),
		            (size_t)sqlite3_column_bytes(st, 3));
		buf_putc(&w->text, ',');
		jsonout_int(&w->text, sqlite3_column_int64(st, 4));
		buf_putc(&w->text, ']');
		if (maybe_flush(w, e)) {
			sqlite3_reset(st);
			return e->code;
		}
	}
	sqlite3_reset(st);
	buf_putc(&w->text, ']');
	return rc == SQLITE_DONE ? 0 : db_err(w, e);
}

/* Samples and points: the payload column is already the row's JSON. */
static int emit_payloads(struct docw *w, sqlite3_stmt *st, int64_t key,
                         struct err *e)
{
	int rc, first = 1;

	sqlite3_bind_int64(st, 1, key);
	buf_putc(&w->text, '[');
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (!first)
			buf_putc(&w->text, ',');
		first = 0;
		buf_append(&w->text, sqlite3_column_text(st, 0),
		           (size_t)sqlite3_column_bytes(st, 0));
		if (maybe_flush(w, e)) {
			sqlite3_reset(st);
			return e->code;
		}
	}
	sqlite3_reset(st);
	buf_putc(&w->text, ']');
	return rc == SQLITE_DONE ? 0 : db_err(w, e);
}

static void emit_key(struct docw *w, const char *key, int *first)
{
	if (!*first)
		buf_putc(&w->text, ',');
	*first = 0;
	jsonout_cstr(&w->text, key);
	buf_putc(&w->text, ':');
}

/* The objects whose rows live in the cache: a profile, its "cpu" object,
 * a metric series. */
enum part { PART_PROFILE, PART_CPU, PART_SERIES };

static int emit_object(struct docw *w, enum part part, const json_t *o,
                       int64_t index, struct err *e);

/* Member k of an object of kind part: its rows from the cache where the
 * document keeps them there, else the value as read. */
static int emit_member(struct docw *w, enum part part, const char *k,
                       const json_t *v, int64_t index, struct err *e)
{
	switch (part) {
	case PART_PROFILE:
		if (!strcmp(k, "events"))
			return emit_events(w, index, e);
		if (!strcmp(k, "cpu") && json_is_object(v))
			return emit_object(w, PART_CPU, v, index, e);
		break;
	case PART_CPU:
		if (!strcmp(k, "samples"))
			return emit_payloads(w, w->sa, index, e);
		break;
	case PART_SERIES:
		if (!strcmp(k, "points"))
			return emit_payloads(w, w->pt, index, e);
		break;
	}
	jsonout_tree(&w->text, v, 0);
	return 0;
}

/* Object o of kind part (index: its profile or series), without the row
 * count the reader added ("event_count", "sample_count"). */
static int emit_object(struct docw *w, enum part part, const json_t *o,
                       int64_t index, struct err *e)
{
	static const char *const added[] = {
		[PART_PROFILE] = "event_count", [PART_CPU] = "sample_count",
		[PART_SERIES] = NULL};
	const char *k;
	json_t *v;
	int first = 1;

	if (!json_is_object(o)) {
		jsonout_tree(&w->text, o, 0);
		return 0;
	}
	buf_putc(&w->text, '{');
	json_object_foreach((json_t *)o, k, v) {
		if (added[part] && !strcmp(k, added[part]))
			continue;
		emit_key(w, k, &first);
		if (emit_member(w, part, k, v, index, e) || maybe_flush(w, e))
			return e->code;
	}
	buf_putc(&w->text, '}');
	return 0;
}

struct coll_out {
	struct docw *w;
	struct err *e;
};

static int coll_out(void *ctx, const char *data, size_t n)
{
	struct coll_out *c = ctx;
	buf_append(&c->w->text, data, n);
	return maybe_flush(c->w, c->e);
}

static int emit_document(struct docw *w, const json_t *catalog,
                         struct err *e)
{
	const char *k;
	json_t *v;
	int first = 1;
	unsigned mask;
	struct coll_out co = {w, e};

	/* collections the build streamed into the extension tables */
	if (store_ext_collections_mask(w->db, &mask, e))
		return e->code;

	buf_putc(&w->text, '{');
	json_object_foreach((json_t *)catalog, k, v) {
		int prof = !strcmp(k, "profiles"), met = !strcmp(k, "metrics");
		int coll = -1;
		for (int c = 0; c < EVIDENCE_NCOLLECTIONS; c++)
			if ((mask & (1u << c)) && !strcmp(k, evidence_collection_key(c)))
				coll = c;
		emit_key(w, k, &first);
		if (coll >= 0) {
			if (store_ext_emit_collection(w->db, coll, coll_out, &co, e))
				return e->code;
		} else if ((prof || met) && json_is_array(v)) {
			size_t i;
			json_t *item;
			buf_putc(&w->text, '[');
			json_array_foreach(v, i, item) {
				if (i)
					buf_putc(&w->text, ',');
				if (emit_object(w, prof ? PART_PROFILE : PART_SERIES,
				                item, (int64_t)i, e))
					return e->code;
			}
			buf_putc(&w->text, ']');
		} else {
			jsonout_tree(&w->text, v, 0);
		}
		if (maybe_flush(w, e))
			return e->code;
	}
	buf_putc(&w->text, '}');
	return flush_text(w, 1, e);
}

static int prepare(struct docw *w, const char *sql, sqlite3_stmt **st,
                   struct err *e)
{
	if (sqlite3_prepare_v2(w->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_err(w, e);
	return 0;
}

int docwrite_gzip(const char *db_path, const json_t *catalog,
                  const char *out_path, int level, uint64_t *bytes,
                  struct err *e)
{
	struct docw w;
	char *uri;
	int rc;

	int fd = -1;
	uint64_t written = 0;

	memset(&w, 0, sizeof w);
	buf_init(&w.text, 0);
	uri = sqlite3_mprintf("file:%s?mode=ro", db_path);
	if (!uri)
		return err_set(e, ERR_NOMEM, "out of memory");
	rc = sqlite3_open_v2(uri, &w.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
	                     SQLITE_OPEN_NOMUTEX, NULL);
	sqlite3_free(uri);
	if (rc != SQLITE_OK) {
		rc = err_set(e, ERR_DATA, "cannot open %s: %s", db_path,
		             w.db ? sqlite3_errmsg(w.db) : "out of memory");
		goto out;
	}
	if ((rc = prepare(&w, "SELECT start, end, name, tid, source_row FROM events"
	                      " WHERE profile = ?1 ORDER BY ordinal", &w.ev, e)) ||
	    (rc = prepare(&w, "SELECT payload FROM samples WHERE profile = ?1"
	                      " ORDER BY ordinal", &w.sa, e)) ||
	    (rc = prepare(&w, "SELECT payload FROM points WHERE series = ?1"
	                      " ORDER BY ordinal", &w.pt, e)))
		goto out;
	fd = open(out_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = err_sys(e, ERR_DATA, "cannot create %s", out_path);
		goto out;
	}
	if ((rc = gzpipe_open(fd, out_path, level, &w.pipe, e)) ||
	    (rc = emit_document(&w, catalog, e)) ||
	    (rc = gzpipe_finish(w.pipe, &written, e)))
		goto out;
	if (fsync(fd)) {
		rc = err_sys(e, ERR_DATA, "cannot write %s", out_path);
		goto out;
	}
	if (bytes)
		*bytes = written;
out:
	gzpipe_free(w.pipe); /* before the file is closed under it */
	if (fd >= 0 && close(fd) && !rc)
		rc = err_sys(e, ERR_DATA, "cannot write %s", out_path);
	buf_free(&w.text);
	sqlite3_finalize(w.ev);
	sqlite3_finalize(w.sa);
	sqlite3_finalize(w.pt);
	if (w.db)
		sqlite3_close(w.db);
	return rc;
}
