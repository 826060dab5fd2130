/* evparse: yajl callbacks building the catalog and streaming rows (see
 * evparse.h). */
#include "ingest/evparse.h"
#include "ingest/evparse_impl.h"
#include "ingest/evcheck.h"
#include "base/numtext.h"
#include "base/utf8.h"

#include "ingest/capabilities.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------- */

void evparse_where(struct evparse *p, char *out, size_t cap)
{
	const char *path = evparse_path_of(p, p->depth, 1);
	size_t n = strlen(path);
	if (n && path[n - 1] == '.') /* an object before its first key */
		n--;
	if (n > 200)
		snprintf(out, cap, " (at %.*s...%.*s)", (int)utf8_cut(path, n, 80), path,
		         (int)(n - utf8_tail(path, n, 80)), path + utf8_tail(path, n, 80));
	else if (n)
		snprintf(out, cap, " (at %.*s)", (int)n, path);
	else if (cap)
		out[0] = '\0';
}

/* ---- stats ------------------------------------------------------------ */

static int note_profile(struct evparse *p, int64_t ord)
{
	return evstats_note_profile(&p->st, ord);
}

static int note_series(struct evparse *p, int64_t ord)
{
	return evstats_note_series(&p->st, ord);
}

/* ---- rows ------------------------------------------------------------- */

static enum evrow_kind row_kind(enum role r)
{
	return r == R_EVENT ? EVROW_EVENT : r == R_SAMPLE ? EVROW_SAMPLE : EVROW_POINT;
}

static int row_shape_error(struct evparse *p)
{
	return evparse_fail(p, evparse_path_of(p, p->depth, 0), "expected %s",
	            evrow_shape(row_kind(p->fr[p->depth - 1].role)));
}

/* Turns an evrow result into a callback return. */
static int row_result(struct evparse *p, int rc)
{
	const char *what;

	switch (rc) {
	case EVROW_OK:
		return 1;
	case EVROW_SHAPE:
		return row_shape_error(p);
	case EVROW_NOMEM:
		return evparse_nomem(p);
	case EVROW_BIG:
		what = "integer does not fit a signed 64-bit integer";
		break;
	case EVROW_UTF8:
		what = LONE_SURROGATE;
		break;
	default:
		what = "number out of range";
		break;
	}
	return evparse_fail(p, evparse_path_of(p, p->depth, 0), "[%d]: %s", p->row.k, what);
}

static int row_end(struct evparse *p)
{
	struct frame *f = &p->fr[p->depth - 1];
	struct frame *arr = &p->fr[p->depth - 2];
	const struct row_sink *s = p->sink;
	int64_t ord = arr->index;
	int rc = 0;

	if (!evrow_complete(&p->row))
		return row_shape_error(p);
	if (f->role == R_EVENT) {
		struct row_event ev;
		evrow_event(&p->row, &ev);
		if (evrow_bounds_note(&p->names, ord, ev.name))
			return evparse_nomem(p);
		p->st.events++;
		p->st.profile_events[f->ord]++;
		if (s && s->event)
			rc = s->event(s->ctx, f->ord, ord, &ev, p->e);
	} else if (f->role == R_SAMPLE) {
		struct row_sample sa;
		evrow_sample(&p->row, &sa);
		if (evrow_bounds_note(&p->stacks, ord, sa.stack))
			return evparse_nomem(p);
		p->st.samples++;
		p->st.profile_samples[f->ord]++;
		if (s && s->sample)
			rc = s->sample(s->ctx, f->ord, ord, &sa, p->e);
	} else {
		struct row_point pt;
		evrow_point(&p->row, &pt);
		p->st.points++;
		p->st.series_points[f->ord]++;
		if (s && s->point)
			rc = s->point(s->ctx, f->ord, ord, &pt, p->e);
	}
	if (rc) {
		p->rc = rc;
		if (!p->e->msg[0])
			err_set(p->e, rc, "%s: %s: the row was refused", p->file,
			        evparse_path_of(p, p->depth, 0));
		return 0;
	}
	p->depth--;
	arr->index++;
	return 1;
}

/* ---- the tree ----------------------------------------------------------- */

static int key_is(const struct evparse *p, const char *k)
{
	const struct buf *b = &p->keys[p->depth - 1];
	size_t n = strlen(k);
	return b->len == n && memcmp(b->data, k, n) == 0;
}

static const char *kind_name(enum vkind k)
{
	static const char *const names[] = {
		"null", "a boolean", "a number", "a string", "an object", "an array"
	};
	return names[k];
}

/* Checks a value of kind k at the current position against the shape the
 * document needs there and returns the role a container gets (R_NONE for
 * ordinary values), or -1 after failing. */
