/*
 * cmd_mcp: `dsight mcp`, a Model Context Protocol server on stdio.
 *
 * JSON-RPC 2.0, one message per line.  It answers initialize (protocol
 * version negotiation), ping, tools/list and tools/call for one read-only
 * tool, query_trace, which runs the query engine on a dataset of the
 * server's filesystem.  Datasets stay open between calls (dscache) and a
 * rebuilt report is reopened by file identity.  Query and data errors come
 * back as tool errors (isError) carrying the engine's message; protocol
 * errors (bad JSON, unknown method or tool) as JSON-RPC errors.  The server
 * exits 0 at the end of its input.  It never builds or profiles anything.
 */
#include <stdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dscache.h"
#include "base/jsonout.h"
#include "base/utf8.h"
#include "query/qdoc.h"
#include "query/query.h"
#include "query/qsqlengine.h"
#include "query/query_sql.h"
#include "rpc.h"

#define MCP_LINE_MAX (4u << 20)   /* longest request line accepted */
#define MCP_DATASETS 8            /* datasets kept open */

static const char *const versions[] = {"2024-11-05", "2025-03-26", "2025-06-18"};
#define NEWEST "2025-06-18"

static const char tool_description[] =
	"Query an LLM-inference run report built by dsight (read-only). Kinds: "
	"summary (run metadata, counts, capabilities); requests/request/lifecycle "
	"(client requests); sessions, workers, families (discover exact filter "
	"values); metrics (series statistics in a window, optional points, carried "
	"settings); profiles, nsys (Nsight NVTX ranges overlapping a window), cpu "
	"(inclusive CPU hotspots); iterations, server_spans, sources. Times are "
	"seconds from the run origin; lists are paged (offset, limit <= 1000; "
	"limit 0 gives exact totals). worker, session, agent and name take a "
	"list (any of them); sort orders requests, nsys, server_spans, "
	"iterations and sessions (\"-key\" descending); request_id with phase "
	"joins nsys, metrics, iterations, cpu and timeline to a request's "
	"window and workers; fields keeps only the named keys of each item; "
	"an empty "
	"result carries notes saying why. The result is the same JSON as "
	"`dsight query`.";

struct mcp {
	struct dscache *cache;
	char version[16];   /* negotiated protocol version */
	struct buf out;
};

static void send_buf(struct mcp *m)
{
	buf_putc(&m->out, '\n');
	fwrite(m->out.data, 1, m->out.len, stdout);
	fflush(stdout);
	buf_reset(&m->out);
}

static void reply_error(struct mcp *m, const json_t *id, int code, const char *msg)
{
	rpc_error(&m->out, id, code, msg);
	send_buf(m);
}

/* Replies with result (stolen reference). */
static void reply_tree(struct mcp *m, const json_t *id, json_t *result)
{
	rpc_result_tree(&m->out, id, result);
	json_decref(result);
	send_buf(m);
}

static void on_initialize(struct mcp *m, const json_t *id, const json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	snprintf(m->version, sizeof m->version, "%s", NEWEST);
	for (size_t k = 0; want && k < sizeof versions / sizeof *versions; k++)
		if (!strcmp(want, versions[k]))
			snprintf(m->version, sizeof m->version, "%s", want);
	reply_tree(m, id, json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s},s:s}",
		"protocolVersion", m->version,
		"capabilities", "tools", "listChanged", 0,
		"serverInfo", "name", "dsight", "version", DSIGHT_VERSION,
		"instructions", "Use query_trace to read a dsight report. Start with "
		"kind=summary, then sessions/workers/families to find exact filter "
		"values."));
}

static void on_ping(struct mcp *m, const json_t *id, const json_t *params)
{
	(void)params;
	reply_tree(m, id, json_object());
}

/* The tool's input schema: the query parameters of the table, then
 * dataset, no other property.  NULL when out of memory; owned by the
 * caller. */
static json_t *input_schema(void)
{
	json_t *schema = qdoc_schema();
	json_t *props = json_object_get(schema, "properties");
	json_t *dataset = json_pack("{s:s,s:s}", "type", "string", "description",
		"A report directory, a trace-data.sqlite cache or an evidence "
		"document (.json or gzip) on the server's filesystem.");

	/* set_new takes the reference even when it fails */
	if (!schema || json_object_set_new(props, "dataset", dataset) ||
	    json_object_set_new(schema, "required", json_pack("[s]", "dataset")) ||
	    json_object_set_new(schema, "additionalProperties", json_false())) {
		json_decref(schema);
		return NULL;
	}
	return schema;
}

static void on_tools_list(struct mcp *m, const json_t *id, const json_t *params)
{
	json_t *schema = input_schema();
	(void)params;
	if (!schema) {
		reply_error(m, id, RPC_INTERNAL_ERROR, "Out of memory");
		return;
	}
	reply_tree(m, id, json_pack("{s:[{s:s,s:s,s:s,s:o,s:{s:s,s:b,s:b,s:b,s:b}}]}",
		"tools", "name", "query_trace", "title", "Query a dsight report",
		"description", tool_description, "inputSchema", schema,
		"annotations", "title", "Query a dsight report",
		"readOnlyHint", 1, "destructiveHint", 0, "idempotentHint", 1,
		"openWorldHint", 0));
}

