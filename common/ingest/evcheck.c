/* evcheck: the checks evparse runs when an object ends (see evcheck.h). */
#include "ingest/evcheck.h"

#include <math.h>

int evcheck_id(struct evparse *p, const struct frame *f)
{
	json_t *id = json_object_get(f->node, "id");
	if (json_is_integer(id) && json_integer_value(id) == f->ord)
		return 1;
	return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".id: %s (must equal the array index %lld)",
	            id ? "wrong" : "missing", (long long)f->ord);
}

int evcheck_request(struct evparse *p, const struct frame *f)
{
	json_t *id = json_object_get(f->node, "id");
	char q[120];

	if (!json_is_string(id))
		return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".id: expected a string, got %s",
		            id ? "another type" : "nothing");
	const char *s = json_string_value(id);
	size_t n = json_string_length(id);
	if (json_object_getn(p->req_ids, s, n)) {
		evparse_quoted(q, sizeof q, s, n);
		return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".id: duplicate request id '%s'", q);
	}
	if (json_object_setn_new_nocheck(p->req_ids, s, n, json_true()))
		return evparse_nomem(p);
	/* the engine windows requests by these times */
	static const char *const times[] = { "start", "end", "first" };
	for (int k = 0; k < 3; k++) {
		json_t *t = json_object_get(f->node, times[k]);
		if (t && !json_is_number(t) && !(k == 2 && json_is_null(t)))
			return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".%s: expected a number%s",
			            times[k], k == 2 ? " or null" : "");
	}
	return 1;
}

/* A dictionary (`names`) must hold strings: the engine prints them. */
int evcheck_names(struct evparse *p, json_t *obj)
{
	json_t *names = json_object_get(obj, "names"), *x;
	size_t i;

	json_array_foreach(names, i, x)
		if (!json_is_string(x))
			return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".names[%zu]: expected a string", i);
	return 1;
}

int evcheck_bounds(struct evparse *p, const struct evrow_bounds *b, int64_t size,
                        const char *rows, const char *what, const char *dict)
{
	int64_t v, row = evrow_bounds_first_bad(b, size < 0 ? 0 : size, &v);
	if (row < 0)
		return 1;
	return evparse_fail(p, evparse_path_of(p, p->depth, 0), ".%s[%lld]: %s %lld outside %s (%lld entries)",
	            rows, (long long)row, what, (long long)v, dict,
	            (long long)(size < 0 ? 0 : size));
}

int evcheck_stack_entries(struct evparse *p, json_t *cpu)
{
	json_t *stacks = json_object_get(cpu, "stacks"), *st, *x;
	int64_t nn = evparse_array_size_of(cpu, "names");
	size_t i, j;

	json_array_foreach(stacks, i, st) {
		if (!json_is_array(st))
			return evparse_fail(p, evparse_path_of(p, p->depth, 0),
			            ".stacks[%zu]: expected an array of name indexes", i);
		json_array_foreach(st, j, x) {
			if (!json_is_integer(x))
				return evparse_fail(p, evparse_path_of(p, p->depth, 0),
				            ".stacks[%zu][%zu]: expected a name index", i, j);
			if (json_integer_value(x) < 0 || json_integer_value(x) >= (nn < 0 ? 0 : nn))
				return evparse_fail(p, evparse_path_of(p, p->depth, 0),
				            ".stacks[%zu][%zu]: name_index %lld outside names (%lld entries)",
				            i, j, (long long)json_integer_value(x),
				            (long long)(nn < 0 ? 0 : nn));
		}
	}
	return 1;
}

int evcheck_meta(struct evparse *p, json_t *meta, const char *path)
{
	json_t *d = json_object_get(meta, "duration");
	if (!d)
		return evparse_fail(p, path, "missing");
	if (!json_is_number(d) || !(json_number_value(d) > 0) ||
	    !isfinite(json_number_value(d)))
		return evparse_fail(p, path, "expected a finite number > 0");
	return 1;
}
