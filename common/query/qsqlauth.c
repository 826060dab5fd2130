/* qsqlauth: what an sql statement may do (see qsqlauth.h). */
#include "query/qsqlauth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"

/* Functions a statement may call: SQLite's core scalar, aggregate, window,
 * math, date/time and JSON functions (sorted for bsearch).  Missing on
 * purpose: load_extension, fts3_tokenizer, sqlite_compileoption_*,
 * sqlite_offset, json_patch (its merge is quadratic in one call) and
 * anything an extension could add. */
static const char *const allowed_functions[] = {
	"->", "->>", "abs", "acos", "acosh", "asin", "asinh", "atan", "atan2",
	"atanh", "avg", "ceil", "ceiling", "changes", "char", "coalesce",
	"concat", "concat_ws", "cos", "cosh", "count", "cume_dist",
	"current_date", "current_time", "current_timestamp", "date",
	"datetime", "degrees", "dense_rank", "exp", "first_value", "floor",
	"format", "glob", "group_concat", "hex", "ifnull", "iif", "instr",
	"json", "json_array", "json_array_length", "json_each", "json_extract",
	"json_group_array", "json_group_object", "json_insert", "json_object",
	"json_quote", "json_remove", "json_replace", "json_set",
	"json_tree", "json_type", "json_valid", "julianday", "lag",
	"last_insert_rowid", "last_value", "lead", "length", "like",
	"likelihood", "likely", "ln", "log", "log10", "log2", "lower", "ltrim",
	"max", "min", "mod", "nth_value", "ntile", "nullif", "octet_length",
	"percent_rank", "pi", "pow", "power", "printf", "quote", "radians",
	"random", "randomblob", "rank", "replace", "round", "row_number",
	"rtrim", "sign", "sin", "sinh", "sqlite_source_id", "sqlite_version",
	"sqrt", "strftime", "string_agg", "substr", "substring", "sum", "tan",
	"tanh", "time", "timediff", "total", "total_changes", "trim", "trunc",
	"typeof", "unhex", "unicode", "unixepoch", "unlikely", "upper",
	"zeroblob",
};

/* Pragmas that only describe the schema; they may take an argument (the
 * table or index to describe). */
