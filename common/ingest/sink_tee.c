/* sink_tee: fan one row stream out to several sinks (see sink_tee.h). */
#include "ingest/sink_tee.h"

#include <string.h>

void sink_tee_init(struct sink_tee *t)
{
	memset(t, 0, sizeof *t);
	buf_init(&t->text, 0);
}

void sink_tee_free(struct sink_tee *t)
{
	buf_free(&t->text);
}

int sink_tee_add(struct sink_tee *t, const struct row_sink *sink)
{
	if (t->n >= SINK_TEE_MAX)
		return -1;
	t->sinks[t->n++] = *sink;
	t->npoint += sink->point != NULL;
	return 0;
}

static int tee_event(void *ctx, int64_t profile, int64_t ordinal,
                     const struct row_event *row, struct err *e)
{
	struct sink_tee *t = ctx;
	for (size_t i = 0; i < t->n; i++) {
		const struct row_sink *s = &t->sinks[i];
		int rc = s->event ? s->event(s->ctx, profile, ordinal, row, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int tee_sample(void *ctx, int64_t profile, int64_t ordinal,
                      const struct row_sample *row, struct err *e)
{
	struct sink_tee *t = ctx;
	for (size_t i = 0; i < t->n; i++) {
		const struct row_sink *s = &t->sinks[i];
		int rc = s->sample ? s->sample(s->ctx, profile, ordinal, row, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int tee_point(void *ctx, int64_t series, int64_t ordinal,
                     const struct row_point *row, struct err *e)
{
	struct sink_tee *t = ctx;
	struct row_point printed;

	if (!row->text && t->npoint > 1) {
		/* a row that cannot be printed goes on without its text, and
		 * the sinks say what is wrong with it */
		printed = *row;
		buf_reset(&t->text);
		row_point_print(&t->text, row, &printed.value_off, &printed.value_len);
		if (!t->text.failed) {
			printed.text = t->text.data;
			printed.text_len = t->text.len;
			row = &printed;
		}
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct row_sink *s = &t->sinks[i];
		int rc = s->point ? s->point(s->ctx, series, ordinal, row, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int tee_gpu(void *ctx, int64_t profile, int64_t ordinal,
                   const struct row_gpu *row, struct err *e)
{
	struct sink_tee *t = ctx;
	for (size_t i = 0; i < t->n; i++) {
		const struct row_sink *s = &t->sinks[i];
		int rc = s->gpu ? s->gpu(s->ctx, profile, ordinal, row, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static int tee_element(void *ctx, enum evidence_collection c, int64_t ordinal,
                       const json_t *elem, struct err *e)
{
	struct sink_tee *t = ctx;
	for (size_t i = 0; i < t->n; i++) {
		const struct row_sink *s = &t->sinks[i];
		int rc = s->element ? s->element(s->ctx, c, ordinal, elem, e) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static void tee_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct sink_tee *t = ctx;
	for (size_t i = 0; i < t->n; i++)
		if (t->sinks[i].progress)
			t->sinks[i].progress(t->sinks[i].ctx, done, total);
}

void sink_tee_sink(struct sink_tee *t, struct row_sink *out)
{
	memset(out, 0, sizeof *out);
	out->ctx = t;
	out->event = tee_event;
	out->sample = tee_sample;
	out->point = tee_point;
	out->gpu = tee_gpu;
	out->progress = tee_progress;
	for (size_t i = 0; i < t->n && !out->cancel; i++)
		out->cancel = t->sinks[i].cancel;
	for (size_t i = 0; i < t->n; i++)
		if (t->sinks[i].element)
			out->element = tee_element;
}