static void tool_error(struct mcp *m, const json_t *id, const char *msg)
{
	rpc_result_open(&m->out, id);
	buf_puts(&m->out, "{\"content\":[{\"type\":\"text\",\"text\":");
	jsonout_cstr(&m->out, msg);
	buf_puts(&m->out, "}],\"isError\":true}");
	rpc_result_close(&m->out);
	send_buf(m);
}

/* The input schema declares additionalProperties: false: an argument it
 * does not list is refused (not silently ignored). */
static int check_arguments(const json_t *args, struct err *e)
{
	json_t *schema = input_schema();
	const json_t *props = json_object_get(schema, "properties");
	const char *key;
	json_t *v;
	int rc = 0;

	if (!schema)
		return err_set(e, ERR_NOMEM, "Out of memory");
	json_object_foreach((json_t *)args, key, v) {
		if (!json_object_get(props, key)) {
			rc = err_set(e, ERR_USAGE,
			             "Unknown argument '%.*s%s': query_trace takes only the "
			             "properties of its input schema (see tools/list)",
			             (int)utf8_cut(key, strlen(key), 64), key,
			             strlen(key) > 64 ? "..." : "");
			break;
		}
	}
	json_decref(schema);
	return rc;
}

/* Reads one line of input into line, at most max bytes: the limit applies
 * while reading, so a longer line is skipped, never held.  Returns 1 (a
 * line), 0 (end of input) or -1 (a line over max, consumed). */
static int read_line(FILE *f, struct buf *line, size_t max)
{
	int c, too_long = 0;
	buf_reset(line);
	while ((c = getc_unlocked(f)) != EOF) {
		if (c == '\n')
			return too_long ? -1 : 1;
		if (too_long)
			continue;
		if (line->len >= max) {
			too_long = 1;
			continue;
		}
		buf_putc(line, (char)c);
	}
	if (too_long)
		return -1;
	return line->len ? 1 : 0;
}

/* Runs the query, reopening once if the dataset changed under us. */
static int run_query(struct mcp *m, const char *path, const struct query_params *p,
                     struct buf *data, struct err *e)
{
	struct dataset *ds;
	struct qsqlengine *sql;
	int rc;

	for (int attempt = 0; attempt < 2; attempt++) {
		struct query_params q = *p;
		if ((rc = dscache_get(m->cache, path, &ds, &sql, e)) != 0)
			return rc;
		qsqlengine_use(sql, &q);
		buf_reset(data);
		rc = query_run(ds, &q, data, e);
		if (rc != ERR_REBUILT)
			return rc;
		dscache_forget(m->cache, path);
	}
	return rc;
}

static void on_tools_call(struct mcp *m, const json_t *id, const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const json_t *args = json_object_get(params, "arguments");
	struct query_params p;
	struct err e;
	struct buf data;

	if (!name || strcmp(name, "query_trace") != 0) {
		char msg[256];
		if (!name)
			name = "(none)";
		snprintf(msg, sizeof msg, "Unknown tool: %.*s",
		         (int)utf8_cut(name, strlen(name), 200), name);
		reply_error(m, id, RPC_INVALID_PARAMS, msg);
		return;
	}
	if (args && !json_is_object(args)) {
		tool_error(m, id, "arguments must be an object");
		return;
	}
	err_clear(&e);
	if (check_arguments(args, &e)) {
		tool_error(m, id, e.msg);
		return;
	}
	const json_t *dataset = json_object_get(args, "dataset");
	if (!json_is_string(dataset) || !*json_string_value(dataset)) {
		tool_error(m, id, "dataset is required: a report directory, SQLite cache or evidence document path");
		return;
	}
	err_clear(&e);
	query_params_init(&p);
	if (query_params_from_json(args, &p, &e) != 0) {
		tool_error(m, id, e.msg);
		query_params_free(&p);
		return;
	}
	buf_init(&data, 64u << 20);
	if (run_query(m, json_string_value(dataset), &p, &data, &e) != 0) {
		tool_error(m, id, e.msg);
	} else if (data.failed) {
		tool_error(m, id, "The result is larger than 64 MiB; narrow the window or lower the limit.");
	} else {
		rpc_result_open(&m->out, id);
		buf_puts(&m->out, "{\"content\":[{\"type\":\"text\",\"text\":");
		jsonout_str(&m->out, data.data, data.len);
		buf_puts(&m->out, "}]");
		if (strcmp(m->version, "2025-06-18") >= 0) {
			buf_puts(&m->out, ",\"structuredContent\":");
			buf_append(&m->out, data.data, data.len);
		}
		buf_puts(&m->out, ",\"isError\":false}");
		rpc_result_close(&m->out);
		send_buf(m);
	}
	buf_free(&data);
	query_params_free(&p);
}