static int value_role(struct evparse *p, enum vkind k)
{
	const struct frame *f;
	enum role want = R_NONE;
	enum vkind need = V_NULL;
	int any = 1;
	unsigned bit = 0;

	if (p->depth == 0) {
		if (k != V_OBJ)
			return evparse_fail(p, NULL, "the top level is %s, not an object", kind_name(k)), -1;
		return R_TOP;
	}
	f = &p->fr[p->depth - 1];
	switch (f->role) {
	case R_TOP:
		/* a second copy would replay ids and rows: refuse it */
		if (key_is(p, "meta"))
			want = R_META, need = V_OBJ, any = 0, bit = 4;
		else if (key_is(p, "sources"))
			want = R_SOURCES, need = V_ARR, any = 0, bit = 8;
		else if (key_is(p, "requests"))
			want = R_REQUESTS, need = V_ARR, any = 0, bit = 16;
		else if (key_is(p, "metrics"))
			want = R_METRICS, need = V_ARR, any = 0, bit = 32;
		else if (key_is(p, "profiles"))
			want = R_PROFILES, need = V_ARR, any = 0, bit = 64;
		/* the other collections stream when they are arrays (anything
		 * else is carried as is) */
		else if (key_is(p, "sessions") && k == V_ARR)
			want = R_SESSIONS, bit = 128;
		else if (key_is(p, "server_spans") && k == V_ARR)
			want = R_SERVER_SPANS, bit = 256;
		else if (key_is(p, "iterations") && k == V_ARR)
			want = R_ITERATIONS, bit = 512;
		else if (key_is(p, "schema") && k != V_STR)
			return evparse_fail(p, evparse_path_of(p, p->depth, 1), "expected \"%s\"", SCHEMA), -1;
		break;
	case R_SOURCES: want = R_SOURCE, need = V_OBJ, any = 0; break;
	case R_REQUESTS: want = R_REQUEST, need = V_OBJ, any = 0; break;
	case R_METRICS: want = R_SERIES, need = V_OBJ, any = 0; break;
	case R_PROFILES: want = R_PROFILE, need = V_OBJ, any = 0; break;
	case R_SERIES:
		if (key_is(p, "points"))
			want = R_POINTS, need = V_ARR, any = 0, bit = 1;
		break;
	case R_PROFILE:
		if (key_is(p, "events"))
			want = R_EVENTS, need = V_ARR, any = 0, bit = 1;
		else if (key_is(p, "cpu")) {
			if (k != V_NULL && k != V_OBJ)
				return evparse_fail(p, evparse_path_of(p, p->depth, 1),
				            "expected an object or null, got %s", kind_name(k)), -1;
			want = k == V_OBJ ? R_CPU : R_NONE, bit = 2;
		}
		else if (key_is(p, "names"))
			need = V_ARR, any = 0;
		break;
	case R_CPU:
		if (key_is(p, "samples"))
			want = R_SAMPLES, need = V_ARR, any = 0, bit = 1;
		else if (key_is(p, "stacks") || key_is(p, "names"))
			need = V_ARR, any = 0;
		break;
	case R_EVENTS:
	case R_SAMPLES:
	case R_POINTS:
		want = f->role == R_EVENTS ? R_EVENT : f->role == R_SAMPLES ? R_SAMPLE : R_POINT;
		if (k != V_ARR)
			return evparse_fail(p, evparse_path_of(p, p->depth, 1), "expected %s",
			            evrow_shape(row_kind((enum role)want))), -1;
		return want;
	default:
		break;
	}
	if (!any && k != need)
		return evparse_fail(p, evparse_path_of(p, p->depth, 1), "expected %s, got %s",
		            kind_name(need), kind_name(k)), -1;
	if (bit) {
		if (f->seen & bit)
			return evparse_fail(p, evparse_path_of(p, p->depth, 1), "duplicate key"), -1;
		p->fr[p->depth - 1].seen |= bit;
	}
	return want;
}

/* Attaches v (reference taken) at the current position. */
static int attach(struct evparse *p, json_t *v)
{
	struct frame *f;

	if (!v)
		return evparse_nomem(p);
	if (p->depth == 0) {
		p->root = v;
		return 1;
	}
	f = &p->fr[p->depth - 1];
	if (p->depth == 1) {
		/* a top-level member starts an element of its own */
		p->elem_values = 0;
		p->elem_max = ELEMENT_VALUES_MAX;
	}
	if (++p->elem_values > p->elem_max) {
		json_decref(v);
		return evparse_fail(p, evparse_path_of(p, p->depth, 1),
		                    "more than %llu JSON values in one element "
		                    "(a document holds at most that many outside "
		                    "its rows)",
		                    (unsigned long long)p->elem_max);
	}
	if (f->is_obj) {
		struct buf *k = &p->keys[p->depth - 1];
		if (json_object_setn_new_nocheck(f->node, k->data ? k->data : "", k->len, v))
			return evparse_nomem(p);
	} else if (json_array_append_new(f->node, v)) {
		return evparse_nomem(p);
	}
	return 1;
}

