/* qdoc: help, describe and schema generated from the tables (see qdoc.h). */
#include "query/qdoc.h"

#include <string.h>

#include "base/jsonout.h"
#include "query/qorder.h"
#include "query/qparams.h"
#include "query/query.h"
#include "store/store_views.h"

#define HELP_WIDTH 79

/* Appends text word-wrapped at HELP_WIDTH; continuation lines start at
 * column indent; col is the current column. */
static void wrap(struct buf *out, const char *text, size_t col, size_t indent)
{
	const char *s = text;
	while (*s) {
		size_t w = strcspn(s, " ");
		if (col > indent && col + 1 + w > HELP_WIDTH) {
			buf_putc(out, '\n');
			for (col = 0; col < indent; col++)
				buf_putc(out, ' ');
		} else if (col > indent) {
			buf_putc(out, ' ');
			col++;
		}
		buf_append(out, s, w);
		col += w;
		s += w;
		s += strspn(s, " ");
	}
	buf_putc(out, '\n');
}

/* Names for --help and qdoc_describe_json; "strings" is one string or a
 * list, "keys" a comma-separated string or a list. */
static const char *const type_names[] = {"string", "number", "integer",
                                         "boolean", "strings", "keys"};

/* One line (wrapped) of the "Flags" section. */
static void put_flag(struct buf *out, const struct qparam *qp)
{
	char line[256];
	struct buf t;

	buf_init(&t, 0);
	buf_puts(&t, qp->help);
	if (qp->def && qp->def[0] == '"') /* a JSON string: unquoted */
		buf_printf(&t, " Default %.*s.", (int)strlen(qp->def) - 2,
		           qp->def + 1);
	else if (qp->def && qp->type != QP_BOOLEAN)
		buf_printf(&t, " Default %s.", qp->def);
	snprintf(line, sizeof line, "  %s%s%s", qp->flag,
	         qp->metavar ? " " : "", qp->metavar ? qp->metavar : "");
	if (strlen(line) >= 23) /* a long flag: the help below it */
		buf_printf(out, "%s\n%23s", line, "");
	else
		buf_printf(out, "%-23s", line);
	wrap(out, t.failed ? qp->help : t.data, 23, 23);
	buf_free(&t);
}

void qdoc_help_kind(struct buf *out, const char *kind,
                    const char *more_flags)
{
	for (size_t i = 0; i < qparam_count; i++)
		if (qparam_table[i].flag &&
		    qparam_used_by(&qparam_table[i], kind))
			put_flag(out, &qparam_table[i]);
	buf_puts(out, more_flags ? more_flags : "");
}

void qdoc_help_views(struct buf *out)
{
	char line[64];

	buf_puts(out, "Views (the same in sqlite3 on trace-data.sqlite):\n");
	for (size_t k = 0; k < store_view_doc_count; k++) {
		snprintf(line, sizeof line, "  %-18s", store_view_docs[k].name);
		buf_puts(out, line);
		wrap(out, store_view_docs[k].columns, 20, 20);
	}
}

void qdoc_help(struct buf *out, const char *more_flags)
{
	char line[256];

	buf_puts(out, "Kinds (default summary):\n");
	for (size_t k = 0; k < query_kind_count; k++) {
		const struct qkind *kd = &query_kind_table[k];
		struct buf t;
		size_t nf = 0;

		buf_init(&t, 0);
		buf_puts(&t, kd->help);
		for (size_t i = 0; i < qparam_count; i++) {
			const struct qparam *qp = &qparam_table[i];
			if (!qp->flag || (qp->flags & QP_COMMON) ||
			    !qparam_used_by(qp, kd->name))
				continue;
			buf_puts(&t, nf++ ? ", " : " (");
			buf_puts(&t, qp->flag);
		}
		buf_puts(&t, nf ? ")" : "");
		snprintf(line, sizeof line, "  %-14s", kd->name);
		buf_puts(out, line);
		wrap(out, t.failed ? kd->help : t.data, 16, 16);
		buf_free(&t);
	}
	buf_puts(out, "\nFlags:\n");
	for (size_t i = 0; i < qparam_count; i++)
		if (qparam_table[i].flag)
			put_flag(out, &qparam_table[i]);
	buf_puts(out, more_flags ? more_flags : "");
	buf_puts(out, "\nSort keys (--sort):\n");
	for (size_t k = 0; k < query_kind_count; k++) {
		const char *const *keys = qorder_keys(query_kind_table[k].name);
		struct buf t;
		if (!keys)
			continue;
		buf_init(&t, 0);
		for (const char *const *key = keys; *key; key++)
			buf_printf(&t, "%s%s", key == keys ? "" : ", ", *key);
		snprintf(line, sizeof line, "  %-14s", query_kind_table[k].name);
		buf_puts(out, line);
		wrap(out, t.failed ? "" : t.data, 16, 16);
		buf_free(&t);
	}
}

