/* catsum: request summary columns and values (see catsum.h). */
#include "report/catsum.h"
#include "base/jsonout.h"

static const char *const fields[CATSUM_N] = {
	"id", "session", "agent", "conversation", "status", "client_kind",
	"start", "end", "first", "ttft_ms", "input_tokens", "output_tokens",
	"cached_tokens", "span_count", "server_ids", "workers"};

void catsum_fields(json_t *out)
{
	for (int k = 0; k < CATSUM_N; k++)
		json_array_append_new(out, json_string(fields[k]));
}

void catsum_values(struct buf *b, sqlite3_stmt *st, int col0)
{
	for (int k = 0; k < CATSUM_N; k++) {
		int col = col0 + k;
		buf_putc(b, ',');
		switch (sqlite3_column_type(st, col)) {
		case SQLITE_INTEGER: jsonout_int(b, sqlite3_column_int64(st, col)); break;
		case SQLITE_FLOAT: jsonout_real(b, sqlite3_column_double(st, col)); break;
		case SQLITE_TEXT:
			if (k >= CATSUM_N - 2) /* server_ids, workers: JSON text */
				buf_append(b, sqlite3_column_text(st, col),
				           (size_t)sqlite3_column_bytes(st, col));
			else
				jsonout_str(b, (const char *)sqlite3_column_text(st, col),
				            (size_t)sqlite3_column_bytes(st, col));
			break;
		default: buf_puts(b, "null");
		}
	}
}