static int collection_of(enum role r)
{
	switch (r) {
	case R_REQUESTS: return EVIDENCE_REQUESTS;
	case R_SESSIONS: return EVIDENCE_SESSIONS;
	case R_SERVER_SPANS: return EVIDENCE_SERVER_SPANS;
	case R_ITERATIONS: return EVIDENCE_ITERATIONS;
	default: return -1;
	}
}

static int nonempty_array(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_array(v) && json_array_size(v) > 0;
}

/* A collection element is complete (the last element of f's array): count
 * it and, when the sink takes elements, hand it over and drop it. */
static int element_done(struct evparse *p, struct frame *f, int c, int64_t k)
{
	const struct row_sink *s = p->sink;
	size_t n = json_array_size(f->node);
	json_t *el = json_array_get(f->node, n - 1);
	int rc;

	p->st.elements[c]++;
	if (!s || !s->element)
		return 1;
	if (c == EVIDENCE_REQUESTS) {
		if (json_is_true(json_object_get(json_object_get(el, "lifecycle"),
		                                 "available")))
			p->any_breakdown = 1;
		if (nonempty_array(el, "spans"))
			p->any_spans = 1;
	} else if (c == EVIDENCE_SERVER_SPANS) {
		p->any_spans = 1;
	}
	p->st.streamed = 1;
	rc = s->element(s->ctx, (enum evidence_collection)c, k, el, p->e);
	json_array_remove(f->node, n - 1);
	if (rc) {
		p->rc = rc;
		if (!p->e->msg[0])
			err_set(p->e, rc, "%s: %s: the element was refused", p->file,
			        evparse_path_of(p, p->depth, 0));
		return 0;
	}
	return 1;
}

/* After a value completed at the current position. */
static int advance(struct evparse *p)
{
	struct frame *f;
	int c;

	if (!p->depth || p->fr[p->depth - 1].is_obj)
		return 1;
	f = &p->fr[p->depth - 1];
	f->index++;
	c = collection_of(f->role);
	return c < 0 ? 1 : element_done(p, f, c, f->index - 1);
}

static int in_row(const struct evparse *p)
{
	return p->depth && p->fr[p->depth - 1].role >= R_EVENT;
}

static int scalar(struct evparse *p, enum vkind k, json_t *v)
{
	int role = value_role(p, k);
	if (role < 0) {
		json_decref(v);
		return 0;
	}
	if (!attach(p, v))
		return 0;
	return advance(p);
}

static int cb_null(void *ctx)
{
	struct evparse *p = ctx;
	if (in_row(p)) {
		return row_result(p, evrow_null(&p->row));
	}
	return scalar(p, V_NULL, json_null());
}

static int cb_boolean(void *ctx, int b)
{
	struct evparse *p = ctx;
	if (in_row(p))
		return row_shape_error(p);
	return scalar(p, V_BOOL, json_boolean(b));
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct evparse *p = ctx;
	int64_t iv;
	double d;
	int kind;

	if (in_row(p))
		return row_result(p, evrow_number(&p->row, s, n));
	if (value_role(p, V_NUM) < 0)
		return 0;
	kind = numtext_int(s, n, &iv);
	if (kind == NUMTEXT_BIG)
		return evparse_fail(p, evparse_path_of(p, p->depth, 1),
		            "integer does not fit a signed 64-bit integer");
	if (kind == NUMTEXT_REAL && numtext_real(s, n, &d))
		return evparse_fail(p, evparse_path_of(p, p->depth, 1), "number out of range");
	if (!attach(p, kind == NUMTEXT_INT ? json_integer(iv) : json_real(d)))
		return 0;
	return advance(p);
}

