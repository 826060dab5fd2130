/* Unit tests for common/base/gz (the one gzip writer) and fdio. */
#include "testlib.h"

#include "base/fdio.h"
#include "base/gz.h"
#include "base/gzpipe.h"

#include <fcntl.h>
#include <zlib.h>

/* Inflates a gzip member; returns its decoded length or -1. */
static long gunzip(const unsigned char *p, size_t n, char *out, size_t cap)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -1;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	int rc = inflate(&z, Z_FINISH);
	long got = (long)(cap - z.avail_out);
	inflateEnd(&z);
	return rc == Z_STREAM_END && z.avail_in == 0 ? got : -1;
}

static const char text[] = "[[0.5,1.0,3,\"281474976710657\",7],[2.0,2.0,0,\"None\",8]]";

TEST(member_header_mtime0_os255_and_round_trip)
{
	struct gz g;
	struct err e;
	unsigned char *out = NULL;
	size_t cap = 0, n = 0;
	char back[256];

	gz_init(&g, 2);
	CHECK_EQ(gz_member(&g, text, strlen(text), &out, &cap, &n, "t", &e), 0);
	CHECK_GE(n, 18);
	CHECK_EQ(out[0], 0x1f);
	CHECK_EQ(out[1], 0x8b);
	CHECK_EQ(out[4] | out[5] | out[6] | out[7], 0); /* mtime 0 */
	CHECK_EQ(out[3], 0);                            /* no name, no flags */
	CHECK_EQ(out[9], 255);                          /* OS unknown */
	CHECK_EQ(gunzip(out, n, back, sizeof back), (long)strlen(text));
	CHECK(!memcmp(back, text, strlen(text)));
	gz_free(&g);
	free(out);
}

TEST(member_same_input_same_bytes_with_reuse)
{
	struct gz g1, g2;
	struct err e;
	unsigned char *a = NULL, *b = NULL;
	size_t ca = 0, cb = 0, na = 0, nb = 0;

	gz_init(&g1, 2);
	gz_init(&g2, 2);
	/* g1 compresses something else first: a reset state gives the same bytes */
	CHECK_EQ(gz_member(&g1, "xyz", 3, &a, &ca, &na, "t", &e), 0);
	CHECK_EQ(gz_member(&g1, text, strlen(text), &a, &ca, &na, "t", &e), 0);
	CHECK_EQ(gz_member(&g2, text, strlen(text), &b, &cb, &nb, "t", &e), 0);
	CHECK_EQ(na, nb);
	CHECK(na == nb && !memcmp(a, b, na));
	gz_free(&g1);
	gz_free(&g2);
	free(a);
	free(b);
}

struct sink {
	unsigned char data[1 << 16];
	size_t len;
	int calls;
};

static int put(void *ctx, const unsigned char *p, size_t n, struct err *e)
{
	struct sink *s = ctx;
	if (s->len + n > sizeof s->data)
		return err_set(e, ERR_LIMIT, "sink full");
	memcpy(s->data + s->len, p, n);
	s->len += n;
	s->calls++;
	return 0;
}

static int refuse(void *ctx, const unsigned char *p, size_t n, struct err *e)
{
	(void)ctx, (void)p, (void)n;
	return err_set(e, ERR_DATA, "disk full");
}

TEST(stream_in_pieces_decodes_to_the_whole)
{
	struct gz g;
	struct err e;
	static struct sink s;
	static char whole[20000], back[40000];
	size_t len = 0;

	gz_init(&g, 6);
	for (int k = 0; k < 300; k++) {
		CHECK_EQ(gz_stream(&g, text, strlen(text), 0, put, &s, "t", &e), 0);
		memcpy(whole + len, text, strlen(text));
		len += strlen(text);
	}
	CHECK_EQ(gz_stream(&g, "", 0, 1, put, &s, "t", &e), 0);
	CHECK_EQ(s.data[9], 255);
	CHECK_EQ(gunzip(s.data, s.len, back, sizeof back), (long)len);
	CHECK(!memcmp(back, whole, len));
	/* a second member after the first finished starts a new header */
	size_t first = s.len;
	CHECK_EQ(gz_stream(&g, text, strlen(text), 1, put, &s, "t", &e), 0);
	CHECK_EQ(s.data[first], 0x1f);
	CHECK_EQ(gunzip(s.data + first, s.len - first, back, sizeof back),
	         (long)strlen(text));
	gz_free(&g);
}