static const char *const allowed_pragmas_arg[] = {
	"collation_list", "database_list", "foreign_key_list", "function_list",
	"index_info", "index_list", "index_xinfo", "module_list",
	"pragma_list", "table_info", "table_list", "table_xinfo",
};
/* Pragmas that are settings: allowed only to read them (no argument). */
static const char *const allowed_pragmas_read[] = {
	"application_id", "encoding", "freelist_count", "page_count",
	"page_size", "schema_version", "user_version",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int in_list(const char *const *list, size_t n, const char *s)
{
	for (size_t k = 0; k < n; k++)
		if (!strcasecmp(list[k], s))
			return 1;
	return 0;
}

static int cmp_name(const void *key, const void *elem)
{
	return strcasecmp(key, *(const char *const *)elem);
}

static void set_denied(struct qsqlauth *c, const char *fmt, const char *a)
{
	if (!c->denied[0])
		snprintf(c->denied, sizeof c->denied, fmt, a ? a : "");
}

/* The statement word of an action the authorizer refuses. */
static const char *action_name(int action)
{
	switch (action) {
	case SQLITE_CREATE_INDEX: return "CREATE INDEX";
	case SQLITE_CREATE_TABLE: return "CREATE TABLE";
	case SQLITE_CREATE_TEMP_INDEX: return "CREATE TEMP INDEX";
	case SQLITE_CREATE_TEMP_TABLE: return "CREATE TEMP TABLE";
	case SQLITE_CREATE_TEMP_TRIGGER: return "CREATE TEMP TRIGGER";
	case SQLITE_CREATE_TEMP_VIEW: return "CREATE TEMP VIEW";
	case SQLITE_CREATE_TRIGGER: return "CREATE TRIGGER";
	case SQLITE_CREATE_VIEW: return "CREATE VIEW";
	case SQLITE_DELETE: return "DELETE";
	case SQLITE_DROP_INDEX: case SQLITE_DROP_TEMP_INDEX: return "DROP INDEX";
	case SQLITE_DROP_TABLE: case SQLITE_DROP_TEMP_TABLE: return "DROP TABLE";
	case SQLITE_DROP_TRIGGER: case SQLITE_DROP_TEMP_TRIGGER:
		return "DROP TRIGGER";
	case SQLITE_DROP_VIEW: case SQLITE_DROP_TEMP_VIEW: return "DROP VIEW";
	case SQLITE_INSERT: return "INSERT";
	case SQLITE_UPDATE: return "UPDATE";
	case SQLITE_TRANSACTION: return "a transaction (BEGIN, COMMIT, ROLLBACK)";
	case SQLITE_SAVEPOINT: return "SAVEPOINT";
	case SQLITE_ATTACH: return "ATTACH";
	case SQLITE_DETACH: return "DETACH";
	case SQLITE_ALTER_TABLE: return "ALTER TABLE";
	case SQLITE_REINDEX: return "REINDEX";
	case SQLITE_ANALYZE: return "ANALYZE";
	case SQLITE_CREATE_VTABLE: return "CREATE VIRTUAL TABLE";
	case SQLITE_DROP_VTABLE: return "DROP VIRTUAL TABLE";
	default: return "this statement";
	}
}

static int schema_table(const char *t)
{
	return !strcasecmp(t, "sqlite_master") || !strcasecmp(t, "sqlite_schema") ||
	       !strcasecmp(t, "sqlite_temp_master") ||
	       !strcasecmp(t, "sqlite_temp_schema");
}

/* A write to the schema table: either DDL (CREATE ..., named by the
 * statement's first word) or, inside a query, the first use of a
 * table-valued function that was not made ready beforehand (only the
 * allowed ones are). */
static void schema_write_denied(struct qsqlauth *c)
{
	char word[32];
	size_t n = 0;
	const char *p = c->sql + qsqlauth_skip_blank(c->sql);

	while (n + 1 < sizeof word && ((*p >= 'a' && *p <= 'z') ||
	                               (*p >= 'A' && *p <= 'Z'))) {
		char ch = *p++;
		word[n++] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
	}
	word[n] = '\0';
	if (!n || !strcmp(word, "SELECT") || !strcmp(word, "WITH") ||
	    !strcmp(word, "VALUES"))
		set_denied(c, "sql does not allow this table-valued function%s "
		           "(allowed: json_each, json_tree and the pragma_ "
		           "functions of the read-only pragmas)", "");
	else
		set_denied(c, "sql is read-only: %s is not allowed", word);
}

int qsqlauth_check(void *ctx, int action, const char *a1, const char *a2,
                     const char *db, const char *via)
{
	struct qsqlauth *c = ctx;

	(void)db;
	(void)via;
	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_READ:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_FUNCTION:
		if (a2 && bsearch(a2, allowed_functions, NELEM(allowed_functions),
		                  sizeof allowed_functions[0], cmp_name))
			return SQLITE_OK;
		set_denied(c, "sql does not allow the function %s()", a2);
		return SQLITE_DENY;
	case SQLITE_PRAGMA:
		if (a1 && (in_list(allowed_pragmas_arg,
		                   NELEM(allowed_pragmas_arg), a1) ||
		           (!a2 && in_list(allowed_pragmas_read,
		                           NELEM(allowed_pragmas_read), a1))))
			return SQLITE_OK;
		set_denied(c,
		           "sql is read-only: PRAGMA %s is not allowed (allowed: "
		           "table_info, table_xinfo, table_list, index_list, "
		           "index_info, index_xinfo, foreign_key_list, "
		           "database_list, function_list, collation_list, "
		           "module_list, pragma_list, and reading user_version, "
		           "schema_version, application_id, encoding, page_size, "
		           "page_count, freelist_count)",
		           a1);
		return SQLITE_DENY;
	case SQLITE_INSERT:
	case SQLITE_UPDATE:
	case SQLITE_DELETE:
		if (a1 && schema_table(a1)) {
			schema_write_denied(c);
			return SQLITE_DENY;
		}
		/* fall through */
	default:
		set_denied(c, "sql is read-only: %s is not allowed",
		           action_name(action));
		return SQLITE_DENY;
	}
}

/* Length of the leading whitespace and SQL comments of s. */
size_t qsqlauth_skip_blank(const char *s)
{
	const char *p = s;

	for (;;) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
		    *p == '\f' || *p == '\v') {
			p++;
		} else if (p[0] == '-' && p[1] == '-') {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			if (!end)
				return (size_t)(p - s); /* unterminated: not blank */
			p = end + 2;
		} else {
			return (size_t)(p - s);
		}
	}
}

/* Table-valued functions initialise themselves on first use by touching
 * the schema, which the authorizer refuses: use the allowed ones once
 * before it is installed. */
int qsqlauth_ready(sqlite3 *db, struct err *e)
{
	struct buf sql;
	int rc = 0;

	buf_init(&sql, 0);
	buf_puts(&sql, "SELECT 1 FROM json_each('[]'), json_tree('[]')");
	for (size_t k = 0; k < NELEM(allowed_pragmas_arg); k++)
		buf_printf(&sql, ", pragma_%s", allowed_pragmas_arg[k]);
	for (size_t k = 0; k < NELEM(allowed_pragmas_read); k++)
		buf_printf(&sql, ", pragma_%s", allowed_pragmas_read[k]);
	buf_puts(&sql, " LIMIT 0");
	if (sql.failed)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (sqlite3_exec(db, sql.data, NULL, NULL, NULL) != SQLITE_OK)
		rc = err_set(e, ERR_DATA, "cannot prepare the sql connection: %s",
		             sqlite3_errmsg(db));
	buf_free(&sql);
	return rc;
}
