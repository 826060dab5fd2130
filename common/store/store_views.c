/* store_views: the views of trace-data.sqlite (see store_views.h). */
#include "store/store_views.h"
#include "store/store_ext.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "store/store_depth.h"
#include "store/store_typed.h"

static int db_fail(sqlite3 *db, struct err *e, const char *what)
{
	return err_set(e, ERR_DATA, "cannot write the %s view: %s", what,
	               sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql, const char *what,
                struct err *e)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, e, what);
	return 0;
}

/* Binds a catalog value the way the views show it: strings as TEXT,
 * integers as INTEGER, reals as REAL, booleans as 0/1, anything else
 * (null, absent, arrays, objects) as NULL. */
static void bind_json(sqlite3_stmt *st, int k, const json_t *v)
{
	if (json_is_string(v))
		sqlite3_bind_text(st, k, json_string_value(v),
		                  (int)json_string_length(v), SQLITE_TRANSIENT);
	else if (json_is_integer(v))
		sqlite3_bind_int64(st, k, (sqlite3_int64)json_integer_value(v));
	else if (json_is_real(v))
		sqlite3_bind_double(st, k, json_real_value(v));
	else if (json_is_boolean(v))
		sqlite3_bind_int(st, k, json_is_true(v));
	else
		sqlite3_bind_null(st, k);
}

static int step_reset(sqlite3 *db, sqlite3_stmt *st, const char *what,
                      struct err *e)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : db_fail(db, e, what);
}

static const char helper_sql[] =
	"CREATE TABLE dsight_view_profiles (profile INTEGER PRIMARY KEY,"
	" worker, rank);"
	/* a name carries its profile's worker and rank: nvtx joins one
	 * dictionary, once per name, not the profiles once per range */
	"CREATE TABLE dsight_view_names (profile INTEGER, id INTEGER, name,"
	" worker, rank, PRIMARY KEY (profile, id)) WITHOUT ROWID;"
	"CREATE TABLE dsight_view_frames (profile INTEGER, stack INTEGER,"
	" depth INTEGER, symbol, PRIMARY KEY (profile, stack, depth))"
	" WITHOUT ROWID;"
	"CREATE TABLE dsight_view_series (series INTEGER PRIMARY KEY, name,"
	" worker, rank);"
	"CREATE TABLE " STORE_VIEWS_THREADS " (profile INTEGER, tid TEXT, name,"
	" PRIMARY KEY (profile, tid)) WITHOUT ROWID;";

/* dsight_view_profiles, _names, _frames and _threads from
 * catalog.profiles (the row key is the array index, as in the events and
 * samples tables; a thread is named when its name is a string, the first
 * entry of a global tid winning). */
