/* qlist: the list response's frame (see qlist.h). */
#include "query/qlist.h"

#include "base/jsonout.h"
#include "query/qjoin.h"
#include "query/qnotes.h"

void q_list_head(struct qctx *q, size_t total)
{
	buf_puts(q->out, "{\"total\":");
	jsonout_int(q->out, (int64_t)total);
	buf_puts(q->out, ",\"items\":[");
}

void q_groups_head(struct qctx *q, size_t total, size_t groups)
{
	buf_puts(q->out, "{\"total\":");
	jsonout_int(q->out, (int64_t)total);
	buf_puts(q->out, ",\"groups\":");
	jsonout_int(q->out, (int64_t)groups);
	buf_puts(q->out, ",\"items\":[");
}

void q_list_tail(struct qctx *q)
{
	buf_puts(q->out, "],\"offset\":");
	jsonout_int(q->out, q->p->offset);
	buf_puts(q->out, ",\"limit\":");
	jsonout_int(q->out, q->p->limit);
	buf_puts(q->out, ",\"range\":[");
	jsonout_real(q->out, q->start);
	buf_putc(q->out, ',');
	jsonout_real(q->out, q->end);
	buf_putc(q->out, ']');
	qjoin_emit(q);
}

void q_list_close(struct qctx *q, size_t total)
{
	qnotes_emit(q, total);
	buf_putc(q->out, '}');
}
