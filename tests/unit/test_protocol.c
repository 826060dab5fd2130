/* Unit tests: protocol/ (frame decoding and limits, rpc messages, addresses). */
#include <stdlib.h>
#include <sys/stat.h>

#include "address.h"
#include "httpc.h"
#include "frame.h"
#include "rpc.h"
#include "testlib.h"

TEST(frame_roundtrip_bytewise)
{
	struct buf b;
	struct frame_reader r;
	struct err e;
	buf_init(&b, 0);
	size_t off = frame_begin(&b);
	buf_puts(&b, "{\"a\":1}");
	CHECK_EQ(frame_end(&b, off, FRAME_REQUEST_MAX), 0);
	off = frame_begin(&b);
	CHECK_EQ(frame_end(&b, off, FRAME_REQUEST_MAX), 0); /* an empty frame */
	CHECK_EQ(b.len, 4 + 7 + 4);
	frame_reader_init(&r, FRAME_REQUEST_MAX);
	int frames = 0;
	for (size_t k = 0; k < b.len; k++) {
		const char *p = b.data + k;
		size_t n = 1;
		char *out = NULL;
		size_t olen = 0;
		int rc = frame_reader_feed(&r, &p, &n, &out, &olen, &e);
		CHECK(rc == FRAME_MORE || rc == FRAME_DONE);
		if (rc == FRAME_DONE) {
			if (frames == 0)
				CHECK(olen == 7 && !memcmp(out, "{\"a\":1}", 7));
			else
				CHECK_EQ(olen, 0);
			frames++;
			free(out);
		}
	}
	CHECK_EQ(frames, 2);
	CHECK(frame_reader_idle(&r));
	frame_reader_free(&r);
	buf_free(&b);
}

TEST(frame_limit_checked_before_allocation)
{
	struct frame_reader r;
	struct err e;
	const unsigned char huge[4] = {0xff, 0xff, 0xff, 0xff};
	const char *p = (const char *)huge;
	size_t n = 4;
	char *out = NULL;
	size_t olen;
	frame_reader_init(&r, FRAME_REQUEST_MAX);
	CHECK_EQ(frame_reader_feed(&r, &p, &n, &out, &olen, &e), ERR_LIMIT);
	CHECK(strstr(e.msg, "4294967295") && strstr(e.msg, "8 MiB"));
	CHECK_EQ(r.body.cap, 0); /* nothing allocated for the claimed body */
	frame_reader_free(&r);
	/* exactly the limit is fine, one more is not */
	unsigned char ok[4] = {0x00, 0x80, 0x00, 0x00}, bad[4] = {0x00, 0x80, 0x00, 0x01};
	frame_reader_init(&r, FRAME_REQUEST_MAX);
	p = (const char *)ok;
	n = 4;
	CHECK_EQ(frame_reader_feed(&r, &p, &n, &out, &olen, &e), FRAME_MORE);
	frame_reader_free(&r);
	frame_reader_init(&r, FRAME_REQUEST_MAX);
	p = (const char *)bad;
	n = 4;
	CHECK_EQ(frame_reader_feed(&r, &p, &n, &out, &olen, &e), ERR_LIMIT);
	frame_reader_free(&r);
}

TEST(frame_end_rejects_oversize)
{
	struct buf b;
	buf_init(&b, 0);
	size_t off = frame_begin(&b);
	buf_puts(&b, "12345");
	CHECK_EQ(frame_end(&b, off, 4), ERR_LIMIT);
	CHECK_EQ(frame_end(&b, off, 5), 0);
	CHECK_EQ(frame_get_len((const unsigned char *)b.data), 5);
	buf_free(&b);
}

static int parse(const char *s, struct rpc_request *rq)
{
	struct err e;
	return rpc_parse_request(s, strlen(s), 0, rq, &e);
}

TEST(rpc_request_validation)
{
	struct rpc_request rq;
	CHECK_EQ(parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"query\",\"params\":{\"kind\":\"summary\"}}", &rq), 0);
	CHECK_STR(rq.method, "query");
	CHECK_EQ(json_integer_value(rq.id), 7);
	CHECK(json_is_object(rq.params));
	rpc_request_free(&rq);
	CHECK_EQ(parse("{nope", &rq), RPC_PARSE_ERROR);
	CHECK(rq.id == NULL);
	rpc_request_free(&rq);
	CHECK_EQ(parse("[1,2]", &rq), RPC_INVALID_REQUEST);
	rpc_request_free(&rq);
	CHECK_EQ(parse("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"status\"}", &rq), RPC_INVALID_REQUEST);
	CHECK(rq.id && json_integer_value(rq.id) == 3);
	rpc_request_free(&rq);
	CHECK_EQ(parse("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}", &rq), RPC_INVALID_REQUEST);
	rpc_request_free(&rq);
	CHECK_EQ(parse("{\"jsonrpc\":\"2.0\",\"method\":\"status\"}", &rq), 0);
	CHECK(rq.id == NULL); /* a notification */
	rpc_request_free(&rq);
}

