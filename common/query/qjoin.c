/* qjoin: the request join (see qjoin.h). */
#include "query/qjoin.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

int qjoin_applies(const char *kind)
{
	return qparam_used_by(qparam_by_name("phase"), kind);
}

/* A worker's role: the catalog's workers[].role, else a stage or activity
 * of the request's lifecycle that names the worker and says prefill or
 * decode; NULL when unknown. */
static const char *role_of(const json_t *cat, const json_t *r, const char *w)
{
	static const char *const lists[] = {"stages", "activities"};
	const json_t *lc = json_object_get(r, "lifecycle"), *x;
	size_t k;

	json_array_foreach(q_array(cat, "workers"), k, x) {
		const json_t *role = json_object_get(x, "role");
		if (q_str_eq(x, "id", w) && json_is_string(role) &&
		    json_string_length(role))
			return json_string_value(role);
	}
	for (size_t l = 0; l < 2; l++)
		json_array_foreach(q_array(lc, lists[l]), k, x) {
			if (!q_str_eq(x, "worker", w))
				continue;
			if (q_str_eq(x, "role", "prefill"))
				return "prefill";
			if (q_str_eq(x, "role", "decode"))
				return "decode";
		}
	return NULL;
}

/* --phase prefill|decode: keep the workers of that role (agg counts for
 * both) when some role is known, and say which roles were found. */
static int phase_workers(struct qctx *q, const json_t *r)
{
	struct qjoin *j = &q->join;
	const char **role = calloc(j->nworkers + 1, sizeof *role);
	size_t known = 0, kept = 0;
	struct buf t;

	if (!role)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	for (size_t k = 0; k < j->nworkers; k++)
		known += (role[k] = role_of(q->cat, r, j->workers[k])) != NULL;
	buf_init(&t, 0);
	if (!known) {
		buf_printf(&t, "No role is known for the workers of request %s; "
		               "kept every one for the %s phase.",
		           j->id, j->phase);
	} else {
		for (size_t k = 0; k < j->nworkers; k++)
			if (role[k] && (!strcmp(role[k], j->phase) ||
			                !strcmp(role[k], "agg")))
				j->workers[kept++] = j->workers[k];
		if (!kept) {
			buf_printf(&t, "No worker of request %s has the %s role:",
			           j->id, j->phase);
			for (size_t k = 0; k < j->nworkers; k++)
				buf_printf(&t, "%s %s is %s", k ? "," : "",
				           j->workers[k],
				           role[k] ? role[k] : "of unknown role");
			buf_putc(&t, '.');
		}
		j->nworkers = kept;
	}
	free(role);
	if (t.failed) {
		buf_free(&t);
		return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	j->role_note = t.len ? buf_detach(&t, NULL) : NULL;
	buf_free(&t);
	return 0;
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
	j->nall = j->nworkers;
	if (strcmp(j->phase, "whole") && j->nworkers) {
		int rc = phase_workers(q, r);
		if (rc)
			return rc;
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
	free(j->role_note);
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
