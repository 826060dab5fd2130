/* qjoin: the request join (see qjoin.h). */
#include "query/qjoin.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

int qjoin_applies(const char *kind)
{
	return qparam_used_by(qparam_by_name("phase"), kind);
}

static double clamp(double t, double duration)
{
	return t < 0 ? 0 : t > duration ? duration : t;
}

int qjoin_resolve(struct qctx *q)
{
	struct qjoin *j = &q->join;
	const char *id = q->p->request_id;
	const json_t *r = q_request_find(q, id), *ws, *w;
	double start, end, first;
	int ok1, ok2, okf;
	size_t k;

	if (!r)
		return err_set(q->e, ERR_USAGE, "Unknown client request: %s", id);
	j->id = id;
	j->phase = q->p->phase ? q->p->phase : "whole";
	start = q_number(r, "start", &ok1);
	end = q_number(r, "end", &ok2);
	first = q_number(r, "first", &okf);
	if (!ok1 || !ok2)
		return err_set(q->e, ERR_DATA, "Request %s has no start or end",
		               id);
	if (!strcmp(j->phase, "whole")) {
		j->a = start;
		j->b = end;
	} else if (!okf) {
		return err_set(q->e, ERR_USAGE,
		               "Request %s has no first token; use --phase whole",
		               id);
	} else if (!strcmp(j->phase, "prefill")) {
		if (first < start)
			return err_set(q->e, ERR_USAGE,
			               "Request %s has its first token before its "
			               "start; no prefill phase",
			               id);
		j->a = start;
		j->b = first;
	} else {
		if (end < first)
			return err_set(q->e, ERR_USAGE,
			               "Request %s has its first token after its "
			               "end; no decode phase",
			               id);
		j->a = first;
		j->b = end;
	}
	j->a = clamp(j->a, q->duration);
	j->b = clamp(j->b, q->duration);
	ws = json_object_get(r, "workers");
	j->workers = malloc((json_array_size(ws) + 1) * sizeof *j->workers);
	if (!j->workers)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	j->nworkers = 0;
	json_array_foreach(ws, k, w) {
		if (json_is_string(w))
			j->workers[j->nworkers++] = json_string_value(w);
	}
	j->on = 1;
	q->start = j->a;
	q->end = j->b;
	q->workers.v = j->workers;
	q->workers.n = j->nworkers;
	q->workers.on = 1;
	return 0;
}

void qjoin_free(struct qjoin *j)
{
	free(j->workers);
	memset(j, 0, sizeof *j);
}

void qjoin_emit(struct qctx *q)
{
	struct buf *b = q->out;
	const struct qjoin *j = &q->join;

	if (!j->on)
		return;
	buf_puts(b, ",\"request\":{\"id\":");
	jsonout_cstr(b, j->id);
	buf_puts(b, ",\"phase\":");
	jsonout_cstr(b, j->phase);
	buf_puts(b, ",\"window\":[");
	jsonout_real(b, j->a);
	buf_putc(b, ',');
	jsonout_real(b, j->b);
	buf_puts(b, "],\"workers\":[");
	for (size_t k = 0; k < j->nworkers; k++) {
		if (k)
			buf_putc(b, ',');
		jsonout_cstr(b, j->workers[k]);
	}
	buf_puts(b, "]}");
}