TEST(stream_write_error_is_returned)
{
	struct gz g;
	struct err e;

	gz_init(&g, 1);
	CHECK_EQ(gz_stream(&g, text, strlen(text), 1, refuse, NULL, "t", &e),
	         ERR_DATA);
	CHECK_STR(e.msg, "disk full");
	gz_free(&g);
}

TEST(fdio_write_all_writes_everything_or_fails)
{
	char path[] = "/tmp/dsight-test-fdio-XXXXXX";
	int fd = mkstemp(path);
	static char big[1 << 20];
	for (size_t k = 0; k < sizeof big; k++)
		big[k] = (char)('a' + k % 26);
	CHECK(fd >= 0);
	CHECK_EQ(fdio_write_all(fd, big, sizeof big), 0);
	CHECK_EQ(lseek(fd, 0, SEEK_END), (off_t)sizeof big);
	close(fd);
	fd = open(path, O_RDONLY);
	CHECK_EQ(fdio_write_all(fd, big, 10), -1); /* read-only descriptor */
	close(fd);
	unlink(path);
}

/* The pipe writes the bytes gz_member gives, member after member, in the
 * order handed over; a write error reaches the caller. */
TEST(pipe_writes_the_members_in_order)
{
	char path[] = "/tmp/dsight-test-gzpipe-XXXXXX";
	int fd = mkstemp(path);
	struct gzpipe *p;
	struct buf t, want;
	struct gz g;
	struct err e;
	unsigned char *z = NULL;
	size_t cap = 0, n;
	uint64_t bytes = 0;

	CHECK(fd >= 0);
	buf_init(&t, 0);
	buf_init(&want, 0);
	gz_init(&g, 1);
	CHECK_EQ(gzpipe_open(fd, path, 1, &p, &e), 0);
	for (int k = 0; k < 50; k++) {
		for (int i = 0; i < 1000 + 37 * k; i++)
			buf_printf(&t, "[%d,%d],", k, i);
		CHECK_EQ(gz_member(&g, t.data, t.len, &z, &cap, &n, "t", &e), 0);
		buf_append(&want, z, n);
		CHECK_EQ(gzpipe_put(p, &t, &e), 0);
		CHECK_EQ(t.len, 0);
	}
	CHECK_EQ(gzpipe_finish(p, &bytes, &e), 0);
	gzpipe_free(p);
	CHECK_EQ(bytes, want.len);
	CHECK_EQ(lseek(fd, 0, SEEK_END), (off_t)want.len);
	char *got = malloc(want.len);
	CHECK(got != NULL);
	CHECK_EQ(pread(fd, got, want.len, 0), (ssize_t)want.len);
	CHECK(memcmp(got, want.data, want.len) == 0);
	free(got);
	close(fd);

	/* a descriptor that cannot be written: the error, naming the file */
	fd = open(path, O_RDONLY);
	CHECK_EQ(gzpipe_open(fd, path, 1, &p, &e), 0);
	buf_puts(&t, "[1]");
	CHECK_EQ(gzpipe_put(p, &t, &e), 0);
	CHECK_EQ(gzpipe_finish(p, &bytes, &e), ERR_DATA);
	CHECK(strstr(e.msg, path) != NULL);
	buf_puts(&t, "[2]");
	CHECK_EQ(gzpipe_put(p, &t, &e), ERR_DATA);
	gzpipe_free(p);
	close(fd);
	unlink(path);
	buf_free(&t);
	buf_free(&want);
	gz_free(&g);
	free(z);
}

int main(void)
{
	RUN(member_header_mtime0_os255_and_round_trip);
	RUN(member_same_input_same_bytes_with_reuse);
	RUN(stream_in_pieces_decodes_to_the_whole);
	RUN(stream_write_error_is_returned);
	RUN(fdio_write_all_writes_everything_or_fails);
	RUN(pipe_writes_the_members_in_order);
	return testlib_done();
}
