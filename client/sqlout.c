/* sqlout: printing an answer as json, jsonl, csv or tsv (see sqlout.h). */
#include "sqlout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "base/jsonout.h"

int sqlout_parse_format(const char *s, enum sqlout_format *f)
{
	static const char *const names[] = {"json", "jsonl", "csv", "tsv"};

	for (int k = 0; k < 4; k++)
		if (!strcmp(s, names[k])) {
			*f = (enum sqlout_format)k;
			return 0;
		}
	return -1;
}

/* Where the parser is in {"columns":[...],"rows":[[...],...],...}. */
enum member { M_OTHER, M_COLUMNS, M_ROWS, M_ROW_COUNT, M_TRUNCATED };

struct render {
	enum sqlout_format f;
	struct buf *out;
	int depth;
	enum member member; /* the top-level member being read */
	int nfield;         /* fields written on the current line */
	int seen_columns, seen_rows;
	int64_t row_count;
	int truncated;
};

/* One field of a csv or tsv line; s == NULL is SQL NULL. */
static void put_field(struct render *r, const char *s, size_t n)
{
	struct buf *o = r->out;

	if (r->nfield++)
		buf_putc(o, r->f == SQLOUT_CSV ? ',' : '\t');
	if (r->f == SQLOUT_CSV) {
		if (!s)
			return;
		if (n && !memchr(s, ',', n) && !memchr(s, '"', n) &&
		    !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
			buf_append(o, s, n);
			return;
		}
		buf_putc(o, '"');
		for (size_t k = 0; k < n; k++) {
			if (s[k] == '"')
				buf_putc(o, '"');
			buf_putc(o, s[k]);
		}
		buf_putc(o, '"');
		return;
	}
	if (!s) {
		buf_puts(o, "\\N");
		return;
	}
	for (size_t k = 0; k < n; k++) {
		switch (s[k]) {
		case '\\': buf_puts(o, "\\\\"); break;
		case '\t': buf_puts(o, "\\t"); break;
		case '\n': buf_puts(o, "\\n"); break;
		case '\r': buf_puts(o, "\\r"); break;
		default: buf_putc(o, s[k]);
		}
	}
}

static void end_line(struct render *r)
{
	buf_puts(r->out, r->f == SQLOUT_CSV ? "\r\n" : "\n");
	r->nfield = 0;
}

/* A value of a column name (depth 2 of columns) or a row (depth 3). */
static int in_list_value(const struct render *r)
{
	return (r->member == M_COLUMNS && r->depth == 2) ||
	       (r->member == M_ROWS && r->depth == 3);
}

/* One value: text (NULL for null) of n bytes; is_str says whether it is
 * a JSON string (jsonl re-encodes it) or raw JSON text. */
static int value(struct render *r, const char *s, size_t n, int is_str)
{
	if (!in_list_value(r))
		return 0; /* anything else in a list is not an sql answer */
	if (r->f != SQLOUT_JSONL) {
		put_field(r, s, n);
		return 1;
	}
	if (r->nfield++)
		buf_putc(r->out, ',');
	if (!s)
		buf_puts(r->out, "null");
	else if (is_str)
		jsonout_str(r->out, s, n);
	else
		buf_append(r->out, s, n);
	return 1;
}

static int cb_null(void *ctx)
{
	return value(ctx, NULL, 0, 0);
}

