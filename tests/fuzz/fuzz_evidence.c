/* fuzz_evidence: the evidence document reader (common/ingest: input, the
 * yajl stream, evparse's token state machine and rows, the catalog tree).
 *
 * The input is a document (plain or gzip) read with a sink that takes the
 * rows.  Properties: no crash or leak; an error has a one-line UTF-8
 * message; on success the catalog's text is valid UTF-8 and the catalog
 * written by the one emitter (jsonout) is JSON that jansson reads back
 * (NUL included) and that the evidence reader accepts again, with the same
 * counts of rows (none: the big arrays are emptied in the catalog). */
#include "fuzzlib.h"
#include "ingest/evidence.h"
#include "base/jsonout.h"

#include <jansson.h>

struct counts {
	uint64_t events, samples, points;
};

static int on_event(void *ctx, int64_t pr, int64_t o, const struct row_event *r,
                    struct err *e)
{
	(void)pr, (void)o, (void)e;
	fuzz_check(utf8_valid(r->tid, r->tid_len), "a row's tid is UTF-8");
	((struct counts *)ctx)->events++;
	return 0;
}

static int on_sample(void *ctx, int64_t pr, int64_t o, const struct row_sample *r,
                     struct err *e)
{
	(void)pr, (void)o, (void)r, (void)e;
	((struct counts *)ctx)->samples++;
	return 0;
}

static int on_point(void *ctx, int64_t s, int64_t o, const struct row_point *r,
                    struct err *e)
{
	(void)s, (void)o, (void)r, (void)e;
	((struct counts *)ctx)->points++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct counts c = {0, 0, 0};
	struct row_sink sink = {&c, on_event, on_sample, on_point, NULL, NULL};
	struct evstats st;
	json_t *cat = NULL;
	struct err e;

	const char *path = fuzz_file("doc.json", data, size);
	int rc = evidence_read(path, &sink, &cat, &st, &e);
	if (rc) {
		fuzz_check(cat == NULL, "no catalog on failure");
		fuzz_check(e.msg[0] && !strchr(e.msg, '\n'), "one message line");
		fuzz_check(utf8_valid(e.msg, strlen(e.msg)), "the message is UTF-8");
		return 0;
	}
	fuzz_check(st.events == c.events && st.samples == c.samples &&
	           st.points == c.points, "stats count the rows the sink got");

	struct buf b;
	json_error_t je;
	buf_init(&b, 0);
	jsonout_tree(&b, cat, 0);
	fuzz_check(!b.failed, "the catalog is written");
	fuzz_check(utf8_valid(b.data, b.len), "the catalog is UTF-8");
	json_t *back = json_loadb(b.data, b.len, JSON_ALLOW_NUL, &je);
	fuzz_check(back != NULL, "the written catalog is JSON");
	fuzz_check(json_equal(back, cat), "the catalog round-trips");
	json_decref(back);

	/* the catalog is itself a document the reader accepts */
	json_t *again = NULL;
	struct evstats st2;
	path = fuzz_file("catalog.json", (const uint8_t *)b.data, b.len);
	rc = evidence_read(path, NULL, &again, &st2, &e);
	fuzz_check(rc == 0, e.msg);
	evstats_free(&st2);
	json_decref(again);
	buf_free(&b);
	evstats_free(&st);
	json_decref(cat);
	return 0;
}
