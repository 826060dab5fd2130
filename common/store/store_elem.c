/* store_elem: rows of the extension tables as elements (see store_elem.h). */
#include "store/store_elem.h"

#include <stdint.h>
#include <string.h>

const char *store_elem_columns(enum store_shape shape)
{
	switch (shape) {
	case STORE_SLIM:
		return "json_remove(json, '$.spans', '$.lifecycle'), span_count, "
		       "coalesce(json_array_length(json, '$.spans'), 0)";
	case STORE_TIMES:
		return "start, \"end\", first, ttft_ms";
	case STORE_GROUP:
		/* SQLite parses each row's json once for all of these (its
		 * parse cache) and copies each member's text as it was */
		return "CASE WHEN json_valid(json) AND json_type(json) = 'object'"
		       " THEN json_object('id', json->'$.id',"
		       " 'session', json->'$.session', 'agent', json->'$.agent',"
		       " 'workers', json->'$.workers', 'status', json->'$.status',"
		       " 'client_kind', json->'$.client_kind',"
		       " 'start', json->'$.start', 'end', json->'$.end',"
		       " 'ttft_ms', json->'$.ttft_ms',"
		       " 'input_tokens', json->'$.input_tokens',"
		       " 'output_tokens', json->'$.output_tokens') ELSE json END";
	default:
		return "json";
	}
}

json_t *store_elem_parse(const char *text, int n)
{
	json_error_t je;
	return json_loadb(text ? text : "", (size_t)(n > 0 ? n : 0),
	                  JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
}

/* "spans" as n nulls (STORE_SLIM); n is at most the row's own spans. */
static int slim_spans(json_t *el, sqlite3_int64 n)
{
	json_t *spans = json_array();

	for (sqlite3_int64 i = 0; spans && i < n; i++)
		if (json_array_append(spans, json_null()))
			break;
	if (!spans || (sqlite3_int64)json_array_size(spans) != n)
		return json_decref(spans), -1;
	return json_object_set_new(el, "spans", spans);
}

/* A STORE_TIMES element from the number columns from col on (a column
 * holds a member's exact number, NULL for anything else): a new
 * reference, NULL when out of memory. */
static json_t *times_element(sqlite3_stmt *st, int col)
{
	static const char *const key[] = {"start", "end", "first", "ttft_ms"};
	json_t *el = json_object();

	for (int i = 0; el && i < 4; i++) {
		int t = sqlite3_column_type(st, col + i);
		json_t *v;
		if (t == SQLITE_INTEGER)
			v = json_integer(sqlite3_column_int64(st, col + i));
		else if (t == SQLITE_FLOAT)
			v = json_real(sqlite3_column_double(st, col + i));
		else
			continue;
		if (json_object_set_new(el, key[i], v)) {
			json_decref(el);
			return NULL;
		}
	}
	return el;
}

int store_elem_read(sqlite3_stmt *st, int col, enum store_shape shape,
                    const char *path, const char *table, json_t **out,
                    struct err *e)
{
	json_t *el;

	if (shape == STORE_TIMES) {
		*out = times_element(st, col);
		return *out ? 0 : err_set(e, ERR_NOMEM, "out of memory");
	}
	el = store_elem_parse((const char *)sqlite3_column_text(st, col),
	                      sqlite3_column_bytes(st, col));
	*out = NULL;
	if (!el)
		return err_set(e, ERR_DATA, "%s: %s: a row's json is not valid "
		               "JSON; the report was altered: rebuild it", path,
		               table);
	/* a row's span_count is what its element holds, never more: it sizes
	 * the array below */
	if (shape == STORE_SLIM &&
	    (sqlite3_column_type(st, col + 1) != SQLITE_INTEGER ||
	     sqlite3_column_int64(st, col + 1) !=
	     sqlite3_column_int64(st, col + 2))) {
		json_decref(el);
		return err_set(e, ERR_DATA, "%s: dsight_requests: a row's "
		               "span_count (%s) is not the number of its spans "
		               "(%lld); the report was altered: rebuild it", path,
		               (const char *)sqlite3_column_text(st, col + 1) ?
		               (const char *)sqlite3_column_text(st, col + 1) :
		               "null", (long long)sqlite3_column_int64(st, col + 2));
	}
	if (shape == STORE_SLIM && json_is_object(el) &&
	    slim_spans(el, sqlite3_column_int64(st, col + 2))) {
		json_decref(el);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	*out = el;
	return 0;
}

int store_elem_cmp(sqlite3_value *a, sqlite3_value *b, int desc)
{
	int ta = sqlite3_value_type(a), tb = sqlite3_value_type(b), c;
	if (ta == SQLITE_NULL || tb == SQLITE_NULL)
		return (ta == SQLITE_NULL) - (tb == SQLITE_NULL);
	if (ta == SQLITE_TEXT && tb == SQLITE_TEXT) {
		int na = sqlite3_value_bytes(a), nb = sqlite3_value_bytes(b);
		c = memcmp(sqlite3_value_text(a), sqlite3_value_text(b),
		           (size_t)(na < nb ? na : nb));
		if (!c)
			c = na < nb ? -1 : na > nb;
		else
			c = c < 0 ? -1 : 1;
	} else if (ta == SQLITE_INTEGER && tb == SQLITE_INTEGER) {
		int64_t x = sqlite3_value_int64(a), y = sqlite3_value_int64(b);
		c = x < y ? -1 : x > y;
	} else {
		double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
		c = x < y ? -1 : x > y;
	}
	return desc ? -c : c;
}