static const struct method {
	const char *name;
	void (*handle)(struct mcp *m, const json_t *id, const json_t *params);
} methods[] = {
	{"initialize", on_initialize},
	{"ping", on_ping},
	{"tools/list", on_tools_list},
	{"tools/call", on_tools_call},
};

static void handle_line(struct mcp *m, const char *line, size_t len)
{
	struct rpc_request rq;
	struct err e;
	int code;

	err_clear(&e);
	code = rpc_parse_request(line, len, RPC_STRICT, &rq, &e);
	if (code) {
		/* a response of the client is not answered */
		if (!rq.is_response)
			reply_error(m, code == RPC_PARSE_ERROR ? NULL : rq.id, code, e.msg);
		goto done;
	}
	if (!rq.id) /* notification (notifications/initialized, cancelled, ...) */
		goto done;
	for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
		if (!strcmp(rq.method, methods[k].name)) {
			methods[k].handle(m, rq.id, rq.params);
			goto done;
		}
	}
	char text[300];
	snprintf(text, sizeof text, "Method not found: %.*s",
	         (int)utf8_cut(rq.method, strlen(rq.method), 200), rq.method);
	reply_error(m, rq.id, RPC_METHOD_NOT_FOUND, text);
done:
	rpc_request_free(&rq);
}

/* Prints the usage text (the parameter names come from the table). */
static void print_usage(FILE *f)
{
	fputs("usage: dsight mcp [--no-sql-engine]\n"
	      "\n"
	      "Serves the Model Context Protocol on stdin/stdout (JSON-RPC 2.0, one\n"
	      "message per line) with one read-only tool, query_trace, whose arguments\n"
	      "are `dataset` (a report directory, SQLite cache or evidence document)\n"
	      "and the query parameters by their RPC names:\n ", f);
	for (size_t k = 0, col = 1; k < qparam_count; k++) {
		const char *n = qparam_table[k].name;
		if (col + strlen(n) + 2 > 76) {
			fputs("\n ", f);
			col = 1;
		}
		col += (size_t)fprintf(f, " %s%s", n, k + 1 < qparam_count ? "," : ".");
	}
	fputs("\nSee dsight query --help for their meaning.  Datasets stay open between\n"
	      "calls; a rebuilt report is reopened.  Exits 0 at end of input.\n"
	      "\n"
	      "The first sql call on a report starts loading its nvtx and metric_points\n"
	      "into memory on a thread (as a warm session does; answers come from the\n"
	      "file's views until it ends): whole-run aggregates and joins then run\n"
	      "several times faster, for up to a few hundred MiB per large report.\n"
	      "  --no-sql-engine   never load them (statements run on the file's views)\n"
	      "\n"
	      "Client configuration example (e.g. .mcp.json):\n"
	      "  {\"mcpServers\": {\"dsight\": {\"command\": \"dsight\", \"args\": [\"mcp\"]}}}\n", f);
}

int cmd_mcp_main(int argc, char **argv)
{
	struct mcp m;
	struct buf line;
	int got;

	int sql_engine = 1;

	if (argc == 2 && !strcmp(argv[1], "--no-sql-engine")) {
		sql_engine = 0;
	} else if (argc > 1) {
		int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		if (!help) {
			/* the first argument it cannot take */
			const char *bad = strcmp(argv[1], "--no-sql-engine")
			                  ? argv[1] : argv[2];
			fprintf(stderr, "dsight mcp: %s %s\n\n", bad[0] == '-'
			        ? "unknown option" : "unexpected argument", bad);
		}
		print_usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	/* what sql statements may take of SQLite's heap (query_sql.h) */
	sqlite3_hard_heap_limit64(QUERY_SQL_HEAP_MAX);
	memset(&m, 0, sizeof m);
	snprintf(m.version, sizeof m.version, "%s", NEWEST);
	buf_init(&m.out, 0);
	if (!(m.cache = dscache_new(MCP_DATASETS, sql_engine))) {
		fputs("dsight mcp: out of memory\n", stderr);
		return 1;
	}
	buf_init(&line, MCP_LINE_MAX + 1);
	while ((got = read_line(stdin, &line, MCP_LINE_MAX + 1)) != 0) {
		size_t len = line.len;
		if (got < 0 || line.failed || len > MCP_LINE_MAX + 1) {
			reply_error(&m, NULL, RPC_INVALID_REQUEST, "Invalid Request: message larger than 4 MiB");
			continue;
		}
		while (len && line.data[len - 1] == '\r')
			len--;
		if (len == 0)
			continue;
		if (len > MCP_LINE_MAX) {
			reply_error(&m, NULL, RPC_INVALID_REQUEST, "Invalid Request: message larger than 4 MiB");
			continue;
		}
		handle_line(&m, line.data, len);
	}
	buf_free(&line);
	buf_free(&m.out);
	dscache_free(m.cache);
	return 0;
}
