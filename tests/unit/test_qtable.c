/*
 * test_qtable: the tables of query kinds and parameters drive the CLI, the
 * RPC codec, the MCP schema and the docs; these tests check that each of
 * those agrees with the tables (and that the man page and the viewer's
 * query module mention every kind and parameter).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/qdoc.h"
#include "query/qparams.h"
#include "query/query.h"
#include "testlib.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	if (s)
		s[n] = 0;
	fclose(f);
	return s;
}

/* The man page spells '-' as '\-'. */
static char *man_text(const char *s)
{
	char *r = malloc(strlen(s) * 2 + 1), *o = r;
	for (; r && *s; s++) {
		if (*s == '-' || *s == '_')
			*o++ = '\\';
		*o++ = *s;
	}
	if (r)
		*o = 0;
	return r;
}

/* word occurs in text delimited by non-identifier characters */
static int has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	for (const char *s = text; (s = strstr(s, word)) != NULL; s++) {
		char a = s == text ? ' ' : s[-1], b = s[n];
		int ida = a == '_' || (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z');
		int idb = b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
		if (!ida && !idb)
			return 1;
	}
	return 0;
}

static int man_has(const char *man, const char *word)
{
	char *m = man_text(word);
	int ok = m && (strstr(man, m) || has_word(man, word));
	if (!ok)
		printf("# the man page does not mention %s\n", word);
	free(m);
	return ok;
}

TEST(man_page_mentions_every_kind_and_parameter)
{
	char *man = slurp("man/dsight-query.1");
	CHECK(man != NULL);
	if (!man)
		return;
	for (size_t k = 0; k < query_kind_count; k++)
		CHECK(man_has(man, query_kind_table[k].name));
	for (size_t k = 0; k < qparam_count; k++) {
		CHECK(man_has(man, qparam_table[k].name));
		if (qparam_table[k].flag)
			CHECK(man_has(man, qparam_table[k].flag));
	}
	free(man);
}

TEST(viewer_query_module_mentions_its_kinds_and_parameters)
{
	char *js = slurp("web/query.js");
	size_t nk = 0, np = 0;
	CHECK(js != NULL);
	if (!js)
		return;
	for (size_t k = 0; k < query_kind_count; k++)
		if (query_kind_table[k].web) {
			nk++;
			if (!has_word(js, query_kind_table[k].web))
				printf("# web/query.js lacks %s\n",
				       query_kind_table[k].web);
			CHECK(has_word(js, query_kind_table[k].web));
		}
	for (size_t k = 0; k < qparam_count; k++)
		if (qparam_table[k].web) {
			np++;
			if (!has_word(js, qparam_table[k].web))
				printf("# web/query.js lacks %s\n",
				       qparam_table[k].web);
			CHECK(has_word(js, qparam_table[k].web));
		}
	CHECK(nk >= 8 && np >= 10); /* the table does name the viewer's calls */
	free(js);
}

TEST(every_cli_flag_parses_through_the_table)
{
	struct query_params p;
	struct err e;

	query_params_init(&p);
	CHECK(p.limit == 100 && p.offset == 0 && p.min_ttft_ms == 0 &&
	      !p.points && !p.kind);
	for (size_t k = 0; k < qparam_count; k++) {
		const struct qparam *qp = &qparam_table[k];
		if (!qp->flag)
			continue;
		CHECK(qparam_by_flag(qp->flag, strlen(qp->flag)) == qp);
		CHECK(qparam_by_name(qp->name) == qp);
		err_clear(&e);
		if (qp->type == QP_INTEGER || qp->type == QP_NUMBER) {
			CHECK_EQ(query_params_set_cli(&p, qp, "x", &e), ERR_USAGE);
			CHECK(!strncmp(e.msg, qp->flag, strlen(qp->flag)));
		}
	}
	err_clear(&e);
	CHECK(query_params_set_cli(&p, qparam_by_name("limit"), "1.5", &e) ==
	      ERR_USAGE);
	CHECK_STR(e.msg, "--limit must be an integer");
	CHECK(query_params_set_cli(&p, qparam_by_name("start"), "x", &e) ==
	      ERR_USAGE);
	CHECK_STR(e.msg, "--from must be a number");
	CHECK_EQ(query_params_set_cli(&p, qparam_by_name("rank"), "0", &e), 0);
	CHECK(p.has_rank && p.rank == 0);
	query_params_free(&p);
}

/* Encoding then decoding gives the same parameters back, non-finite
 * numbers included (sent as "nan"/"inf"/"-inf"). */