static int fill_profiles(sqlite3 *db, const json_t *profiles, struct err *e)
{
	sqlite3_stmt *st[4] = {NULL, NULL, NULL, NULL};
	static const char *const sql[4] = {
		"INSERT INTO dsight_view_profiles VALUES (?1,?2,?3)",
		"INSERT INTO dsight_view_names VALUES (?1,?2,?3,?4,?5)",
		"INSERT INTO dsight_view_frames VALUES (?1,?2,?3,?4)",
		"INSERT OR IGNORE INTO " STORE_VIEWS_THREADS " VALUES (?1,?2,?3)",
	};
	size_t p, k, d;
	const json_t *pr, *v, *stack, *sym;
	int rc = 0;

	for (int i = 0; i < 4; i++)
		if (sqlite3_prepare_v2(db, sql[i], -1, &st[i], NULL) != SQLITE_OK) {
			rc = db_fail(db, e, "nvtx");
			goto done;
		}
	json_array_foreach(profiles, p, pr) {
		const json_t *cpu = json_object_get(pr, "cpu");
		const json_t *symbols = json_object_get(cpu, "names");
		sqlite3_bind_int64(st[0], 1, (sqlite3_int64)p);
		bind_json(st[0], 2, json_object_get(pr, "worker"));
		bind_json(st[0], 3, json_object_get(pr, "rank"));
		if ((rc = step_reset(db, st[0], "nvtx", e)))
			goto done;
		json_array_foreach(json_object_get(pr, "names"), k, v) {
			sqlite3_bind_int64(st[1], 1, (sqlite3_int64)p);
			sqlite3_bind_int64(st[1], 2, (sqlite3_int64)k);
			bind_json(st[1], 3, v);
			bind_json(st[1], 4, json_object_get(pr, "worker"));
			bind_json(st[1], 5, json_object_get(pr, "rank"));
			if ((rc = step_reset(db, st[1], "nvtx", e)))
				goto done;
		}
		json_array_foreach(json_object_get(pr, "threads"), k, v) {
			const json_t *gt = json_object_get(v, "global_tid");
			const json_t *name = json_object_get(v, "name");
			if (!json_is_string(gt) || !json_is_string(name))
				continue;
			sqlite3_bind_int64(st[3], 1, (sqlite3_int64)p);
			bind_json(st[3], 2, gt);
			bind_json(st[3], 3, name);
			if ((rc = step_reset(db, st[3], "nvtx", e)))
				goto done;
		}
		json_array_foreach(json_object_get(cpu, "stacks"), k, stack) {
			json_array_foreach(stack, d, v) {
				sym = json_is_integer(v) && json_integer_value(v) >= 0
				              ? json_array_get(symbols,
				                               (size_t)json_integer_value(v))
				              : NULL;
				sqlite3_bind_int64(st[2], 1, (sqlite3_int64)p);
				sqlite3_bind_int64(st[2], 2, (sqlite3_int64)k);
				sqlite3_bind_int64(st[2], 3, (sqlite3_int64)d);
				bind_json(st[2], 4, sym);
				if ((rc = step_reset(db, st[2], "cpu_frames", e)))
					goto done;
			}
		}
	}
done:
	for (int i = 0; i < 4; i++)
		sqlite3_finalize(st[i]);
	return rc;
}

static int fill_series(sqlite3 *db, const json_t *series, struct err *e)
{
	sqlite3_stmt *st = NULL;
	size_t k;
	const json_t *s;
	int rc = 0;

	if (sqlite3_prepare_v2(db,
	                       "INSERT INTO dsight_view_series VALUES (?1,?2,?3,?4)",
	                       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, e, "metric_points");
	json_array_foreach(series, k, s) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)k);
		bind_json(st, 2, json_object_get(s, "name"));
		bind_json(st, 3, json_object_get(s, "worker"));
		bind_json(st, 4, json_object_get(s, "rank"));
		if ((rc = step_reset(db, st, "metric_points", e)))
			break;
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * The sources of the catalog collections, one place: each is a subquery
 * with one column `j` (the element's JSON) in stored order.  (requests
 * and request_workers read the typed copies of store_typed.)
 */
#define SRC_REQUESTS \
	"(SELECT json AS j FROM " STORE_EXT_REQUESTS " ORDER BY ordinal)"
#define SRC_SERVER_SPANS \
	"(SELECT json AS j FROM " STORE_EXT_SERVER_SPANS " ORDER BY ordinal)"

/* A series label as text, number or NULL (never an array or object). */
#define SCALAR_LABEL(k) \
	"CASE WHEN json_type(value, '$.labels.\"" k "\"') IN ('text'," \
	" 'integer', 'real') THEN json_extract(value, '$.labels.\"" k "\"')" \
	" END"

/* A sample's worker (NULL where its profile has none). */
#define SAMPLE_WORKER \
	"(SELECT p.worker FROM dsight_view_profiles AS p" \
	" WHERE p.profile = s.profile)"

