/* Unit tests for common/ingest/sink_tee and row_point_print: a point's
 * text is printed once for every sink, and is what each would print. */
#include "testlib.h"

#include "base/row.h"
#include "ingest/sink_tee.h"

#include <math.h>

/* What one sink saw of the last point. */
struct seen {
	int calls;
	const char *ptr; /* row->text as given */
	char text[128];  /* its bytes, "" when NULL */
	char value[64];  /* the value's text */
};

static int on_point(void *ctx, int64_t series, int64_t ordinal,
                    const struct row_point *row, struct err *e)
{
	struct seen *s = ctx;
	(void)series;
	(void)ordinal;
	(void)e;
	s->calls++;
	s->ptr = row->text;
	s->text[0] = s->value[0] = '\0';
	if (row->text) {
		snprintf(s->text, sizeof s->text, "%.*s", (int)row->text_len, row->text);
		snprintf(s->value, sizeof s->value, "%.*s", (int)row->value_len,
		         row->text + row->value_off);
	}
	return 0;
}

static void tee_of(struct sink_tee *t, struct seen *a, struct seen *b)
{
	struct row_sink s;

	sink_tee_init(t);
	memset(&s, 0, sizeof s);
	s.point = on_point;
	s.ctx = a;
	sink_tee_add(t, &s);
	if (b) {
		s.ctx = b;
		sink_tee_add(t, &s);
	}
}

static struct row_point point(double time, struct num v)
{
	struct row_point p;
	memset(&p, 0, sizeof p);
	p.time = time;
	p.value = v;
	p.source_id = 3;
	p.source_row = 41;
	return p;
}

TEST(point_printed_once_for_every_sink)
{
	struct sink_tee t;
	struct seen a = {0}, b = {0};
	struct row_sink out;
	struct err e;
	struct row_point p = point(1.5, (struct num){NUM_REAL, 0, 2.25, NULL, 0});

	tee_of(&t, &a, &b);
	sink_tee_sink(&t, &out);
	CHECK_EQ(out.point(out.ctx, 0, 0, &p, &e), 0);
	CHECK_EQ(a.calls, 1);
	CHECK_EQ(b.calls, 1);
	CHECK(a.ptr != NULL && a.ptr == b.ptr);
	CHECK_STR(a.text, "[1.5,2.25,3,41]");
	CHECK_STR(a.value, "2.25");
	CHECK(p.text == NULL); /* the caller's row is not changed */

	/* exact digits of a big integer are the value's text */
	p = point(0.1, (struct num){NUM_BIG, 0, 1e25, "10000000000000000000000001", 26});
	CHECK_EQ(out.point(out.ctx, 0, 1, &p, &e), 0);
	CHECK_STR(b.text, "[0.1,10000000000000000000000001,3,41]");
	CHECK_STR(b.value, "10000000000000000000000001");
	p = point(2, (struct num){NUM_NULL, 0, 0, NULL, 0});
	CHECK_EQ(out.point(out.ctx, 0, 2, &p, &e), 0);
	CHECK_STR(a.text, "[2.0,null,3,41]"); /* a time is a real */
	CHECK_STR(a.value, "null");
	sink_tee_free(&t);
}

/* One sink prints for itself; a time JSON cannot hold goes on without
 * text, so each sink reports the row in its own words. */
TEST(no_text_for_one_sink_or_an_unprintable_time)
{
	struct sink_tee t;
	struct seen a = {0}, b = {0};
	struct row_sink out;
	struct err e;
	struct row_point p = point(1.5, (struct num){NUM_INT, 7, 7.0, NULL, 0});

	tee_of(&t, &a, NULL);
	sink_tee_sink(&t, &out);
	CHECK_EQ(out.point(out.ctx, 0, 0, &p, &e), 0);
	CHECK_EQ(a.calls, 1);
	CHECK(a.ptr == NULL);
	sink_tee_free(&t);

	tee_of(&t, &a, &b);
	sink_tee_sink(&t, &out);
	p = point(INFINITY, (struct num){NUM_INT, 7, 7.0, NULL, 0});
	CHECK_EQ(out.point(out.ctx, 0, 0, &p, &e), 0);
	CHECK(a.ptr == NULL && b.ptr == NULL);
	sink_tee_free(&t);
}

/* A row that comes with its text keeps it: row_point_print copies it. */
TEST(print_copies_a_given_text)
{
	struct buf b;
	size_t off = 0, len = 0;
	struct row_point p = point(1.0, (struct num){NUM_INT, 5, 5.0, NULL, 0});

	buf_init(&b, 0);
	buf_puts(&b, "x");
	p.text = "[1,5,3,41]";
	p.text_len = 10;
	p.value_off = 3;
	p.value_len = 1;
	row_point_print(&b, &p, &off, &len);
	CHECK_EQ(b.len, 11);
	CHECK(!memcmp(b.data, "x[1,5,3,41]", 11));
	CHECK_EQ(off, 4);
	CHECK_EQ(len, 1);
	buf_free(&b);
}

int main(void)
{
	RUN(point_printed_once_for_every_sink);
	RUN(no_text_for_one_sink_or_an_unprintable_time);
	RUN(print_copies_a_given_text);
	return testlib_done();
}
