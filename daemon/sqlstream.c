/* sqlstream: a streamed sql answer's cursor and frames (see sqlstream.h). */
#include "sqlstream.h"

#include <stdlib.h>

#include "base/jsonout.h"
#include "frame.h"
#include "query/query_sql.h"
#include "rpc.h"

struct sqlstream {
	struct query_sql_cursor *cur;
	int opened;
};

int sqlstream_new(struct sqlstream **out)
{
	*out = calloc(1, sizeof **out);
	return *out ? 0 : ERR_NOMEM;
}

void sqlstream_free(struct sqlstream *s)
{
	if (!s)
		return;
	query_sql_close(s->cur);
	free(s);
}

/* The error response of the answer (replacing its batch). */
static int fail(struct buf *o, size_t off, const json_t *id, int code,
                const char *msg)
{
	o->len = off;
	o->failed = 0;
	off = frame_begin(o);
	rpc_error(o, id, code, msg);
	frame_end(o, off, FRAME_RESPONSE_MAX);
	return 1;
}

int sqlstream_step(struct sqlstream *s, struct session_gen *g,
                   struct query_params *p, const json_t *id, struct buf *o)
{
	size_t start = o->len, off, head, mark;
	struct buf none;
	struct err e;
	int rc, first = !s->opened;

	err_clear(&e);
	if (first) {
		s->opened = 1;
		p->sql_cursor = &s->cur;
		buf_init(&none, 0);
		rc = session_gen_query(g, p, &none, &e);
		buf_free(&none);
		if (!rc && !s->cur) /* answered without a cursor: cannot be */
			rc = err_set(&e, ERR_DATA, "The statement could not start");
		if (rc)
			return fail(o, start, id, rpc_code_for_err(rc), e.msg);
	}
	off = frame_begin(o);
	rpc_rows_open(o, id);
	if (first) {
		buf_puts(o, ",\"generation\":");
		jsonout_cstr(o, session_gen_id(g));
		buf_puts(o, ",\"columns\":");
		query_sql_columns(s->cur, o);
	}
	buf_puts(o, ",\"rows\":[");
	head = o->len - start + 3; /* "]}}" */
	mark = o->len;
	rc = query_sql_next(s->cur, o, head < SQLSTREAM_FRAME ?
	                    SQLSTREAM_FRAME - head : 0,
	                    QUERY_SQL_ROW_MAX, QUERY_SQL_FLUSH_S, &e);
	if (rc && o->len == mark)
		return fail(o, start, id, rpc_code_for_err(rc), e.msg);
	if (!first && o->len == mark)
		o->len = start; /* the end, and no row since the last batch */
	else
		buf_puts(o, "]}}");
	if (o->len > start && frame_end(o, off, FRAME_RESPONSE_MAX))
		return fail(o, start, id, RPC_INTERNAL_ERROR, "Out of memory");
	if (rc) /* the rows computed before the error go out first */
		return fail(o, o->len, id, rpc_code_for_err(rc), e.msg);
	if (!query_sql_done(s->cur))
		return 0;
	off = frame_begin(o);
	rpc_result_open(o, id);
	buf_puts(o, "{\"generation\":");
	jsonout_cstr(o, session_gen_id(g));
	buf_puts(o, ",\"data\":{\"row_count\":");
	jsonout_int(o, query_sql_row_count(s->cur));
	buf_puts(o, query_sql_truncated(s->cur) ? ",\"truncated\":true}}"
	                                        : ",\"truncated\":false}}");
	rpc_result_close(o);
	if (frame_end(o, off, FRAME_RESPONSE_MAX))
		return fail(o, start, id, RPC_INTERNAL_ERROR, "Out of memory");
	return 1;
}