/* Text checks every string token passes (values, keys, row fields). */
static int text_ok(struct evparse *p, const unsigned char *s, size_t n)
{
	const char *what;

	if (++p->nstr == p->lone_str)
		what = "a lone surrogate \\u escape";
	else if (utf8_valid((const char *)s, n))
		return 1;
	else
		what = utf8_problem((const char *)s, n);
	if (in_row(p))
		return evparse_fail(p, evparse_path_of(p, p->depth, 0), "[%d]: invalid UTF-8 (%s)", p->row.k, what);
	return evparse_fail(p, evparse_path_of(p, p->depth, 1), "invalid UTF-8 (%s)", what);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct evparse *p = ctx;

	if (!text_ok(p, s, n))
		return 0;
	if (in_row(p)) {
		return row_result(p, evrow_string(&p->row, (const char *)s, n));
	}
	if (p->depth == 1 && key_is(p, "schema")) {
		if (n != strlen(SCHEMA) || memcmp(s, SCHEMA, n) != 0) {
			/* The value is quoted only when it names a version of this
			 * format: an arbitrary JSON file's values stay out of
			 * error messages (they reach MCP clients and logs). */
			static const char family[] = "srtctl-trace/";
			char q[80];
			if (n <= 32 && n > strlen(family) && !memcmp(s, family, strlen(family))) {
				evparse_quoted(q, sizeof q, (const char *)s, n);
				return evparse_fail(p, "schema", "expected \"%s\", got \"%s\"", SCHEMA, q);
			}
			return evparse_fail(p, "schema", "expected \"%s\", got another value "
			            "(this JSON file is not an evidence document)", SCHEMA);
		}
		p->have_schema = 1;
	}
	return scalar(p, V_STR, json_stringn_nocheck((const char *)s, n));
}

static int push(struct evparse *p, enum role role, int is_obj, json_t *node)
{
	struct frame *f;
	int64_t ord = -1;

	if (p->depth == MAX_DEPTH)
		return evparse_fail(p, evparse_path_of(p, p->depth, 1), "nesting deeper than %d levels",
		            MAX_DEPTH);
	if (p->depth) {
		const struct frame *parent = &p->fr[p->depth - 1];
		ord = role == R_SOURCE || role == R_REQUEST || role == R_SERIES ||
		      role == R_PROFILE ? parent->index : parent->ord;
	}
	if (p->depth >= 1 && (p->fr[p->depth - 1].role == R_SOURCES ||
	                      collection_of(p->fr[p->depth - 1].role) >= 0 ||
	                      role == R_SERIES || role == R_PROFILE)) {
		/* an element of a collection: its own bound */
		p->elem_values = 0;
		p->elem_max = role == R_PROFILE ? PROFILE_VALUES_MAX
		                                : ELEMENT_VALUES_MAX;
	}
	f = &p->fr[p->depth++];
	f->role = role;
	f->is_obj = is_obj;
	f->node = node;
	f->index = 0;
	f->ord = ord;
	f->seen = 0;
	if (is_obj)
		buf_reset(&p->keys[p->depth - 1]);
	return 1;
}