/* The fixed views. */
static const char fixed_sql[] =
	"CREATE VIEW nvtx AS SELECT e.profile AS profile, n.worker AS worker,"
	" n.rank AS rank, e.tid AS tid, e.start AS start, e.\"end\" AS \"end\","
	" e.\"end\" - e.start AS duration, n.name AS name,"
	" e.source_row AS source_row, e.ordinal AS ordinal,"
	/* subqueries, not joins: they cost nothing unless the column is read */
	" coalesce((SELECT d.depth FROM " STORE_DEPTH_TABLE " AS d"
	" WHERE d.profile = e.profile AND d.ordinal = e.ordinal), 0) AS depth,"
	" (SELECT t.name FROM " STORE_VIEWS_THREADS " AS t"
	" WHERE t.profile = e.profile AND t.tid = e.tid) AS thread_name"
	/* an inner join to the names (every id an event uses has a row: the
	 * build refuses a name_index outside the names) lets the planner loop
	 * over the names in name order, so GROUP BY name streams through
	 * dsight_events_name; the names carry the worker, so a join on the
	 * worker loops over its names, and no range joins a second table */
	" FROM events AS e"
	" JOIN dsight_view_names AS n ON n.profile = e.profile"
	" AND n.id = e.name;"

	/* the worker through a subquery: nothing unless it is read */
	"CREATE VIEW cpu_samples AS SELECT s.profile AS profile,"
	" " SAMPLE_WORKER " AS worker, s.time AS time, s.tid AS tid,"
	" s.stack AS stack, s.source_row AS source_row"
	" FROM " STORE_TYPED_SAMPLES " AS s;"

	"CREATE VIEW cpu_frames AS SELECT profile, stack, depth, symbol"
	" FROM dsight_view_frames;"

	/* the leaf frame's symbol as the build read it from the frames */
	"CREATE VIEW cpu_self AS SELECT s.profile AS profile,"
	" " SAMPLE_WORKER " AS worker, s.time AS time, s.tid AS tid,"
	" s.symbol AS symbol FROM " STORE_TYPED_SAMPLES " AS s;"

	/* value_text: an integer's text is its decimal digits; a real's
	 * exact text, source_id and source_row are read from the v1 payload,
	 * only when asked for */
	"CREATE VIEW metric_points AS SELECT pt.series AS series,"
	" s.name AS name, s.worker AS worker, s.rank AS rank, pt.time AS time,"
	" pt.value AS value,"
	" CASE typeof(pt.value) WHEN 'integer' THEN CAST(pt.value AS TEXT)"
	" WHEN 'real' THEN (SELECT v.payload -> '$[1]' FROM points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) END"
	" AS value_text,"
	" (SELECT json_extract(v.payload, '$[2]') FROM points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) AS source_id,"
	" (SELECT json_extract(v.payload, '$[3]') FROM points AS v"
	" WHERE v.series = pt.series AND v.ordinal = pt.ordinal) AS source_row"
	" FROM " STORE_TYPED_POINTS " AS pt"
	/* every series of a point has a row (both come from the catalog's
	 * metrics): an inner join lets WHERE name = ... seek the series */
	" JOIN dsight_view_series AS s ON s.series = pt.series;"

	"CREATE VIEW series AS SELECT json_extract(value, '$.id') AS id,"
	" json_extract(value, '$.name') AS name,"
	" json_extract(value, '$.worker') AS worker,"
	" json_extract(value, '$.rank') AS rank,"
	" json_extract(value, '$.unit') AS unit,"
	" json_extract(value, '$.temporal') AS temporal,"
	" json_extract(value, '$.component') AS component,"
	" json_extract(value, '$.group') AS family_group"
	" FROM catalog, json_each(catalog.json, '$.metrics');"

	"CREATE VIEW metric_series AS SELECT json_extract(value, '$.id') AS id,"
	" json_extract(value, '$.name') AS name,"
	" json_extract(value, '$.worker') AS worker,"
	" json_extract(value, '$.rank') AS rank,"
	" " SCALAR_LABEL("gpu") " AS gpu,"
	" coalesce(" SCALAR_LABEL("host") ", " SCALAR_LABEL("hostname") ","
	" (SELECT json_extract(w.value, '$.host')"
	" FROM json_each(catalog.json, '$.workers') AS w"
	" WHERE json_extract(w.value, '$.id') = json_extract(m.value, '$.worker')"
	" AND json_type(w.value, '$.host') = 'text' LIMIT 1)) AS host,"
	" json_extract(value, '$.unit') AS unit,"
	" json_extract(value, '$.temporal') AS temporal,"
	" json_extract(value, '$.group') AS family_group"
	" FROM catalog, json_each(catalog.json, '$.metrics') AS m;"

	"CREATE VIEW requests AS SELECT id, session, agent, conversation,"
	" start, \"end\", first, ttft_ms, \"end\" - start AS duration,"
	" input_tokens, output_tokens, cached_tokens, status, client_kind"
	" FROM " STORE_TYPED_REQUESTS ";"

	"CREATE VIEW request_workers AS SELECT request, worker"
	" FROM " STORE_TYPED_REQUEST_WORKERS ";"

	"CREATE VIEW lifecycle_stages AS SELECT json_extract(r.j, '$.id')"
	" AS request, json_extract(s.value, '$.name') AS name,"
	" CASE json_type(s.value, '$.worker') WHEN 'text'"
	" THEN json_extract(s.value, '$.worker') END AS worker,"
	" json_extract(s.value, '$.start') AS start,"
	" json_extract(s.value, '$.end') AS \"end\""
	" FROM " SRC_REQUESTS " AS r, json_each(r.j, '$.lifecycle') AS part,"
	" json_each(part.value) AS s"
	" WHERE part.key IN ('stages', 'activities')"
	" AND (json_type(s.value, '$.start') IN ('integer', 'real')"
	" OR json_type(s.value, '$.end') IN ('integer', 'real'));"

	"CREATE VIEW server_spans AS"
	" SELECT json_extract(s.value, '$.id') AS id,"
	" json_extract(r.j, '$.id') AS request,"
	" json_extract(s.value, '$.name') AS name,"
	" json_extract(s.value, '$.worker') AS worker,"
	" json_extract(s.value, '$.role') AS role,"
	" json_extract(s.value, '$.start') AS start,"
	" json_extract(s.value, '$.end') AS \"end\""
	" FROM " SRC_REQUESTS " AS r, json_each(r.j, '$.spans') AS s"
	" UNION ALL SELECT json_extract(j, '$.id'), NULL,"
	" json_extract(j, '$.name'), json_extract(j, '$.worker'),"
	" json_extract(j, '$.role'), json_extract(j, '$.start'),"
	" json_extract(j, '$.end') FROM " SRC_SERVER_SPANS ";";

