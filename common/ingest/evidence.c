/* evidence: read and validate an evidence document (see evidence.h).
 *
 * This file drives the read (input -> yajl -> evparse), turns byte-level
 * failures into messages, and computes capabilities; the token-level state
 * machine lives in evparse.c. */
#include "ingest/evidence.h"
#include "ingest/evparse.h"
#include "ingest/input.h"
#include "ingest/strscan.h"
#include "base/cancel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yajl/yajl_parse.h>

#define LEGACY_DATA "trace-data.json.gz"

char *evidence_data_file(const char *path)
{
	struct stat st;
	char *out;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t n = strlen(path);
		out = malloc(n + sizeof LEGACY_DATA + 1);
		if (out) {
			memcpy(out, path, n);
			out[n] = '/';
			memcpy(out + n + 1, LEGACY_DATA, sizeof LEGACY_DATA);
		}
		return out;
	}
	return strdup(path);
}

/* ---- the read ----------------------------------------------------------- */

/* Turns a yajl failure into one message line naming the byte offset. */
static int yajl_failure(yajl_handle h, struct evparse *p, const char *file,
                        const char *chunk, size_t n, uint64_t base,
                        struct err *e)
{
	unsigned char *raw = yajl_get_error(h, 0, (const unsigned char *)chunk, n);
	char msg[256], where[300];
	size_t off = n ? yajl_get_bytes_consumed(h) : 0;
	const char *m = raw ? (const char *)raw : "parse error";
	uint64_t at = base + off;

	/* "lexical error: invalid char in json text.\n" -> the part after ": " */
	const char *colon = strstr(m, ": ");
	snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
	for (size_t k = strlen(msg); k && (msg[k - 1] == '\n' || msg[k - 1] == '.' ||
	                                   msg[k - 1] == ' '); k--)
		msg[k - 1] = '\0';
	if (raw)
		yajl_free_error(h, raw);
	evparse_where(p, where, sizeof where);

	if (strstr(msg, "UTF8"))
		return err_set(e, ERR_DATA, "%s: invalid UTF-8 in a string at byte %llu%s",
		               file, (unsigned long long)at, where);
	/* NaN / Infinity: look at the bytes around the error. */
	for (size_t k = off > 12 ? off - 12 : 0; k < n && k < off + 4; k++) {
		if ((n - k >= 3 && memcmp(chunk + k, "NaN", 3) == 0) ||
		    (n - k >= 8 && memcmp(chunk + k, "Infinity", 8) == 0))
			return err_set(e, ERR_DATA,
			               "%s: invalid JSON at byte %llu%s: NaN and Infinity are not allowed",
			               file, (unsigned long long)at, where);
	}
	if (strstr(msg, "premature EOF"))
		return err_set(e, ERR_DATA, "%s: invalid JSON: unexpected end of document at byte %llu%s",
		               file, (unsigned long long)at, where);
	if (strstr(msg, "trailing garbage"))
		return err_set(e, ERR_DATA, "%s: invalid JSON: trailing garbage after the document at byte %llu",
		               file, (unsigned long long)at);
	return err_set(e, ERR_DATA, "%s: invalid JSON at byte %llu%s: %s",
	               file, (unsigned long long)at, where, msg);
}

/* Sets *seen when the chunk has a non-whitespace byte, and checks that it
 * can start JSON; gzipped: the bytes were inflated from a gzip file. */
static int first_byte(const char *s, size_t n, const char *file, int gzipped,
                      int *seen, struct err *e)
{
	for (size_t k = 0; k < n; k++) {
		char c = s[k];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		*seen = 1;
		if (c == '\xef' && n - k >= 3 && s[k + 1] == '\xbb' && s[k + 2] == '\xbf')
			return err_set(e, ERR_DATA, "%s: invalid JSON at byte %zu: a UTF-8 byte order mark "
			               "is not allowed", file, k);
		if (c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') ||
		    c == 't' || c == 'f' || c == 'n')
			return 0;
		if (gzipped)
			return err_set(e, ERR_DATA, "%s: not an evidence document (a gzip file"
			               " whose content is not JSON)", file);
		return err_set(e, ERR_DATA, "%s: not an evidence document (neither JSON nor gzip)",
		               file);
	}
	return 0;
}

/* The parse of one document: yajl, evparse, and the look-ahead that holds
 * back a string crossing a chunk boundary (see strscan.h). */
struct reader {
	yajl_handle h;
	struct evparse *p;
	const char *file;
	struct strscan sc;
	struct buf hold;  /* the start of a string that crosses chunks */
	uint64_t base;    /* document bytes given to yajl so far */
};