TEST(rpc_result_embeds_verbatim_and_members_locate_raw_text)
{
	struct buf b;
	struct rpc_response r;
	struct err e;
	json_t *id = json_integer(42);
	const char *data = "{\"big\":123456789012345678901234567890,\"r\":1e-09,\"s\":\"\\u00e9\"}";
	static const char *const keys[] = {"generation", "data"};
	struct rpc_span sp[2];

	buf_init(&b, 0);
	rpc_result_open(&b, id);
	buf_puts(&b, "{\"generation\":\"abc\",\"data\":");
	buf_puts(&b, data);
	buf_putc(&b, '}');
	rpc_result_close(&b);
	CHECK_EQ(rpc_parse_response(b.data, b.len, &r, &e), 0);
	CHECK(!r.is_error && r.result.found);
	CHECK_EQ(rpc_members(r.result.text, r.result.len, keys, sp, 2, &e), 0);
	CHECK(sp[0].found && sp[0].len == 5 && !memcmp(sp[0].text, "\"abc\"", 5));
	CHECK(sp[1].found && sp[1].len == strlen(data) && !memcmp(sp[1].text, data, strlen(data)));
	buf_reset(&b);
	rpc_error(&b, NULL, RPC_INVALID_PARAMS, "Unknown client request: x\"y");
	CHECK_EQ(rpc_parse_response(b.data, b.len, &r, &e), 0);
	CHECK(r.is_error && r.code == -32602);
	CHECK_STR(r.message, "Unknown client request: x\"y");
	CHECK(rpc_exit_status(r.code) == 2 && rpc_exit_status(RPC_DATA_ERROR) == 1);
	CHECK_EQ(rpc_parse_response("{\"a\":", 5, &r, &e), ERR_DATA);
	CHECK_EQ(rpc_parse_response("[1]", 3, &r, &e), ERR_DATA);
	json_decref(id);
	buf_free(&b);
}

/* A batch of a streamed answer: its columns and rows located raw in the
 * parse that validates the frame; a result is not a batch. */
TEST(rpc_rows_batch_is_located)
{
	struct buf b;
	struct rpc_response r;
	struct err e;
	json_t *id = json_string("q1");
	const char *rows = "[[1,\"a\"],[2.5,null]]";

	buf_init(&b, 0);
	rpc_rows_open(&b, id);
	buf_puts(&b, ",\"generation\":\"g\",\"columns\":[\"x\",\"y\"],\"rows\":");
	buf_puts(&b, rows);
	buf_puts(&b, "}}");
	CHECK_EQ(rpc_parse_response(b.data, b.len, &r, &e), 0);
	CHECK(r.is_rows && !r.is_error && !r.result.found);
	CHECK(r.columns.found && r.columns.len == 9 &&
	      !memcmp(r.columns.text, "[\"x\",\"y\"]", 9));
	CHECK(r.rows.found && r.rows.len == strlen(rows) &&
	      !memcmp(r.rows.text, rows, strlen(rows)));
	buf_reset(&b);
	rpc_rows_open(&b, id);
	buf_puts(&b, ",\"rows\":[]}}");
	CHECK_EQ(rpc_parse_response(b.data, b.len, &r, &e), 0);
	CHECK(r.is_rows && !r.columns.found && r.rows.len == 2);
	/* a notification of another method is not an answer */
	{
		const char *other = "{\"method\":\"x\",\"params\":{}}";
		CHECK_EQ(rpc_parse_response(other, strlen(other), &r, &e),
		         ERR_DATA);
	}
	json_decref(id);
	buf_free(&b);
}

TEST(address_names)
{
	char name[ADDRESS_NAME_MAX + 1];
	CHECK(address_name_valid("calm-blue-otter"));
	CHECK(address_name_valid("a"));
	CHECK(address_name_valid("A_1-b"));
	CHECK(!address_name_valid(""));
	CHECK(!address_name_valid("-x"));
	CHECK(!address_name_valid("_x"));
	CHECK(!address_name_valid("a.b"));
	CHECK(!address_name_valid("a/b"));
	CHECK(!address_name_valid("a:1"));
	char long65[66];
	memset(long65, 'a', 65);
	long65[65] = 0;
	CHECK(!address_name_valid(long65));
	long65[64] = 0;
	CHECK(address_name_valid(long65));
	for (int k = 0; k < 50; k++) {
		address_generate_name(name, sizeof name);
		CHECK(address_name_valid(name));
		int dashes = 0;
		for (char *p = name; *p; p++)
			dashes += *p == '-';
		CHECK_EQ(dashes, 2);
	}
}

