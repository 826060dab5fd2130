/*
 * sqlout: how `dsight query` prints an answer (doc/query-semantics.md
 * "Output" and "sql"): the JSON document as the engine wrote it (--pretty
 * indents it), or, for the sql kind, `--format jsonl|csv|tsv` rendered from
 * that document.  The rendering reads the JSON the engine or the session
 * sent, so a local and a remote query print the same bytes, and every
 * number keeps the text the JSON form prints.  An sql answer is printed
 * as it arrives, a batch of rows at a time (struct sqlout_stream).
 */
#ifndef DSIGHT_SQLOUT_H
#define DSIGHT_SQLOUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

enum sqlout_format { SQLOUT_JSON, SQLOUT_JSONL, SQLOUT_CSV, SQLOUT_TSV };

/* The format named s ("json", "jsonl", "csv", "tsv"); -1 if none. */
int sqlout_parse_format(const char *s, enum sqlout_format *f);

/*
 * Appends the printed form of answer json (n bytes, the engine's compact
 * JSON) to out, ending with a newline.  SQLOUT_JSON copies it (indented
 * when pretty); the others need an sql answer {"columns", "rows",
 * "row_count", "truncated"}: jsonl is a line {"columns":[...]}, one JSON
 * array per row and a line {"row_count":N,"truncated":B}; csv (RFC 4180,
 * CRLF line ends; NULL an empty field, empty text "") and tsv (LF; \\, \t,
 * \n, \r escaped; NULL \N) are a header row and the rows.  *rows and
 * *truncated (may be NULL) get the answer's row_count and truncated.
 * ERR_DATA when json is not such a document.
 */
int sqlout_render(const char *json, size_t n, enum sqlout_format f,
                  int pretty, struct buf *out, int64_t *rows,
                  int *truncated, struct err *e);

/* Renders answer json (as sqlout_render) and writes it to stdout; a csv or
 * tsv answer that was truncated also gets a line saying so on stderr.
 * Returns 0 or the error code (message in e); the caller prints it. */
int sqlout_print(const char *json, size_t n, enum sqlout_format f,
                 int pretty, struct err *e);

/*
 * An answer printed as it arrives (the CLI's sql kind, local and through
 * a session): the pieces of the document sqlout_render would read, and
 * the output of each written to fp (flushed) before the next comes, in the
 * same bytes.  head: the columns (a JSON array); rows: the next rows, JSON
 * arrays separated by commas (n == 0: none); end: row_count and truncated
 * (the csv/tsv line on stderr too).  Each returns 0 or an error code
 * (message in e).  *out is the caller's (sqlout_stream_free).
 */
struct sqlout_stream;
int sqlout_stream_new(enum sqlout_format f, int pretty, FILE *fp,
                      struct sqlout_stream **out, struct err *e);
int sqlout_stream_head(struct sqlout_stream *s, const char *columns,
                       size_t n, struct err *e);
int sqlout_stream_rows(struct sqlout_stream *s, const char *rows, size_t n,
                       struct err *e);
int sqlout_stream_end(struct sqlout_stream *s, int64_t row_count,
                      int truncated, struct err *e);
void sqlout_stream_free(struct sqlout_stream *s);

#endif