static void put_kinds_of(struct buf *out, const struct qparam *qp)
{
	size_t n = 0;
	buf_putc(out, '[');
	for (size_t k = 0; k < query_kind_count; k++)
		if (qparam_used_by(qp, query_kind_table[k].name)) {
			buf_puts(out, n++ ? "," : "");
			jsonout_cstr(out, query_kind_table[k].name);
		}
	buf_putc(out, ']');
}

void qdoc_describe_json(struct buf *out)
{
	buf_puts(out, "{\"kinds\":[");
	for (size_t k = 0; k < query_kind_count; k++) {
		const struct qkind *kd = &query_kind_table[k];
		size_t n = 0;
		buf_puts(out, k ? ",{\"name\":" : "{\"name\":");
		jsonout_cstr(out, kd->name);
		buf_puts(out, ",\"help\":");
		jsonout_cstr(out, kd->help);
		buf_puts(out, ",\"params\":[");
		for (size_t i = 0; i < qparam_count; i++)
			if (qparam_used_by(&qparam_table[i], kd->name)) {
				buf_puts(out, n++ ? "," : "");
				jsonout_cstr(out, qparam_table[i].name);
			}
		buf_puts(out, "]}");
	}
	buf_puts(out, "],\"params\":[");
	for (size_t i = 0; i < qparam_count; i++) {
		const struct qparam *qp = &qparam_table[i];
		buf_puts(out, i ? ",{\"name\":" : "{\"name\":");
		jsonout_cstr(out, qp->name);
		buf_puts(out, ",\"flag\":");
		if (qp->flag)
			jsonout_cstr(out, qp->flag);
		else
			buf_puts(out, "null");
		buf_puts(out, ",\"type\":");
		jsonout_cstr(out, type_names[qp->type]);
		buf_puts(out, ",\"default\":");
		buf_puts(out, qp->def ? qp->def : "null");
		buf_puts(out, ",\"kinds\":");
		put_kinds_of(out, qp);
		buf_puts(out, ",\"help\":");
		jsonout_cstr(out, qp->help);
		buf_putc(out, '}');
	}
	buf_puts(out, "]}");
}

static json_t *param_schema(const struct qparam *qp)
{
	json_t *s = json_object();
	int bad = !s;

	if (qp->type == QP_STRINGS || qp->type == QP_KEYS) {
		json_t *item = json_pack("{s:s}", "type", "string");
		if (qp->type == QP_STRINGS)
			bad |= json_object_set_new(item, "minLength",
			                           json_integer(1));
		if (!strcmp(qp->name, "sort"))
			bad |= json_object_set_new(item, "enum",
			                           qorder_key_enum());
		bad |= json_object_set_new(
			s, "anyOf",
			json_pack("[{s:s},{s:s,s:o,s:i}]", "type", "string",
			          "type", "array", "items", item, "minItems", 1));
	} else {
		bad |= json_object_set_new(s, "type",
		                           json_string(type_names[qp->type]));
	}
	if (qp->def)
		bad |= json_object_set_new(s, "default",
		                           json_loads(qp->def, JSON_DECODE_ANY,
		                                      NULL));
	if (!qp->flag) { /* the kind: its closed list */
		json_t *en = json_array();
		for (size_t k = 0; k < query_kind_count; k++)
			bad |= json_array_append_new(
				en, json_string(query_kind_table[k].name));
		bad |= json_object_set_new(s, "enum", en);
	}
	if (qp->choices) {
		json_t *en = json_array();
		for (const char *c = qp->choices; *c;) {
			size_t w = strcspn(c, " ");
			bad |= json_array_append_new(en, json_stringn(c, w));
			c += w;
			c += strspn(c, " ");
		}
		bad |= json_object_set_new(s, "enum", en);
	}
	if (qp->schema) {
		struct buf t;
		json_t *extra;
		buf_init(&t, 0);
		buf_printf(&t, "{%s}", qp->schema);
		extra = t.failed ? NULL : json_loads(t.data, 0, NULL);
		bad |= !extra || json_object_update(s, extra);
		json_decref(extra);
		buf_free(&t);
	}
	bad |= json_object_set_new(s, "description", json_string(qp->help));
	if (bad) {
		json_decref(s);
		return NULL;
	}
	return s;
}

json_t *qdoc_schema(void)
{
	json_t *props = json_object(), *schema;

	if (!props)
		return NULL;
	for (size_t i = 0; i < qparam_count; i++) {
		json_t *s = param_schema(&qparam_table[i]);
		if (!s || json_object_set_new(props, qparam_table[i].name, s)) {
			json_decref(props);
			return NULL;
		}
	}
	schema = json_pack("{s:s,s:o}", "type", "object", "properties", props);
	return schema;
}