int store_views_current(sqlite3 *db, const char *name)
{
	char head[64];
	const char *def, *end;
	sqlite3_stmt *st = NULL;
	int same = 0;

	snprintf(head, sizeof head, "CREATE VIEW %s AS ", name);
	for (def = fixed_sql; (def = strstr(def, head)); def++)
		if (def == fixed_sql || def[-1] == ';')
			break;
	if (!def || !(end = strchr(def, ';')))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT sql FROM main.sqlite_master"
	                       " WHERE type = 'view' AND name = ?1", -1, &st,
	                       NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		same = n == (size_t)(end - def) &&
		       !memcmp(sqlite3_column_text(st, 0), def, n);
	}
	sqlite3_finalize(st);
	return same;
}

/* The columns of fixed_sql's views and what the catalog views hold (a
 * test compares them with a built cache). */
#define CATALOG_COLUMNS(what) \
	"one column per key that the catalog's " what " carry with a string, " \
	"number or boolean value"
const struct store_view_doc store_view_docs[] = {
	{"nvtx", "profile, worker, rank, tid, start, end, duration, name, "
	         "source_row, ordinal, depth, thread_name"},
	{"cpu_samples", "profile, worker, time, tid, stack, source_row"},
	{"cpu_frames", "profile, stack, depth, symbol"},
	{"cpu_self", "profile, worker, time, tid, symbol"},
	{"metric_points", "series, name, worker, rank, time, value, value_text, "
	                  "source_id, source_row"},
	{"series", "id, name, worker, rank, unit, temporal, component, "
	           "family_group"},
	{"metric_series", "id, name, worker, rank, gpu, host, unit, temporal, "
	                  "family_group"},
	{"requests", "id, session, agent, conversation, start, end, first, "
	             "ttft_ms, duration, input_tokens, output_tokens, "
	             "cached_tokens, status, client_kind"},
	{"request_workers", "request, worker"},
	{"lifecycle_stages", "request, name, worker, start, end"},
	{"server_spans", "id, request, name, worker, role, start, end"},
	{"profiles", CATALOG_COLUMNS("profiles") " (id, worker, rank, host, "
	             "file, event_count, ...)"},
	{"workers", CATALOG_COLUMNS("workers") " (id, role, index, host, ...)"},
	{"sessions", CATALOG_COLUMNS("sessions") " (id, start, end, ...)"},
	{"iterations", CATALOG_COLUMNS("iterations") " (worker, rank, kind, "
	               "start, end, ...)"},
	{"sources", CATALOG_COLUMNS("sources") " (id, path, kind, bytes, "
	            "sha256, ...)"},
	/* written by store_gpu */
	{"gpu", "profile, worker, ordinal, kind, start, end, duration, device, "
	        "stream, name, short_name, correlation, bytes, grid_x, grid_y, "
	        "grid_z, block_x, block_y, block_z, registers, static_smem, "
	        "dynamic_smem, graph_node, launch_tid, launch_start, "
	        "launch_name, queue_delay, nvtx_ordinal, nvtx_name, source_row"},
	{"gpu_launches", "profile, worker, tid, start, name, correlation, "
	                 "nvtx_ordinal, gpu_rows, kernels, gpu_start, gpu_end, "
	                 "queue_delay"},
};
const size_t store_view_doc_count =
	sizeof store_view_docs / sizeof store_view_docs[0];

