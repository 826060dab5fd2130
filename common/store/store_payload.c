/* store_payload: the sample and point payload parser (see store_payload.h). */
#include "store/store_payload.h"

#include "base/num.h"

static int pl_null(void *ctx)
{
	struct store_payload *p = ctx;
	if (p->depth != 1 || p->index != 1 || !p->is_point)
		p->bad = 1;
	else
		p->value_kind = 0;
	p->index++;
	return !p->bad;
}

static int pl_bool(void *ctx, int v)
{
	struct store_payload *p = ctx;
	(void)v;
	p->bad = 1;
	return 0;
}

static int pl_number(void *ctx, const char *t, size_t n)
{
	struct store_payload *p = ctx;
	struct num v;

	if (p->depth != 1) {
		p->bad = 1;
		return 0;
	}
	if (p->index == 0) {
		/* the time: yajl checked the token; its value is the row's
		 * REAL time column (the same double), read by the caller */
		(void)t;
		(void)n;
	} else if (p->index == 1) {
		if (!p->is_point) {
			p->bad = 1;
			return 0;
		}
		buf_reset(p->num_text);
		buf_append(p->num_text, t, n);
		p->value_kind = 1;
	} else if (p->index <= 3) {
		if (num_parse(t, n, &v) || v.kind != NUM_INT) {
			p->bad = 1;
			return 0;
		}
		p->ints[p->index - 2] = v.i;
	} else {
		p->bad = 1;
		return 0;
	}
	p->index++;
	return 1;
}

static int pl_string(void *ctx, const unsigned char *t, size_t n)
{
	struct store_payload *p = ctx;
	if (p->depth != 1 || p->index != 1 || p->is_point) {
		p->bad = 1;
		return 0;
	}
	buf_reset(p->str_text);
	buf_append(p->str_text, t, n);
	p->index++;
	return 1;
}

static int pl_start_array(void *ctx)
{
	struct store_payload *p = ctx;
	if (p->depth != 0 || p->done) {
		p->bad = 1;
		return 0;
	}
	p->depth = 1;
	p->index = 0;
	return 1;
}

static int pl_end_array(void *ctx)
{
	struct store_payload *p = ctx;
	p->depth = 0;
	if (p->index != 4) {
		p->bad = 1;
		return 0;
	}
	p->done = 1;
	return 1;
}

static int pl_map(void *ctx)
{
	struct store_payload *p = ctx;
	p->bad = 1;
	return 0;
}

static int pl_key(void *ctx, const unsigned char *t, size_t n)
{
	(void)t;
	(void)n;
	return pl_map(ctx);
}

static const yajl_callbacks pl_callbacks = {
	pl_null, pl_bool, NULL, NULL, pl_number, pl_string,
	pl_map, pl_key, pl_map, pl_start_array, pl_end_array,
};

int store_payload_parse(yajl_handle *ph, struct store_payload *p,
                        const unsigned char *text, size_t n)
{
	yajl_status st;

	if (!*ph) {
		*ph = yajl_alloc(&pl_callbacks, NULL, p);
		if (!*ph)
			return -1;
		yajl_config(*ph, yajl_allow_multiple_values, 1);
	}
	p->depth = 0;
	p->index = 0;
	p->bad = 0;
	p->done = 0;
	p->value_kind = 0;
	st = yajl_parse(*ph, text, n);
	if (st != yajl_status_ok || p->bad || !p->done || p->depth != 0) {
		yajl_free(*ph);
		*ph = NULL;
		return -1;
	}
	return 0;
}
