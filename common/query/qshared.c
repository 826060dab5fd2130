/* qshared: the helpers every query kind shares (see qshared.h). */
#include "query/qshared.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"

const json_t *q_array(const json_t *obj, const char *key)
{
	const json_t *a = obj ? json_object_get(obj, key) : NULL;
	return json_is_array(a) ? a : NULL;
}

double q_number(const json_t *obj, const char *key, int *ok)
{
	const json_t *v = json_object_get(obj, key);
	if (!json_is_number(v)) {
		*ok = 0;
		return 0;
	}
	*ok = 1;
	return json_number_value(v);
}

int q_overlaps(const struct qctx *q, const json_t *obj, const char *kstart,
               const char *kend)
{
	int ok1, ok2;
	double a = q_number(obj, kstart, &ok1), b = q_number(obj, kend, &ok2);
	return ok1 && ok2 && a <= q->end && b >= q->start;
}

int q_wide(const struct qctx *q)
{
	return q->end - q->start >= q->duration / 4;
}

int q_given(const char *s)
{
	return s && *s;
}

int q_str_eq(const json_t *obj, const char *key, const char *s)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_string(v) && strlen(s) == json_string_length(v) &&
	       !memcmp(json_string_value(v), s, json_string_length(v));
}

int q_int_eq(const json_t *v, int64_t want)
{
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v) == want;
	if (json_is_real(v))
		return json_real_value(v) == (double)want &&
		       (double)want == json_real_value(v) &&
		       fabs(json_real_value(v)) < 9.2e18 &&
		       (int64_t)json_real_value(v) == want;
	return 0;
}

int64_t q_id(const json_t *obj, size_t k)
{
	const json_t *v = json_object_get(obj, "id");
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : (int64_t)k;
}

int q_select_profiles(struct qctx *q, size_t **idx, size_t *n)
{
	const json_t *profiles = q_array(q->cat, "profiles");
	size_t total = json_array_size(profiles), k;
	const json_t *pr;

	*n = 0;
	*idx = malloc((total ? total : 1) * sizeof **idx);
	if (!*idx)
		return err_set(q->e, ERR_NOMEM, "out of memory");
	json_array_foreach(profiles, k, pr) {
		if (!json_is_object(pr))
			continue;
		if (q_given(q->p->worker) && !q_str_eq(pr, "worker", q->p->worker))
			continue;
		if (q->p->has_rank &&
		    !q_int_eq(json_object_get(pr, "rank"), q->p->rank))
			continue;
		if (q->p->has_profile && q_id(pr, k) != q->p->profile)
			continue;
		(*idx)[(*n)++] = k;
	}
	return 0;
}

void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to)
{
	uint64_t off = (uint64_t)q->p->offset, lim = (uint64_t)q->p->limit;
	*from = off < total ? (size_t)off : total;
	*to = total - *from < lim ? total : *from + (size_t)lim;
}

void q_list_head(struct qctx *q, size_t total)
{
	buf_puts(q->out, "{\"total\":");
	jsonout_int(q->out, (int64_t)total);
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
}

size_t q_obj_open_except(struct buf *b, const json_t *obj,
                         const char *const *skip)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	buf_putc(b, '{');
	json_object_foreach((json_t *)obj, key, v) {
		int skipped = 0;
		for (const char *const *s = skip; s && *s; s++)
			if (!strcmp(*s, key))
				skipped = 1;
		if (skipped)
			continue;
		if (n++)
			buf_putc(b, ',');
		jsonout_cstr(b, key);
		buf_putc(b, ':');
		jsonout_tree(b, v, 0);
	}
	return n;
}