/* A key usable as a column: printable, and without the characters that
 * would need escaping inside a JSON path label. */
static int plain_key(const char *k)
{
	if (!*k)
		return 0;
	for (const unsigned char *c = (const unsigned char *)k; *c; c++)
		if (*c < 0x20 || *c == '"' || *c == '\'' || *c == '\\')
			return 0;
	return 1;
}

/* object_view over a collection that dsight's extension table `table`
 * holds (store_ext.h): the same columns, found with SQL over the
 * elements' JSON in first-seen order (element, then key position). */
static int table_view(sqlite3 *db, const char *name, const char *table,
                      struct err *e, json_t *keys, json_t *seen)
{
	struct buf sql;
	sqlite3_stmt *st = NULL;
	size_t i;
	const json_t *v;
	int rc, n = 0;

	buf_init(&sql, 0);
	buf_printf(&sql, "SELECT key FROM %s, json_each(%s.json) WHERE"
	           " json_each.type IN ('text','integer','real','true','false')"
	           " GROUP BY key ORDER BY min(%s.ordinal * 4294967296 + json_each.id)",
	           table, table, table);
	rc = sql.failed ? ERR_NOMEM : SQLITE_OK;
	if (!rc && sqlite3_prepare_v2(db, sql.data, -1, &st, NULL) != SQLITE_OK)
		rc = err_set(e, ERR_DATA, "cannot write the %s view: %s", name,
		             sqlite3_errmsg(db));
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		if (k && plain_key(k) && json_array_append_new(keys, json_string(k)))
			rc = ERR_NOMEM;
	}
	sqlite3_finalize(st);
	buf_reset(&sql);
	buf_printf(&sql, "CREATE VIEW %s AS SELECT ", name);
	json_array_foreach(keys, i, v) {
		const char *kk = json_string_value(v);
		buf_printf(&sql,
		           "%sCASE WHEN json_type(json, '$.\"%s\"') IN ('object',"
		           " 'array') THEN NULL ELSE json_extract(json, '$.\"%s\"')"
		           " END AS \"%s\"",
		           n++ ? ", " : "", kk, kk, kk);
	}
	if (!json_array_size(keys))
		buf_puts(&sql, "NULL AS id");
	buf_printf(&sql, " FROM %s ORDER BY ordinal;", table);
	if (!rc && sql.failed)
		rc = ERR_NOMEM;
	if (!rc)
		rc = exec(db, sql.data, name, e);
	else if (rc == ERR_NOMEM)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	buf_free(&sql);
	json_decref(keys);
	json_decref(seen);
	return rc;
}