static int start_container(struct evparse *p, int is_obj)
{
	int role;
	json_t *node;

	if (in_row(p))
		return row_shape_error(p);
	role = value_role(p, is_obj ? V_OBJ : V_ARR);
	if (role < 0)
		return 0;
	if (role >= R_EVENT) { /* a row: decoded by evrow, no node */
		evrow_begin(&p->row, row_kind((enum role)role));
		return push(p, role, 0, NULL);
	}
	node = is_obj ? json_object() : json_array();
	if (!attach(p, node))
		return 0;
	if (!push(p, role, is_obj, role == R_EVENTS || role == R_SAMPLES ||
	          role == R_POINTS ? NULL : node))
		return 0;
	switch (role) {
	case R_PROFILE:
		if (note_profile(p, p->fr[p->depth - 1].ord))
			return evparse_nomem(p);
		evrow_bounds_reset(&p->names, -1);
		evrow_bounds_reset(&p->stacks, -1);
		break;
	case R_SERIES:
		if (note_series(p, p->fr[p->depth - 1].ord))
			return evparse_nomem(p);
		break;
	case R_EVENTS:
		evrow_bounds_reset(&p->names, evparse_array_size_of(p->fr[p->depth - 2].node, "names"));
		break;
	case R_SAMPLES:
		evrow_bounds_reset(&p->stacks, evparse_array_size_of(p->fr[p->depth - 2].node, "stacks"));
		break;
	case R_META:
		p->have_meta = 1;
		break;
	default:
		break;
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	return start_container(ctx, 1);
}

static int cb_start_array(void *ctx)
{
	return start_container(ctx, 0);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct evparse *p = ctx;
	struct buf *b = &p->keys[p->depth - 1];

	buf_reset(b);
	buf_append(b, k, n);
	if (b->failed)
		return evparse_nomem(p);
	return text_ok(p, k, n);
}

static int end_object(struct evparse *p)
{
	struct frame *f = &p->fr[p->depth - 1];
	int64_t c;

	switch (f->role) {
	case R_TOP:
		if (!p->have_schema)
			return evparse_fail(p, "schema", "missing (expected \"%s\")", SCHEMA);
		if (!p->have_meta)
			return evparse_fail(p, "meta", "missing");
		p->done = 1;
		break;
	case R_META:
		if (!evcheck_meta(p, f->node, "meta.duration"))
			return 0;
		break;
	case R_SOURCE:
	case R_SERIES:
		if (!evcheck_id(p, f))
			return 0;
		break;
	case R_REQUEST:
		if (!evcheck_request(p, f))
			return 0;
		break;
	case R_PROFILE:
		if (!evcheck_id(p, f) || !evcheck_names(p, f->node) ||
		    !evcheck_bounds(p, &p->names, evparse_array_size_of(f->node, "names"),
		                  "events", "name_index", "names"))
			return 0;
		c = (int64_t)p->st.profile_events[f->ord];
		if (json_object_set_new(f->node, "event_count", json_integer(c)))
			return evparse_nomem(p);
		break;
	case R_CPU:
		if (!evcheck_bounds(p, &p->stacks, evparse_array_size_of(f->node, "stacks"),
		                  "samples", "stack_index", "stacks") ||
		    !evcheck_names(p, f->node) || !evcheck_stack_entries(p, f->node))
			return 0;
		c = (int64_t)p->st.profile_samples[f->ord];
		if (json_object_set_new(f->node, "sample_count", json_integer(c)))
			return evparse_nomem(p);
		break;
	default:
		break;
	}
	p->depth--;
	return advance(p);
}

static int cb_end_map(void *ctx)
{
	return end_object(ctx);
}

static int cb_end_array(void *ctx)
{
	struct evparse *p = ctx;
	if (in_row(p))
		return row_end(p);
	p->depth--;
	return advance(p);
}

const yajl_callbacks evparse_callbacks = {
	cb_null, cb_boolean, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* ---- lifetime ------------------------------------------------------------ */

struct evparse *evparse_new(const char *file, const struct row_sink *sink,
                            struct err *e)
{
	struct evparse *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->file = file;
	p->sink = sink;
	p->e = e;
	p->req_ids = json_object();
	if (!p->req_ids) {
		free(p);
		return NULL;
	}
	for (int i = 0; i < MAX_DEPTH; i++)
		buf_init(&p->keys[i], 0);
	buf_init(&p->path, 0);
	evrow_init(&p->row);
	return p;
}

void evparse_lone_string(struct evparse *p, uint64_t index)
{
	p->lone_str = index;
}

int evparse_fail_here(struct evparse *p, const char *msg)
{
	if (in_row(p))
		evparse_fail(p, evparse_path_of(p, p->depth, 0), "[%d]: %s", p->row.k, msg);
	else
		evparse_fail(p, evparse_path_of(p, p->depth, 1), "%s", msg);
	return p->rc;
}

int evparse_error(const struct evparse *p)
{
	return p->rc;
}

int evparse_finish(struct evparse *p, json_t **catalog,
                   struct evstats *stats)
{
	if (!p->done || !p->root)
		return err_set(p->e, ERR_DATA, "%s: invalid JSON: unexpected end of document",
		               p->file);
	if (!json_object_get(p->root, "capabilities")) {
		json_t *caps = capabilities_compute(p->root, p->st.series_points,
		                                     p->st.nseries);
		if (caps && p->st.streamed) {
			/* the streamed collections are empty in the tree */
			static const char *const keys[] = {
				"requests", "request_breakdown", "server_activity",
				"iterations"
			};
			int on[] = {p->st.elements[EVIDENCE_REQUESTS] > 0,
			            p->any_breakdown, p->any_spans,
			            p->st.elements[EVIDENCE_ITERATIONS] > 0};
			for (int k = 0; k < 4; k++)
				if (on[k])
					json_object_set_new(caps, keys[k], json_true());
		}
		if (!caps || json_object_set_new(p->root, "capabilities", caps))
			return err_set(p->e, ERR_NOMEM, "%s: out of memory", p->file);
	}
	*catalog = p->root;
	p->root = NULL;
	if (stats) {
		*stats = p->st;
		memset(&p->st, 0, sizeof p->st);
	}
	return 0;
}

void evparse_free(struct evparse *p)
{
	if (!p)
		return;
	json_decref(p->root);
	json_decref(p->req_ids);
	for (int i = 0; i < MAX_DEPTH; i++)
		buf_free(&p->keys[i]);
	buf_free(&p->path);
	evrow_free(&p->row);
	evrow_bounds_free(&p->names);
	evrow_bounds_free(&p->stacks);
	evstats_free(&p->st);
	free(p);
}