static int cb_boolean(void *ctx, int b)
{
	struct render *r = ctx;
	if (r->depth == 1 && r->member == M_TRUNCATED) {
		r->truncated = b;
		return 1;
	}
	return 0;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct render *r = ctx;
	if (r->depth == 1 && r->member == M_ROW_COUNT) {
		r->row_count = strtoll(s, NULL, 10);
		return 1;
	}
	return value(r, s, n, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	return value(ctx, (const char *)s, n, 1);
}

static int cb_start_map(void *ctx)
{
	struct render *r = ctx;
	return r->depth++ == 0;
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct render *r = ctx;
	static const char *const names[] = {"columns", "rows", "row_count",
	                                    "truncated"};

	r->member = M_OTHER;
	for (int i = 0; i < 4; i++)
		if (strlen(names[i]) == n && !memcmp(names[i], k, n))
			r->member = (enum member)(i + 1);
	return 1;
}

static int cb_end_map(void *ctx)
{
	struct render *r = ctx;
	r->depth--;
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct render *r = ctx;

	r->depth++;
	if (r->depth == 2 && r->member == M_COLUMNS) {
		r->seen_columns = 1;
		if (r->f == SQLOUT_JSONL)
			buf_puts(r->out, "{\"columns\":[");
		return 1;
	}
	if (r->depth == 2 && r->member == M_ROWS) {
		r->seen_rows = 1;
		return r->seen_columns;
	}
	if (r->depth == 3 && r->member == M_ROWS) {
		if (r->f == SQLOUT_JSONL)
			buf_putc(r->out, '[');
		return 1;
	}
	return 0;
}

static int cb_end_array(void *ctx)
{
	struct render *r = ctx;

	if ((r->depth == 2 && r->member == M_COLUMNS) ||
	    (r->depth == 3 && r->member == M_ROWS)) {
		if (r->f == SQLOUT_JSONL) {
			buf_puts(r->out, r->depth == 2 ? "]}\n" : "]\n");
			r->nfield = 0;
		} else {
			end_line(r);
		}
	}
	r->depth--;
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_boolean, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* An answer being printed: the JSON document fed in pieces. */
struct sqlout_stream {
	struct render r;
	yajl_handle h;      /* jsonl, csv, tsv: the incremental parser */
	int pretty;
	FILE *fp;           /* where each piece's output goes; NULL: out keeps it */
	struct buf own;     /* out when fp */
	struct buf *out;
	struct buf doc;     /* --pretty: the whole document, indented at the end */
	int batches;        /* non-empty batches of rows fed */
	int failed;         /* the parser refused the document */
};

static const char *format_name(enum sqlout_format f)
{
	return f == SQLOUT_JSONL ? "jsonl" : f == SQLOUT_CSV ? "csv" : "tsv";
}

static int not_rows(const struct sqlout_stream *s, struct err *e)
{
	return err_set(e, ERR_DATA, "The answer is not the rows of an sql "
	               "statement: cannot print it as %s", format_name(s->r.f));
}

/* Starts a stream writing into out (fp NULL) or to fp. */
static int stream_init(struct sqlout_stream *s, enum sqlout_format f,
                       int pretty, FILE *fp, struct buf *out, struct err *e)
{
	memset(s, 0, sizeof *s);
	s->r.f = f;
	s->pretty = pretty;
	s->fp = fp;
	buf_init(&s->own, 0);
	buf_init(&s->doc, 0);
	s->out = fp ? &s->own : out;
	s->r.out = s->out;
	if (f != SQLOUT_JSON &&
	    !(s->h = yajl_alloc(&callbacks, NULL, &s->r)))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

static void stream_fini(struct sqlout_stream *s)
{
	if (s->h)
		yajl_free(s->h);
	buf_free(&s->own);
	buf_free(&s->doc);
}

/* A failed write of the answer: ERR_CLOSED when the reader went away
 * (`dsight query ... | head`), else the I/O error. */
static int write_failed(struct err *e)
{
	if (errno == EPIPE)
		return err_set(e, ERR_CLOSED, "stdout was closed by its reader");
	return err_sys(e, ERR_DATA, "cannot write the response");
}

/* Writes what the pieces so far printed (fp streams only). */
static int stream_write(struct sqlout_stream *s, struct err *e)
{
	if (s->out->failed)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (!s->fp || !s->out->len)
		return 0;
	if (fwrite(s->out->data, 1, s->out->len, s->fp) != s->out->len ||
	    fflush(s->fp) != 0)
		return write_failed(e);
	buf_reset(s->out);
	return 0;
}

/* One piece of the document. */
static int feed(struct sqlout_stream *s, const char *text, size_t n,
                struct err *e)
{
	if (s->r.f == SQLOUT_JSON) {
		buf_append(s->pretty ? &s->doc : s->out, text, n);
		return s->doc.failed ? err_set(e, ERR_NOMEM, "out of memory")
		                     : 0;
	}
	if (s->failed ||
	    yajl_parse(s->h, (const unsigned char *)text, n) != yajl_status_ok) {
		s->failed = 1;
		return not_rows(s, e);
	}
	return 0;
}

/* The document is whole: the end of the output. */
static int finish(struct sqlout_stream *s, struct err *e)
{
	struct render *r = &s->r;

	if (r->f == SQLOUT_JSON) {
		if (s->pretty && jsonout_pretty(s->doc.data ? s->doc.data : "",
		                                s->doc.len, s->out))
			return err_set(e, ERR_DATA,
			               "cannot pretty-print the response");
		buf_putc(s->out, '\n');
		return 0;
	}
	if (s->failed || yajl_complete_parse(s->h) != yajl_status_ok ||
	    !r->seen_columns || !r->seen_rows)
		return not_rows(s, e);
	if (r->f == SQLOUT_JSONL) {
		buf_puts(r->out, "{\"row_count\":");
		jsonout_int(r->out, r->row_count);
		buf_puts(r->out, r->truncated ? ",\"truncated\":true}\n"
		                              : ",\"truncated\":false}\n");
	}
	return 0;
}

int sqlout_render(const char *json, size_t n, enum sqlout_format f,
                  int pretty, struct buf *out, int64_t *rows,
                  int *truncated, struct err *e)
{
	struct sqlout_stream s;
	int rc = stream_init(&s, f, pretty, NULL, out, e);

	if (!rc)
		rc = feed(&s, json, n, e);
	if (!rc)
		rc = finish(&s, e);
	if (!rc && out->failed)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	if (rows)
		*rows = s.r.row_count;
	if (truncated)
		*truncated = s.r.truncated;
	stream_fini(&s);
	return rc;
}

/* The line a truncated csv or tsv answer adds on stderr. */
static void say_truncated(enum sqlout_format f, int64_t rows, int truncated)
{
	if (truncated && (f == SQLOUT_CSV || f == SQLOUT_TSV))
		fprintf(stderr, "dsight query: truncated after %lld rows: more "
		        "exist (--max-rows, at most 1000000, bounds what is "
		        "printed; an answer in one reply, as MCP gives, also "
		        "stops at 16 MiB)\n", (long long)rows);
}

int sqlout_print(const char *json, size_t n, enum sqlout_format f,
                 int pretty, struct err *e)
{
	struct buf out;
	int64_t rows = 0;
	int truncated = 0, rc;

	buf_init(&out, 0);
	rc = sqlout_render(json, n, f, pretty, &out, &rows, &truncated, e);
	if (!rc && (fwrite(out.data, 1, out.len, stdout) != out.len ||
	            fflush(stdout) != 0))
		rc = write_failed(e);
	buf_free(&out);
	if (!rc)
		say_truncated(f, rows, truncated);
	return rc;
}

int sqlout_stream_new(enum sqlout_format f, int pretty, FILE *fp,
                      struct sqlout_stream **out, struct err *e)
{
	struct sqlout_stream *s = malloc(sizeof *s);

	*out = NULL;
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (stream_init(s, f, pretty, fp, NULL, e)) {
		stream_fini(s);
		free(s);
		return e->code;
	}
	*out = s;
	return 0;
}

int sqlout_stream_head(struct sqlout_stream *s, const char *columns,
                       size_t n, struct err *e)
{
	if (feed(s, "{\"columns\":", 11, e) || feed(s, columns, n, e) ||
	    feed(s, ",\"rows\":[", 9, e))
		return e->code;
	return stream_write(s, e);
}

int sqlout_stream_rows(struct sqlout_stream *s, const char *rows, size_t n,
                       struct err *e)
{
	if (!n)
		return 0;
	if ((s->batches++ && feed(s, ",", 1, e)) || feed(s, rows, n, e))
		return e->code;
	return stream_write(s, e);
}

int sqlout_stream_end(struct sqlout_stream *s, int64_t row_count,
                      int truncated, struct err *e)
{
	char tail[80];
	int n = snprintf(tail, sizeof tail, "],\"row_count\":%lld,"
	                 "\"truncated\":%s}", (long long)row_count,
	                 truncated ? "true" : "false");

	if (feed(s, tail, (size_t)n, e) || finish(s, e) || stream_write(s, e))
		return e->code;
	say_truncated(s->r.f, row_count, truncated);
	return 0;
}

void sqlout_stream_free(struct sqlout_stream *s)
{
	if (!s)
		return;
	stream_fini(s);
	free(s);
}