/* The view `name` over the objects of catalog member `member`: one column
 * per key that any object carries with a string, number or boolean value,
 * in the order first seen (NULL where an object lacks it or holds an array
 * or object there). */
static int object_view(sqlite3 *db, const json_t *catalog, const char *name,
                       const char *member, const char *table, struct err *e)
{
	json_t *keys = json_array();
	json_t *seen = json_object();
	const json_t *obj, *v;
	const char *key;
	size_t k, i;
	struct buf sql;
	int rc;

	buf_init(&sql, 0);
	if (!keys || !seen)
		goto nomem;
	if (table)
		return table_view(db, name, table, e, keys, seen);
	json_array_foreach(json_object_get(catalog, member), k, obj) {
		json_object_foreach((json_t *)obj, key, v) {
			if (!(json_is_string(v) || json_is_number(v) ||
			      json_is_boolean(v)) ||
			    !plain_key(key) || json_object_get(seen, key))
				continue;
			if (json_object_set_new(seen, key, json_true()) ||
			    json_array_append_new(keys, json_string(key)))
				goto nomem;
		}
	}
	buf_printf(&sql, "CREATE VIEW %s AS SELECT ", name);
	json_array_foreach(keys, i, v) {
		const char *kk = json_string_value(v);
		buf_printf(&sql,
		           "%sCASE WHEN json_type(value, '$.\"%s\"') IN ('object',"
		           " 'array') THEN NULL ELSE json_extract(value, '$.\"%s\"')"
		           " END AS \"%s\"",
		           i ? ", " : "", kk, kk, kk);
	}
	if (!json_array_size(keys))
		buf_puts(&sql, "NULL AS id");
	buf_printf(&sql, " FROM catalog, json_each(catalog.json, '$.%s');",
	           member);
	if (sql.failed)
		goto nomem;
	rc = exec(db, sql.data, name, e);
	buf_free(&sql);
	json_decref(keys);
	json_decref(seen);
	return rc;
nomem:
	buf_free(&sql);
	json_decref(keys);
	json_decref(seen);
	return err_set(e, ERR_NOMEM, "out of memory");
}

int store_views_write(sqlite3 *db, const json_t *catalog, struct err *e)
{
	static const char *const objects[] = {"profiles", "workers", "sessions",
	                                      "iterations", "sources"};

	if (exec(db, helper_sql, "helper", e) ||
	    fill_profiles(db, json_object_get(catalog, "profiles"), e) ||
	    fill_series(db, json_object_get(catalog, "metrics"), e) ||
	    store_typed_views(db, e) ||
	    exec(db, fixed_sql, "fixed", e))
		return e->code;
	/* sessions and iterations live in dsight's extension tables */
	static const char *const tables[] = {NULL, NULL, STORE_EXT_SESSIONS,
	                                     STORE_EXT_ITERATIONS, NULL};
	for (size_t k = 0; k < sizeof objects / sizeof objects[0]; k++)
		if (object_view(db, catalog, objects[k], objects[k], tables[k], e))
			return e->code;
	return 0;
}