TEST(rpc_encoding_round_trips)
{
	struct query_params p, q;
	struct buf b;
	struct err e;
	json_t *j;

	query_params_init(&p);
	p.kind = "nsys";
	p.has_start = 1;
	p.start = NAN;
	p.has_end = 1;
	p.end = INFINITY;
	p.min_ttft_ms = -INFINITY;
	p.worker = "";
	p.has_rank = 1;
	p.rank = 0;
	p.limit = 0;
	p.points = 1;
	buf_init(&b, 0);
	query_params_to_json(&p, &b);
	CHECK_STR(b.data, "{\"kind\":\"nsys\",\"start\":\"nan\",\"end\":\"inf\","
	                  "\"worker\":\"\",\"rank\":0,\"min_ttft_ms\":\"-inf\","
	                  "\"limit\":0,\"points\":true}");
	j = json_loads(b.data, 0, NULL);
	err_clear(&e);
	CHECK_EQ(query_params_from_json(j, &q, &e), 0);
	CHECK(isnan(q.start) && q.has_start && isinf(q.end) && q.end > 0);
	CHECK(isinf(q.min_ttft_ms) && q.min_ttft_ms < 0);
	CHECK_STR(q.worker, "");
	CHECK(q.has_rank && q.rank == 0 && !q.has_profile && q.limit == 0 &&
	      q.points == 1);
	query_params_free(&q);
	json_decref(j);
	buf_reset(&b);
	query_params_init(&p);
	p.min_ttft_ms = -0.0;
	query_params_to_json(&p, &b);
	CHECK_STR(b.data, "{\"min_ttft_ms\":-0.0}");
	buf_reset(&b);
	query_params_init(&p);
	query_params_to_json(&p, &b);
	CHECK_STR(b.data, "{}");
	buf_free(&b);
	/* a string that is not one of the three spellings stays a type error */
	j = json_loads("{\"start\":\"Infinity\"}", 0, NULL);
	CHECK_EQ(query_params_from_json(j, &q, &e), ERR_USAGE);
	CHECK_STR(e.msg, "start must be a number or null");
	json_decref(j);
}

/* Lists grow in place up to QPARAM_LIST_MAX values and refuse more, by
 * repeated flags, comma-separated keys and JSON arrays alike. */
TEST(lists_take_at_most_the_limit)
{
	const struct qparam *w = qparam_by_name("worker"),
	                    *f = qparam_by_name("fields");
	struct query_params p;
	struct buf b;
	struct err e;
	json_t *j, *arr;

	query_params_init(&p);
	err_clear(&e);
	for (int k = 0; k < QPARAM_LIST_MAX; k++)
		CHECK_EQ(query_params_set_cli(&p, w, "w", &e), 0);
	CHECK(p.worker_list.n == QPARAM_LIST_MAX && !p.worker);
	CHECK_EQ(query_params_set_cli(&p, w, "w", &e), ERR_USAGE);
	CHECK_STR(e.msg, "--worker takes at most 1000 values");
	buf_init(&b, 0);
	for (int k = 0; k < QPARAM_LIST_MAX; k++)
		buf_puts(&b, k ? ",k" : "k");
	CHECK_EQ(query_params_set_cli(&p, f, b.data, &e), 0);
	CHECK_EQ(p.fields.n, (size_t)QPARAM_LIST_MAX);
	CHECK_EQ(query_params_set_cli(&p, f, "one", &e), ERR_USAGE);
	CHECK_STR(e.msg, "--fields takes at most 1000 values");
	query_params_free(&p);

	arr = json_array();
	for (int k = 0; k <= QPARAM_LIST_MAX; k++)
		json_array_append_new(arr, json_string("w"));
	j = json_pack("{s:o}", "worker", arr);
	CHECK_EQ(query_params_from_json(j, &p, &e), ERR_USAGE);
	CHECK_STR(e.msg, "worker takes at most 1000 values");
	query_params_free(&p);
	json_array_remove(arr, 0);
	CHECK_EQ(query_params_from_json(j, &p, &e), 0);
	CHECK_EQ(p.worker_list.n, (size_t)QPARAM_LIST_MAX);
	query_params_free(&p);
	json_decref(j);
	buf_puts(&b, ",k");
	j = json_pack("{s:s}", "sort", b.data);
	CHECK_EQ(query_params_from_json(j, &p, &e), ERR_USAGE);
	CHECK_STR(e.msg, "sort takes at most 1000 values");
	query_params_free(&p);
	json_decref(j);
	buf_free(&b);
}

TEST(schema_and_description_follow_the_tables)
{
	json_t *s = qdoc_schema(), *d;
	struct buf b;
	const json_t *props = json_object_get(s, "properties");
	const json_t *kinds = json_object_get(json_object_get(props, "kind"),
	                                      "enum");

	CHECK_EQ(json_object_size(props), qparam_count);
	CHECK_EQ(json_array_size(kinds), query_kind_count);
	CHECK_STR(json_string_value(json_object_get(
	                  json_object_get(props, "limit"), "type")),
	          "integer");
	CHECK(json_integer_value(json_object_get(
	              json_object_get(props, "limit"), "maximum")) == 1000);
	json_decref(s);
	buf_init(&b, 0);
	qdoc_describe_json(&b);
	d = json_loads(b.data, 0, NULL);
	CHECK(d != NULL);
	CHECK_EQ(json_array_size(json_object_get(d, "params")), qparam_count);
	CHECK_EQ(json_array_size(json_object_get(d, "kinds")), query_kind_count);
	CHECK_STR(json_string_value(json_object_get(
	                  json_array_get(json_object_get(d, "params"), 1),
	                  "flag")),
	          "--from");
	json_decref(d);
	buf_reset(&b);
	qdoc_help(&b, NULL);
	for (size_t k = 0; k < qparam_count; k++)
		if (qparam_table[k].flag)
			CHECK(strstr(b.data, qparam_table[k].flag) != NULL);
	for (size_t k = 0; k < query_kind_count; k++)
		CHECK(strstr(b.data, query_kind_table[k].name) != NULL);
	buf_free(&b);
}

int main(void)
{
	RUN(man_page_mentions_every_kind_and_parameter);
	RUN(viewer_query_module_mentions_its_kinds_and_parameters);
	RUN(every_cli_flag_parses_through_the_table);
	RUN(rpc_encoding_round_trips);
	RUN(lists_take_at_most_the_limit);
	RUN(schema_and_description_follow_the_tables);
	return testlib_done();
}
