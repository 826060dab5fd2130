/* row: streamed rows and their sink (see row.h); the duration bucket and
 * the JSON text of a sample and of a point. */
#include "base/row.h"
#include "base/jsonout.h"

#include <math.h>
#include <string.h>

void row_sample_print(struct buf *b, const struct row_sample *r,
                      size_t *tid_off, size_t *tid_len)
{
	size_t toff;

	buf_putc(b, '[');
	jsonout_real(b, r->time);
	buf_putc(b, ',');
	toff = b->len;
	jsonout_str(b, r->tid, r->tid_len);
	if (tid_off)
		*tid_off = toff;
	if (tid_len)
		*tid_len = b->len - toff;
	buf_putc(b, ',');
	jsonout_int(b, r->stack);
	buf_putc(b, ',');
	jsonout_int(b, r->source_row);
	buf_putc(b, ']');
}

void row_point_print(struct buf *b, const struct row_point *r,
                     size_t *value_off, size_t *value_len)
{
	size_t at = b->len, voff, vlen;

	if (r->text) {
		buf_append(b, r->text, r->text_len);
		voff = at + r->value_off;
		vlen = r->value_len;
	} else {
		buf_putc(b, '[');
		jsonout_real(b, r->time);
		buf_putc(b, ',');
		voff = b->len;
		num_emit(b, &r->value);
		vlen = b->len - voff;
		buf_putc(b, ',');
		jsonout_int(b, r->source_id);
		buf_putc(b, ',');
		jsonout_int(b, r->source_row);
		buf_putc(b, ']');
	}
	if (value_off)
		*value_off = voff;
	if (value_len)
		*value_len = vlen;
}

int row_bucket(double start, double end)
{
	double d = end - start;

	if (!(d > 1e-9))
		return ROW_BUCKET_MIN; /* also end < start */
	if (!isfinite(d))
		return ROW_BUCKET_MAX;
	double b = ceil(log2(d));
	if (b < ROW_BUCKET_MIN)
		return ROW_BUCKET_MIN;
	if (b > ROW_BUCKET_MAX)
		return ROW_BUCKET_MAX;
	return (int)b;
}

const char *evidence_collection_key(enum evidence_collection c)
{
	static const char *const keys[EVIDENCE_NCOLLECTIONS] = {
		"requests", "sessions", "server_spans", "iterations"
	};
	return (unsigned)c < EVIDENCE_NCOLLECTIONS ? keys[c] : "";
}

struct row_event row_event_of(int64_t name, double start, double end)
{
	struct row_event row;

	memset(&row, 0, sizeof row);
	row.start = start;
	row.end = end;
	row.name = name;
	row.tid = "";
	return row;
}
