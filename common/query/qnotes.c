/* qnotes: the sentences of an empty result (see qnotes.h). */
#include "query/qnotes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonout.h"
#include "base/strdict.h"
#include "base/vec.h"
#include "base/text.h"

#define NAMES_SHOWN 20

/* A set of distinct names in first-seen order (borrowed strings). */
struct names {
	const char **v;
	size_t n, cap;
	int oom;
	json_t *own; /* strings read from the dataset's tables */
	struct strdict seen; /* the same names: membership in constant time
	                        (a million requests have 200,000 sessions) */
};

static void names_add(struct names *s, const json_t *v)
{
	const char *str;
	int added = 0;
	if (!json_is_string(v))
		return;
	str = json_string_value(v);
	if (strdict_intern(&s->seen, str, strlen(str), &added) < 0) {
		s->oom = 1;
		return;
	}
	if (!added)
		return;
	if (vec_reserve(&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
		s->oom = 1;
		return;
	}
	s->v[s->n++] = str;
}

/* names_add for member key of each element of the catalog array. */
static void names_from(struct names *s, const json_t *cat, const char *arr,
                       const char *key, int key_is_array)
{
	size_t k, i;
	const json_t *el, *v;
	json_array_foreach(q_array(cat, arr), k, el) {
		const json_t *m = json_object_get(el, key);
		if (!key_is_array) {
			names_add(s, m);
			continue;
		}
		json_array_foreach(m, i, v) {
			names_add(s, v);
		}
	}
}

static int names_add_text(void *ctx, const char *str, size_t n)
{
	struct names *s = ctx;
	json_t *v = json_stringn_nocheck(str, n);
	if (!s->own)
		s->own = json_array();
	if (!v || !s->own || json_array_append_new(s->own, v)) {
		s->oom = 1;
		return 0;
	}
	names_add(s, v);
	return 0;
}

/* names_add for the names a catalog collection holds (what names_from
 * reads from the tree, wherever the dataset keeps the collection). */
static void names_from_coll(struct names *s, struct qctx *q,
                            enum dataset_names which)
{
	struct err e;
	err_clear(&e);
	if (dataset_names(q->ds, which, names_add_text, s, &e))
		s->oom = 1;
}

static void names_free(struct names *s)
{
	free(s->v);
	json_decref(s->own);
	strdict_free(&s->seen);
}

static int names_has(const struct names *s, const char *v)
{
	int64_t ignored;
	return strdict_get(&s->seen, v, strlen(v), &ignored);
}

/* "a, b, c[, and N more]" (at most NAMES_SHOWN). */
static void names_list(struct buf *b, const char *const *v, size_t n,
                       int and_more)
{
	size_t shown = n < NAMES_SHOWN ? n : NAMES_SHOWN;
	for (size_t k = 0; k < shown; k++)
		buf_printf(b, "%s%s", k ? ", " : "", v[k]);
	if (and_more && n > shown)
		buf_printf(b, ", and %zu more", n - shown);
}

struct out {
	struct qctx *q;
	size_t count;
};

static void note(struct out *o, struct buf *text)
{
	buf_puts(o->q->out, o->count++ ? "," : ",\"notes\":[");
	jsonout_str(o->q->out, text->data ? text->data : "", text->len);
	buf_reset(text);
}

/* The values the user gave for a multi-value parameter (a single empty
 * worker is no value). */
static struct qlist given(const char *one, const struct qlist *list,
                          int empty_is_none, const char **slot)
{
	struct qlist l = {NULL, 0};
	if (list->n)
		return *list;
	if (one && (*one || !empty_is_none)) {
		*slot = one;
		l.v = slot;
		l.n = 1;
	}
	return l;
}

/* The kind whose rows and filters the query reads: a timeline's source
 * (its `of`), else the kind itself. */
static const char *source_kind(const struct qctx *q)
{
	if (!strcmp(q->kind, "timeline"))
		return q->p->of ? q->p->of : "requests";
	return q->kind;
}

static int uses(const struct qctx *q, const char *param)
{
	return qparam_used_by(qparam_by_name(param), source_kind(q));
}

static void worker_notes(struct out *o, struct buf *t)
{
	struct qctx *q = o->q;
	const char *slot;
	struct qlist vals = given(q->p->worker, &q->p->worker_list, 1, &slot);
	struct names known = {0};

	if (q->join.on || !vals.n || !uses(q, "worker"))
		return;
	names_from(&known, q->cat, "workers", "id", 0);
	names_from(&known, q->cat, "profiles", "worker", 0);
	names_from(&known, q->cat, "metrics", "worker", 0);
	names_from_coll(&known, q, DATASET_REQUEST_WORKERS);
	for (size_t k = 0; k < vals.n && !known.oom; k++) {
		if (names_has(&known, vals.v[k]))
			continue;
		buf_printf(t, "No worker named '%s'. Workers: ", vals.v[k]);
		if (known.n)
			names_list(t, known.v, known.n, 1);
		else
			buf_puts(t, "none");
		buf_putc(t, '.');
		note(o, t);
	}
	names_free(&known);
}

static void session_agent_notes(struct out *o, struct buf *t, int agents)
{
	struct qctx *q = o->q;
	const char *slot;
	struct qlist vals =
		agents ? given(q->p->agent, &q->p->agent_list, 0, &slot)
		       : given(q->p->session, &q->p->session_list, 0, &slot);
	struct names known = {0};

	if (!vals.n || !uses(q, agents ? "agent" : "session"))
		return;
	if (agents) {
		names_from_coll(&known, q, DATASET_SESSION_AGENTS);
		names_from_coll(&known, q, DATASET_REQUEST_AGENTS);
	} else {
		names_from_coll(&known, q, DATASET_SESSION_IDS);
		names_from_coll(&known, q, DATASET_REQUEST_SESSIONS);
	}
	for (size_t k = 0; k < vals.n && !known.oom; k++) {
		if (names_has(&known, vals.v[k]))
			continue;
		if (agents)
			buf_printf(t, "No agent named '%s'. The sessions kind "
			              "lists agents.",
			           vals.v[k]);
		else
			buf_printf(t, "No session named '%s'. The sessions kind "
			              "lists them.",
			           vals.v[k]);
		note(o, t);
	}
	names_free(&known);
}

static void series_notes(struct out *o, struct buf *t)
{
	struct qctx *q = o->q;
	const char *slot;
	struct qlist vals = given(q->p->name, &q->p->name_list, 0, &slot);
	struct names known = {0};

	if (strcmp(source_kind(q), "metrics") || !vals.n)
		return;
	names_from(&known, q->cat, "metrics", "name", 0);
	for (size_t k = 0; k < vals.n && !known.oom; k++) {
		const char *v = vals.v[k];
		char *needle;
		size_t nlen, m = 0;
		if (names_has(&known, v))
			continue;
		buf_printf(t, "No series named '%s'.", v);
		needle = text_lower(v, strlen(v), &nlen);
		for (size_t i = 0; needle && i < known.n && m < NAMES_SHOWN;
		     i++) {
			if (!text_contains(known.v[i], strlen(known.v[i]),
			                   needle, nlen))
				continue;
			buf_printf(t, "%s%s", m++ ? ", " : " Names containing it: ",
			           known.v[i]);
		}
		if (m)
			buf_putc(t, '.');
		free(needle);
		note(o, t);
	}
	names_free(&known);
}

static void profile_notes(struct out *o, struct buf *t)
{
	struct qctx *q = o->q;
	const json_t *profiles = q_array(q->cat, "profiles"), *pr;
	size_t k, n = json_array_size(profiles);

	if (!q->p->has_profile || !uses(q, "profile"))
		return;
	json_array_foreach(profiles, k, pr) {
		if (q_id(pr, k) == q->p->profile)
			return;
	}
	if (n)
		buf_printf(t, "No profile %lld; profiles are 0-%zu.",
		           (long long)q->p->profile, n - 1);
	else
		buf_printf(t, "No profile %lld; the dataset has no profiles.",
		           (long long)q->p->profile);
	note(o, t);
}

static int64_t cpu_samples(const json_t *pr)
{
	const json_t *cpu = json_object_get(pr, "cpu");
	const json_t *sc = json_object_get(cpu, "sample_count");
	if (!json_is_object(cpu))
		return 0;
	if (json_is_integer(sc))
		return (int64_t)json_integer_value(sc);
	return (int64_t)json_array_size(json_object_get(cpu, "samples"));
}

static void cpu_notes(struct out *o, struct buf *t)
{
	struct qctx *q = o->q;
	const json_t *profiles = q_array(q->cat, "profiles"), *pr;
	size_t *idx = NULL, n = 0, k, m = 0;

	if (strcmp(source_kind(q), "cpu") || q_select_profiles(q, &idx, &n))
		return;
	for (k = 0; k < n; k++)
		if (cpu_samples(json_array_get(profiles, idx[k])) > 0)
			break;
	if (n && k == n) {
		buf_puts(t, "The selected profiles have no CPU samples. "
		            "Profiles with CPU samples: ");
		json_array_foreach(profiles, k, pr) {
			if (cpu_samples(pr) > 0)
				buf_printf(t, "%s%lld", m++ ? ", " : "",
				           (long long)q_id(pr, k));
		}
		buf_puts(t, m ? "." : "none.");
		note(o, t);
	}
	free(idx);
}

static void join_notes(struct out *o, struct buf *t)
{
	struct qctx *q = o->q;
	const json_t *profiles = q_array(q->cat, "profiles"), *pr;
	size_t k;

	if (!q->join.on)
		return;
	if (!q->join.nall) {
		buf_printf(t, "Request %s has no workers.", q->join.id);
		note(o, t);
		return;
	}
	if (!q->join.nworkers ||
	    (strcmp(source_kind(q), "nsys") && strcmp(source_kind(q), "cpu")))
		return;
	json_array_foreach(profiles, k, pr) {
		if (q_field_in(&q->workers, pr, "worker"))
			return;
	}
	buf_printf(t, "No profile belongs to the workers of request %s: ",
	           q->join.id);
	names_list(t, q->join.workers, q->join.nworkers, 0);
	buf_putc(t, '.');
	note(o, t);
}

/* The phase's roles (qjoin.c), said whether or not the list is empty. */
static void role_notes(struct out *o, struct buf *t)
{
	if (!o->q->join.on || !o->q->join.role_note)
		return;
	buf_puts(t, o->q->join.role_note);
	note(o, t);
}

void qnotes_emit(struct qctx *q, size_t total)
{
	struct out o = {q, 0};
	struct buf t;

	buf_init(&t, 0);
	if (total) {
		role_notes(&o, &t);
		goto done;
	}
	worker_notes(&o, &t);
	session_agent_notes(&o, &t, 0);
	session_agent_notes(&o, &t, 1);
	series_notes(&o, &t);
	profile_notes(&o, &t);
	cpu_notes(&o, &t);
	join_notes(&o, &t);
	role_notes(&o, &t);
done:
	if (o.count)
		buf_putc(q->out, ']');
	if (t.failed)
		q->out->failed = t.failed;
	buf_free(&t);
}

/* The request's lifecycle; when it is not available, with "notes" saying
 * why (no server span joined to it, or none in the whole capture). */
int qnotes_lifecycle(struct qctx *q, const json_t *r)
{
	const json_t *lc = json_object_get(r, "lifecycle");
	const json_t *caps = json_object_get(q->cat, "capabilities");
	const json_t *id = json_object_get(r, "id");
	json_t *copy;
	char note[512];

	if (!json_is_object(lc) ||
	    !json_is_false(json_object_get(lc, "available"))) {
		jsonout_tree(q->out, lc ? lc : json_null(), 0);
		return 0;
	}
	if (!json_is_true(json_object_get(caps, "request_breakdown")))
		snprintf(note, sizeof note,
		         "No request of this capture has a lifecycle: it holds "
		         "no server spans joined to requests.");
	else if (!json_array_size(json_object_get(r, "spans")))
		snprintf(note, sizeof note,
		         "No server span is joined to request %.200s, so it has "
		         "no lifecycle (other requests have one).",
		         json_is_string(id) ? json_string_value(id) : "");
	else
		snprintf(note, sizeof note,
		         "Request %.200s has joined server spans, but none makes "
		         "a lifecycle stage.",
		         json_is_string(id) ? json_string_value(id) : "");
	copy = json_copy((json_t *)lc);
	if (!copy || json_object_set_new(copy, "notes",
	                                 json_pack("[s]", note))) {
		json_decref(copy);
		return err_set(q->e, ERR_NOMEM, "out of memory");
	}
	jsonout_tree(q->out, copy, 0);
	json_decref(copy);
	return 0;
}
