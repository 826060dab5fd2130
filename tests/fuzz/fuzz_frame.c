/* fuzz_frame: the session socket's frame reader (protocol/frame).
 *
 * The input is a byte stream from a client, fed in pieces whose sizes come
 * from the input itself.  Properties: no crash, every completed body has the
 * announced length and is NUL-terminated, a limit error stops the stream,
 * and every body re-encoded with frame_begin/frame_end decodes to itself. */
#include "fuzzlib.h"
#include "frame.h"

static void roundtrip(const char *body, size_t n)
{
	struct buf b;
	struct frame_reader r;
	struct err e;
	const char *p;
	size_t len;
	char *out = NULL;
	size_t out_len = 0;

	buf_init(&b, 0);
	size_t off = frame_begin(&b);
	buf_append(&b, body, n);
	int rc = frame_end(&b, off, FRAME_REQUEST_MAX);
	if (rc || b.failed) {
		buf_free(&b);
		return;
	}
	frame_reader_init(&r, FRAME_REQUEST_MAX);
	p = b.data;
	len = b.len;
	rc = frame_reader_feed(&r, &p, &len, &out, &out_len, &e);
	fuzz_check(rc == FRAME_DONE, "an encoded frame decodes");
	fuzz_check(out_len == n && memcmp(out, body, n) == 0, "the body round-trips");
	fuzz_check(len == 0, "a decoded frame consumes exactly its bytes");
	free(out);
	frame_reader_free(&r);
	buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_reader r;
	struct err e;
	size_t max;

	if (size < 1)
		return 0;
	/* the first byte picks the limit and the piece size */
	max = data[0] & 1 ? FRAME_REQUEST_MAX : 64;
	size_t piece = (size_t)(data[0] >> 1) + 1;
	data++, size--;
	frame_reader_init(&r, max);
	err_clear(&e);
	for (size_t at = 0; at < size;) {
		const char *p = (const char *)data + at;
		size_t len = size - at < piece ? size - at : piece;
		size_t given = len;
		int stop = 0;
		while (len && !stop) {
			char *out = NULL;
			size_t out_len = 0;
			int rc = frame_reader_feed(&r, &p, &len, &out, &out_len, &e);
			if (rc == FRAME_DONE) {
				fuzz_check(out && out[out_len] == '\0', "a body is NUL-terminated");
				fuzz_check(out_len <= max, "a body respects the limit");
				roundtrip(out, out_len);
				free(out);
			} else if (rc != FRAME_MORE) {
				fuzz_check(e.msg[0], "a refused frame has a message");
				fuzz_check(utf8_valid(e.msg, strlen(e.msg)), "the message is UTF-8");
				stop = 1;
			}
		}
		if (stop)
			break;
		fuzz_check(len == 0, "FRAME_MORE consumes all input");
		at += given;
	}
	frame_reader_free(&r);
	return 0;
}
