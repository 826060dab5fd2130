/* fuzz_nsys: the Nsight Systems import (common/ingest/nsys*) of one export.
 *
 * The input is the bytes of a SQLite export file, written under a name that
 * follows the worker naming (nodeA_decode_w0_profile_rank0.sqlite) and
 * imported into an Nsight-only document with a sink taking the rows.
 * Properties: no crash or leak; an export that cannot be used is a warning
 * or an error with a UTF-8 message, never a failure of the process; the
 * document's text is valid UTF-8 (invalid text became U+FFFD) and the one
 * emitter writes JSON that jansson reads back. */
#include "fuzzlib.h"
#include "ingest/nsys.h"
#include "base/jsonout.h"

#include <jansson.h>

static int on_event(void *ctx, int64_t pr, int64_t o, const struct row_event *r,
                    struct err *e)
{
	(void)ctx, (void)pr, (void)o, (void)e;
	fuzz_check(utf8_valid(r->tid, r->tid_len), "a row's tid is UTF-8");
	return 0;
}

static int on_sample(void *ctx, int64_t pr, int64_t o, const struct row_sample *r,
                     struct err *e)
{
	(void)ctx, (void)pr, (void)o, (void)r, (void)e;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct row_sink sink = {NULL, on_event, on_sample, NULL, NULL, NULL};
	struct nsys_options opt = {1000, "fuzz"};
	json_t *cat = NULL;
	struct err e;

	const char *path = fuzz_file("nodeA_decode_w0_profile_rank0.sqlite", data, size);
	const char *paths[1] = {path};
	err_clear(&e);
	int rc = nsys_import_all(paths, 1, &cat, &opt, &sink, NULL, &e);
	if (rc) {
		fuzz_check(e.msg[0], "an error has a message");
		fuzz_check(utf8_valid(e.msg, strlen(e.msg)), "the message is UTF-8");
		json_decref(cat);
		return 0;
	}
	struct buf b;
	json_error_t je;
	buf_init(&b, 0);
	jsonout_tree(&b, cat, 0);
	fuzz_check(!b.failed, "the document is written");
	fuzz_check(utf8_valid(b.data, b.len), "the document is UTF-8");
	json_t *back = json_loadb(b.data, b.len, JSON_ALLOW_NUL, &je);
	fuzz_check(back != NULL, "the written document is JSON");
	json_decref(back);
	buf_free(&b);
	json_decref(cat);
	return 0;
}