TEST(address_resolution_order)
{
	struct address a;
	struct err e;
	char tmpl[] = "/tmp/dsight-test-XXXXXX";
	CHECK(mkdtemp(tmpl) != NULL);
	chmod(tmpl, 0700);
	setenv("XDG_RUNTIME_DIR", tmpl, 1);
	CHECK(address_resolve("host:8080", 0, &a, &e) == ERR_USAGE && a.kind == ADDRESS_TCP);
	CHECK(strstr(e.msg, "HTTP address") != NULL);
	CHECK_EQ(address_resolve("tcp://x", 0, &a, &e), ERR_USAGE);
	CHECK(address_resolve("/abs/s", 0, &a, &e) == 0 && !a.by_name);
	CHECK_STR(a.path, "/abs/s");
	/* a relative path is used against the working directory */
	char cwd[2048], want[4096];
	CHECK(getcwd(cwd, sizeof cwd) != NULL);
	CHECK_EQ(address_resolve("rel/x.sock", 0, &a, &e), 0);
	snprintf(want, sizeof want, "%s/rel/x.sock", cwd);
	CHECK_STR(a.path, want);
	CHECK_EQ(address_resolve("bad.name", 0, &a, &e), ERR_USAGE);
	CHECK(address_resolve("calm", 1, &a, &e) == 0 && a.by_name);
	snprintf(want, sizeof want, "%s/dsight/calm.sock", tmpl);
	CHECK_STR(a.path, want);
	struct stat st;
	snprintf(want, sizeof want, "%s/dsight", tmpl);
	CHECK(lstat(want, &st) == 0 && (st.st_mode & 0777) == 0700);
	chmod(want, 0770);
	CHECK_EQ(address_resolve("calm", 1, &a, &e), ERR_USAGE);
	CHECK(strstr(e.msg, "chmod 700") != NULL);
	rmdir(want);
	/* an unsafe XDG_RUNTIME_DIR is not used at all */
	chmod(tmpl, 0755);
	setenv("TMPDIR", tmpl, 1);
	CHECK_EQ(address_resolve("calm", 0, &a, &e), 0);
	snprintf(want, sizeof want, "%s/dsight-%u/calm.sock", tmpl, (unsigned)geteuid());
	CHECK_STR(a.path, want);
	char longp[200];
	memset(longp, 'x', sizeof longp);
	longp[0] = '/';
	longp[199] = 0;
	CHECK_EQ(address_resolve(longp, 0, &a, &e), ERR_USAGE);
	CHECK(strstr(e.msg, "shorter --path") != NULL);
	rmdir(tmpl);
}

/* HTTP addresses of sessions (httpc.c): the forms, the refusals, and the
 * token found in a same-user session file of the directory. */
TEST(httpc_address_forms)
{
	struct httpc_addr a;
	struct err e;
	char tok[HTTPC_TOKEN_MAX + 1], tmpl[] = "/tmp/dsight-test-XXXXXX", path[4200];
	CHECK(httpc_is_addr("127.0.0.1:9001") && httpc_is_addr("http://x:1/") && httpc_is_addr("h:80/"));
	CHECK(!httpc_is_addr("calm-blue-otter") && !httpc_is_addr("localhost") && !httpc_is_addr("/a/b.sock"));
	CHECK_EQ(httpc_parse("localhost:9001", &a, &e), 0);
	CHECK_STR(a.url, "http://localhost:9001/");
	CHECK_EQ(a.port, 9001);
	CHECK_EQ(httpc_parse("http://[::1]:80/?token=ab12", &a, &e), 0);
	CHECK_STR(a.host, "[::1]");
	CHECK_STR(a.token, "ab12");
	CHECK_EQ(httpc_parse("https://x:1/", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("http://x:1/path", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("x:0", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("x:65536", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("::1:80", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("http://x:1/?token=zz", &a, &e), ERR_USAGE);
	CHECK_EQ(httpc_parse("http://x:1/?other=1", &a, &e), ERR_USAGE);
	/* the token of a session file whose URL names the same listener */
	CHECK(mkdtemp(tmpl) != NULL);
	chmod(tmpl, 0700);
	setenv("XDG_RUNTIME_DIR", tmpl, 1);
	unsetenv("DSIGHT_TOKEN");
	snprintf(path, sizeof path, "%s/dsight", tmpl);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof path, "%s/dsight/s.sock.http", tmpl);
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	fputs("http://127.0.0.1:4242/ 00ff\n", f);
	fclose(f);
	CHECK_EQ(httpc_parse("localhost:4242", &a, &e), 0);
	CHECK(httpc_find_token(&a, tok) == 0 && !strcmp(tok, "00ff"));
	CHECK_EQ(httpc_parse("127.0.0.1:4243", &a, &e), 0);
	CHECK(httpc_find_token(&a, tok) != 0);
	setenv("DSIGHT_TOKEN", "beef", 1);
	CHECK(httpc_find_token(&a, tok) == 0 && !strcmp(tok, "beef"));
	unsetenv("DSIGHT_TOKEN");
	unlink(path);
	snprintf(path, sizeof path, "%s/dsight", tmpl);
	rmdir(path);
	rmdir(tmpl);
}

int main(void)
{
	RUN(frame_roundtrip_bytewise);
	RUN(frame_limit_checked_before_allocation);
	RUN(frame_end_rejects_oversize);
	RUN(rpc_request_validation);
	RUN(rpc_result_embeds_verbatim_and_members_locate_raw_text);
	RUN(rpc_rows_batch_is_located);
	RUN(address_names);
	RUN(address_resolution_order);
	RUN(httpc_address_forms);
	return testlib_done();
}