static int give(struct reader *r, const char *s, size_t n, struct err *e)
{
	if (!n)
		return 0;
	evparse_lone_string(r->p, r->sc.lone);
	if (yajl_parse(r->h, (const unsigned char *)s, n) != yajl_status_ok) {
		int rc = evparse_error(r->p);
		return rc ? rc : yajl_failure(r->h, r->p, r->file, s, n, r->base, e);
	}
	r->base += n;
	return 0;
}

/* One chunk of the document.  A string token is given to yajl whole: yajl
 * rescans a partial token from its start on every chunk. */
static int take(struct reader *r, const char *s, size_t n, struct err *e)
{
	int holding = r->sc.in_str;
	size_t start = 0;
	int rc;

	if (strscan_feed(&r->sc, s, n) == STRSCAN_TOO_LONG) {
		/* the string starts where yajl stopped: its path is known */
		if (!holding && r->sc.last_open != SIZE_MAX &&
		    (rc = give(r, s, r->sc.last_open, e)))
			return rc;
		return evparse_fail_here(r->p, "a string longer than 64 MiB");
	}
	if (holding) {
		if (r->sc.first_close == SIZE_MAX) {
			buf_append(&r->hold, s, n);
			return r->hold.failed ? err_set(e, ERR_NOMEM, "out of memory") : 0;
		}
		start = r->sc.first_close;
		buf_append(&r->hold, s, start);
		if (r->hold.failed)
			return err_set(e, ERR_NOMEM, "out of memory");
		rc = give(r, r->hold.data, r->hold.len, e);
		buf_free(&r->hold); /* a long string's memory goes back now */
		buf_init(&r->hold, 0);
		if (rc)
			return rc;
	}
	if (!r->sc.in_str)
		return give(r, s + start, n - start, e);
	if ((rc = give(r, s + start, r->sc.last_open - start, e)))
		return rc;
	buf_append(&r->hold, s + r->sc.last_open, n - r->sc.last_open);
	return r->hold.failed ? err_set(e, ERR_NOMEM, "out of memory") : 0;
}

static int read_stream(struct input *in, const char *file,
                       const struct row_sink *sink, json_t **catalog,
                       struct evstats *stats, struct err *e)
{
	struct reader r = { .file = file };
	const char *chunk = NULL;
	int rc = 0, seen = 0;
	size_t n = 0;

	strscan_init(&r.sc);
	buf_init(&r.hold, 0);
	r.p = evparse_new(file, sink, e);
	if (!r.p || !(r.h = yajl_alloc(&evparse_callbacks, NULL, r.p))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		if ((rc = input_next(in, &chunk, &n, e)))
			goto out;
		if (!n)
			break;
		if (!seen && (rc = first_byte(chunk, n, file, input_is_gzip(in),
		                              &seen, e)))
			goto out;
		if (sink && cancel_requested(sink->cancel)) {
			rc = err_set(e, ERR_DATA, "interrupted");
			goto out;
		}
		if ((rc = take(&r, chunk, n, e)))
			goto out;
		if (sink && sink->progress)
			sink->progress(sink->ctx, input_consumed(in), input_size(in));
	}
	/* an unterminated string: yajl names the end of the document */
	if ((rc = give(&r, r.hold.data, r.hold.len, e)))
		goto out;
	if (!seen) {
		rc = err_set(e, ERR_DATA, "%s: empty document", file);
		goto out;
	}
	if (yajl_complete_parse(r.h) != yajl_status_ok) {
		rc = evparse_error(r.p);
		if (!rc)
			rc = yajl_failure(r.h, r.p, file, NULL, 0, r.base, e);
		goto out;
	}
	rc = evparse_finish(r.p, catalog, stats);
out:
	if (r.h)
		yajl_free(r.h);
	evparse_free(r.p);
	buf_free(&r.hold);
	return rc;
}

int evidence_read(const char *path, const struct row_sink *sink,
                  json_t **catalog, struct evstats *stats,
                  struct err *e)
{
	struct input *in = NULL;
	struct stat st;
	char *file;
	int rc;

	*catalog = NULL;
	err_clear(e);
	if (stats)
		memset(stats, 0, sizeof *stats);
	file = evidence_data_file(path);
	if (!file)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (strcmp(file, path) != 0 && stat(file, &st) != 0) {
		rc = err_set(e, ERR_DATA,
		             "%s: a directory without %s (not a legacy report directory)",
		             path, LEGACY_DATA);
		free(file);
		return rc;
	}
	rc = input_open(file, &in, e);
	if (!rc)
		rc = read_stream(in, file, sink, catalog, stats, e);
	if (!rc && stats)
		stats->input_bytes = input_consumed(in);
	if (rc && *catalog) {
		json_decref(*catalog);
		*catalog = NULL;
	}
	if (rc && stats)
		evstats_free(stats);
	input_close(in);
	free(file);
	return rc;
}
