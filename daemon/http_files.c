/* http_files: responses of the HTTP transport (see http_files.h). */
#include "http_files.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "webgen.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* index.html streamed from its descriptor with the marker inserted. */
struct index_body {
	struct session_gen *g;  /* one reference: keeps the descriptor open */
	int fd;
	uint64_t at, size;
	char marker[160];
	size_t mlen;
};

static ssize_t index_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct index_body *ib = cls;
	uint64_t total = ib->size + ib->mlen;
	ssize_t n;
	if (pos >= total)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (pos >= ib->at && pos < ib->at + ib->mlen) {
		size_t k = (size_t)(ib->at + ib->mlen - pos);
		if (k > max)
			k = max;
		memcpy(out, ib->marker + (pos - ib->at), k);
		return (ssize_t)k;
	}
	uint64_t fpos = pos < ib->at ? pos : pos - ib->mlen;
	uint64_t lim = pos < ib->at ? ib->at - pos : total - pos;
	if (lim < max)
		max = (size_t)lim;
	do
		n = pread(ib->fd, out, max, (off_t)fpos);
	while (n < 0 && errno == EINTR);
	return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void index_free(void *cls)
{
	struct index_body *ib = cls;
	session_release(ib->g);
	free(ib);
}

void http_files_common(struct MHD_Response *r)
{
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

/* Headers of a response that is never cached. */
static struct MHD_Response *uncached(struct MHD_Response *r, const char *ctype)
{
	MHD_add_response_header(r, "Content-Type", ctype);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	http_files_common(r);
	return r;
}

/* A response of body (malloc'd, taken over); NULL when out of memory. */
static struct MHD_Response *of_memory(char *body, size_t len, const char *ctype)
{
	struct MHD_Response *r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	if (!r) {
		free(body);
		return NULL;
	}
	return uncached(r, ctype);
}

/* A response of what b holds (freed here). */
static struct MHD_Response *of_buf(struct buf *b, const char *ctype)
{
	size_t len;
	char *data;
	if (b->failed) {
		buf_free(b);
		return NULL;
	}
	data = buf_detach(b, &len);
	return of_memory(data, len, ctype);
}

static struct MHD_Response *html_page(const char *reason)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	             "<meta name=\"dsight-live\" content=\"\">"
	             "<title>dsight session</title></head><body>\n<h1>No viewer here</h1>\n<p>");
	for (const char *p = reason; *p; p++) {
		if (*p == '<')
			buf_puts(&b, "&lt;");
		else if (*p == '>')
			buf_puts(&b, "&gt;");
		else if (*p == '&')
			buf_puts(&b, "&amp;");
		else
			buf_putc(&b, *p);
	}
	buf_puts(&b, "</p>\n<p>The session still answers queries: <code>dsight query --remote "
	             "HOST:PORT summary</code>, or POST /rpc.</p>\n</body></html>\n");
	return of_buf(&b, "text/html; charset=utf-8");
}

struct MHD_Response *http_files_index(struct session_gen *g, unsigned *status)
{
	const struct webgen *w = session_gen_web(g);
	struct index_body *ib;
	struct MHD_Response *r;

	*status = MHD_HTTP_OK;
	if (!w || webgen_reason(w)) {
		r = html_page(w ? webgen_reason(w) : "This session has no viewer.");
		session_release(g);
		return r;
	}
	if (!(ib = calloc(1, sizeof *ib))) {
		session_release(g);
		return NULL;
	}
	ib->g = g;
	ib->fd = webgen_index_fd(w);
	ib->size = webgen_index_size(w);
	ib->at = webgen_marker_at(w);
	ib->mlen = (size_t)snprintf(ib->marker, sizeof ib->marker,
	                            "\n<meta name=\"dsight-live\" content=\"%s\">",
	                            session_gen_id(g));
	if (ib->mlen >= sizeof ib->marker)
		ib->mlen = 0;
	r = MHD_create_response_from_callback(ib->size + ib->mlen, 64 * 1024, index_read, ib,
	                                      index_free);
	if (!r) {
		index_free(ib);
		return NULL;
	}
	return uncached(r, "text/html; charset=utf-8");
}

struct MHD_Response *http_files_error(const char *msg)
{
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "{\"error\":");
	jsonout_cstr(&b, msg);
	buf_puts(&b, "}\n");
	return of_buf(&b, "application/json");
}

void http_files_ndjson(struct MHD_Response *r)
{
	uncached(r, HTTP_FILES_NDJSON);
}

struct MHD_Response *http_files_json(char *body, size_t len)
{
	return of_memory(body, len, "application/json");
}

struct MHD_Response *http_files_file(const struct session_gen *g, const char *rel,
                                     int gzip_ok, unsigned *status)
{
	const struct webgen *w = session_gen_web(g);
	struct MHD_Response *r;
	struct stat st;
	int fd;

	if (!w || !webgen_has(w, rel) || (fd = webgen_open(w, rel)) < 0) {
		*status = MHD_HTTP_NOT_FOUND;
		return http_files_error("Not found: the report's current generation has no such file "
		                        "(it was rebuilt? reload the page)");
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*status = MHD_HTTP_NOT_FOUND;
		return http_files_error("Not found");
	}
	/* the response owns fd from here */
	if (!(r = MHD_create_response_from_fd64((uint64_t)st.st_size, fd))) {
		close(fd);
		return NULL;
	}
	*status = MHD_HTTP_OK;
	if (!strncmp(rel, "detail/", 7)) {
		if (gzip_ok) {
			MHD_add_response_header(r, "Content-Type", "application/json");
			MHD_add_response_header(r, "Content-Encoding", "gzip");
		} else {
			MHD_add_response_header(r, "Content-Type", "application/gzip");
		}
		MHD_add_response_header(r, "Vary", "Accept-Encoding");
		MHD_add_response_header(r, "Cache-Control", "public, max-age=31536000, immutable");
	} else {
		MHD_add_response_header(r, "Content-Type", strstr(rel, ".html") ? "text/html; charset=utf-8"
		                                                                 : "application/json");
		MHD_add_response_header(r, "Cache-Control", "no-cache");
	}
	http_files_common(r);
	return r;
}
