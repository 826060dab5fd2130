/*
 * store_payload: the parser of the `payload` column of the samples and
 * points tables, the JSON array [time, x, int, int] (x: a global tid string
 * for a sample, a number or null for a point), parsed with yajl through a
 * reusable handle that accepts consecutive values.  The store reader
 * (store.c) owns the handle and the context; nothing else needs this.
 */
#ifndef DSIGHT_STORE_PAYLOAD_H
#define DSIGHT_STORE_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "base/buf.h"

/* One payload's parse state and result. */
struct store_payload {
	struct buf *num_text; /* borrowed: receives a point's value text */
	struct buf *str_text; /* borrowed: receives a sample's tid */
	int depth;
	int index;      /* element index within the row array */
	int bad;
	int done;
	int is_point;   /* element 1: number/null (point) or string (sample) */
	double time;
	int value_kind; /* 0 null, 1 number */
	int64_t ints[2];
};

/* Parses one payload (text, n bytes, borrowed) into p (borrowed; set
 * is_point and the buffers first) with the parser *ph, allocated on first
 * use (the caller owns it and yajl_free's it).  Returns 0 with p filled,
 * or -1 when the payload is malformed (*ph is then freed and NULL). */
int store_payload_parse(yajl_handle *ph, struct store_payload *p,
                        const unsigned char *text, size_t n);

#endif
