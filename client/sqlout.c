/* sqlout: printing an answer as json, jsonl, csv or tsv (see sqlout.h). */
#include "sqlout.h"

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

/* Renders an sql answer as jsonl, csv or tsv. */
static int render_rows(const char *json, size_t n, struct render *r,
                       struct err *e)
{
	yajl_handle h = yajl_alloc(&callbacks, NULL, r);
	int ok;

	if (!h)
		return err_set(e, ERR_NOMEM, "out of memory");
	ok = yajl_parse(h, (const unsigned char *)json, n) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok;
	yajl_free(h);
	if (!ok || !r->seen_columns || !r->seen_rows)
		return err_set(e, ERR_DATA, "The answer is not the rows of an "
		               "sql statement: cannot print it as %s",
		               r->f == SQLOUT_JSONL ? "jsonl" :
		               r->f == SQLOUT_CSV ? "csv" : "tsv");
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
	struct render r;
	int rc = 0;

	memset(&r, 0, sizeof r);
	if (f == SQLOUT_JSON) {
		if (!pretty)
			buf_append(out, json, n);
		else if (jsonout_pretty(json, n, out))
			return err_set(e, ERR_DATA,
			               "cannot pretty-print the response");
		buf_putc(out, '\n');
	} else {
		r.f = f;
		r.out = out;
		rc = render_rows(json, n, &r, e);
	}
	if (!rc && out->failed)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	if (rows)
		*rows = r.row_count;
	if (truncated)
		*truncated = r.truncated;
	return rc;
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
		rc = err_set(e, ERR_DATA, "cannot write the response");
	buf_free(&out);
	if (!rc && truncated && (f == SQLOUT_CSV || f == SQLOUT_TSV))
		fprintf(stderr, "dsight query: truncated after %lld rows: more "
		        "exist (--max-rows, at most 1000000, and 16 MiB of "
		        "answer bound what is printed)\n", (long long)rows);
	return rc;
}
