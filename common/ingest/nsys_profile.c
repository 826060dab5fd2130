/* nsys_profile: one export -> one streamed profile (see nsys_profile.h). */
#include "ingest/nsys_profile.h"
#include "base/utf8.h"
#include "base/cancel.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

#include "base/buf.h"
#include "base/strdict.h"
#include "ingest/nsys_gpu.h"
#include "ingest/nsys_name.h"
#include "base/vec.h"

#define ATTRIBUTION "shared worker/process/thread context; no per-request " \
                    "NVTX identity"
#define CLOCK "Nsight session UTC anchor; cross-host skew not calibrated"
#define CPU_ATTRIBUTION "process CPU samples; not request-specific CPU time"
#define CPU_EVIDENCE "COMPOSITE_EVENTS.id -> SAMPLING_CALLCHAINS.id -> " \
                     "StringIds.id"

/* State shared by the range and sample passes. */
struct pstate {
	const struct nsys_profile_in *in;
	struct strdict names;    /* name -> index (first seen) */
	struct strdict text_ids; /* textId (8 bytes) -> name index */
	struct strdict threads;  /* gtid text -> order */
	sqlite3_stmt *string_by_id;
	struct nsys_gpu *gpu;    /* the projection follows the ranges */
};

static int sqlerr(struct pstate *ps, int rc, const char *what, struct err *e)
{
	return nsys_export_sqlerr(ps->in->x, rc, what, e);
}

/* The gtid text of column c ("None" for NULL) into out[32]. */
static size_t gtid_text(sqlite3_stmt *st, int c, char out[32])
{
	if (sqlite3_column_type(st, c) == SQLITE_NULL)
		return (size_t)snprintf(out, 32, "None");
	return (size_t)snprintf(out, 32, "%" PRId64, (int64_t)sqlite3_column_int64(st, c));
}

/* The run time in seconds of a session-relative timestamp. */
static int to_seconds(struct pstate *ps, int64_t rel, double *out,
                      struct err *e)
{
	return nsys_export_seconds(ps->in->x, ps->in->origin_ns, rel, out, e);
}

/* Name index of the current range row (text, else textId, else ""). */
static int range_name(struct pstate *ps, sqlite3_stmt *st, int64_t *idx,
                      struct err *e)
{
	if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
		const char *t = (const char *)sqlite3_column_text(st, 3);
		size_t n = (size_t)sqlite3_column_bytes(st, 3);
		*idx = strdict_intern(&ps->names, t ? t : "", t ? n : 0, NULL);
	} else if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
		int64_t id = sqlite3_column_int64(st, 4);
		if (strdict_get(&ps->text_ids, &id, sizeof id, idx))
			return 0;
		sqlite3_stmt *q = ps->string_by_id;
		sqlite3_reset(q);
		sqlite3_bind_int64(q, 1, id);
		int r = sqlite3_step(q);
		if (r != SQLITE_ROW && r != SQLITE_DONE)
			return sqlerr(ps, r, "reading StringIds", e);
		const char *t = r == SQLITE_ROW ?
			(const char *)sqlite3_column_text(q, 0) : NULL;
		size_t n = t ? (size_t)sqlite3_column_bytes(q, 0) : 0;
		*idx = strdict_intern(&ps->names, t ? t : "", n, NULL);
		sqlite3_reset(q);
		if (*idx >= 0 &&
		    strdict_put(&ps->text_ids, &id, sizeof id, *idx) != 0)
			*idx = -1;
	} else {
		*idx = strdict_intern(&ps->names, "", 0, NULL);
	}
	if (*idx < 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

static int stream_ranges(struct pstate *ps, struct nsys_profile_out *out,
                         double range[2], struct err *e)
{
	const struct nsys_export *x = ps->in->x;
	char sql[256];
	sqlite3_stmt *st;
	int rc, r;

	snprintf(sql, sizeof sql, "SELECT rowid, start, end, %s, %s, %s FROM "
	         "NVTX_EVENTS ORDER BY start, end DESC, rowid",
	         x->has_text ? "text" : "NULL",
	         x->has_text_id ? "textId" : "NULL",
	         x->has_gtid ? "globalTid" : "NULL");
	rc = sqlite3_prepare_v2(x->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(ps, rc, "reading NVTX_EVENTS", e);
	int64_t kept = 0, max = ps->in->max_events;
	uint64_t stepped = 0, rows = 0;
	const struct row_sink *sink = ps->in->sink;
	if (sink && sink->progress) {
		sqlite3_stmt *q;
		if (sqlite3_prepare_v2(x->db, "SELECT max(rowid) FROM NVTX_EVENTS",
		                       -1, &q, NULL) == SQLITE_OK &&
		    sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0)
			rows = (uint64_t)sqlite3_column_int64(q, 0);
		sqlite3_finalize(q);
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (rows && (++stepped & 0xFFFF) == 0)
			sink->progress(sink->ctx, ps->in->progress_base +
			               (uint64_t)((double)ps->in->file_bytes *
			                          (double)(stepped < rows ? stepped : rows) /
			                          (double)rows),
			               ps->in->progress_total);
		int ts = sqlite3_column_type(st, 1), te = sqlite3_column_type(st, 2);
		if (te == SQLITE_NULL) {
			out->without_end++;
			continue;
		}
		out->scanned++;
		if (ts != SQLITE_INTEGER || te != SQLITE_INTEGER) {
			if (ts == SQLITE_NULL) {
				out->invalid++;
				continue;
			}
			rc = err_set(e, ERR_DATA, "%s: NVTX_EVENTS row %" PRId64
			             ": start and end must be integers",
			             x->display, (int64_t)sqlite3_column_int64(st, 0));
			goto out;
		}
		int64_t s = sqlite3_column_int64(st, 1);
		int64_t en = sqlite3_column_int64(st, 2);
		if (en < s || s < x->cap_start || en > x->cap_stop) {
			out->invalid++;
			continue;
		}
		if (max >= 0 && kept >= max) {
			out->truncated = 1;
			continue;
		}
		struct row_event ev;
		char tid[32];
		if ((rc = to_seconds(ps, s, &ev.start, e)) != 0 ||
		    (rc = to_seconds(ps, en, &ev.end, e)) != 0 ||
		    (rc = range_name(ps, st, &ev.name, e)) != 0)
			goto out;
		if ((rc = nsys_gpu_range(ps->gpu, s, en,
		                         sqlite3_column_type(st, 5) == SQLITE_INTEGER,
		                         sqlite3_column_int64(st, 5), kept, e)) != 0)
			goto out;
		ev.tid_len = gtid_text(st, 5, tid);
		ev.tid = tid;
		ev.source_row = sqlite3_column_int64(st, 0);
		if (strdict_intern(&ps->threads, tid, ev.tid_len, NULL) < 0) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
		if (kept == 0) {
			range[0] = ev.start;
			range[1] = ev.end;
		} else if (ev.end > range[1]) {
			range[1] = ev.end;
		}
		if (ps->in->sink && ps->in->sink->event &&
		    (rc = ps->in->sink->event(ps->in->sink->ctx,
		                              ps->in->profile_id, kept, &ev,
		                              e)) != 0)
			goto out;
		kept++;
	}
	if (r != SQLITE_DONE) {
		rc = sqlerr(ps, r, "reading NVTX_EVENTS", e);
		goto out;
	}
	out->events = (uint64_t)kept;
	rc = 0;
out:
	sqlite3_finalize(st);
	return rc;
}

/* CPU-sample pass state. */
struct cpu {
	struct strdict names, stacks;
	int64_t *frames;
	size_t nframes, cap;
	int64_t pid;       /* -1 unknown yet, -2 mixed or none */
	uint64_t count;
};

static int push_frame(struct cpu *c, int64_t idx)
{
	if (vec_reserve(&c->frames, &c->cap, c->nframes + 1, sizeof *c->frames))
		return -1;
	c->frames[c->nframes++] = idx;
	return 0;
}

static int emit_sample(struct pstate *ps, struct cpu *c, int64_t id,
                       int64_t start, int null_tid, int64_t gtid,
                       struct err *e)
{
	struct row_sample sm;
	char tid[32];
	int rc;
	int64_t stack = strdict_intern(&c->stacks, c->frames,
	                                 c->nframes * sizeof *c->frames, NULL);
	if (stack < 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	if ((rc = to_seconds(ps, start, &sm.time, e)) != 0)
		return rc;
	sm.tid_len = null_tid ? (size_t)snprintf(tid, sizeof tid, "None")
	                      : (size_t)snprintf(tid, sizeof tid, "%" PRId64,
	                                         gtid);
	sm.tid = tid;
	sm.stack = stack;
	sm.source_row = id;
	int64_t pid = null_tid ? -2 : (gtid >> 24) & 0xFFFFFF;
	if (c->pid == -1)
		c->pid = pid;
	else if (c->pid != pid)
		c->pid = -2;
	if (strdict_intern(&ps->threads, tid, sm.tid_len, NULL) < 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (ps->in->sink && ps->in->sink->sample &&
	    (rc = ps->in->sink->sample(ps->in->sink->ctx, ps->in->profile_id,
	                               (int64_t)c->count, &sm, e)) != 0)
		return rc;
	c->count++;
	return 0;
}

static int stream_samples(struct pstate *ps, struct cpu *c, struct err *e)
{
	sqlite3_stmt *st;
	int rc, r, have = 0, null_tid = 0;
	int64_t cur = 0, start = 0, gtid = 0;
	struct buf name;

	rc = sqlite3_prepare_v2(ps->in->x->db,
		"SELECT c.id, c.start, c.globalTid, s.stackDepth, s.unresolved, "
		"v.value FROM COMPOSITE_EVENTS c "
		"LEFT JOIN SAMPLING_CALLCHAINS s ON s.id = c.id "
		"LEFT JOIN StringIds v ON v.id = s.symbol "
		"WHERE typeof(c.start) = 'integer' "
		"ORDER BY c.start, c.id, s.stackDepth", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return sqlerr(ps, rc, "reading COMPOSITE_EVENTS", e);
	buf_init(&name, 0);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		if (!have || id != cur) {
			if (have && (rc = emit_sample(ps, c, cur, start, null_tid,
			                              gtid, e)) != 0)
				goto out;
			have = 1;
			cur = id;
			start = sqlite3_column_int64(st, 1);
			null_tid = sqlite3_column_type(st, 2) == SQLITE_NULL;
			gtid = sqlite3_column_int64(st, 2);
			c->nframes = 0;
		}
		if (sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue; /* a sample without a call chain */
		buf_reset(&name);
		if (sqlite3_column_int64(st, 4) != 0)
			buf_puts(&name, "[unresolved] ");
		if (sqlite3_column_type(st, 5) == SQLITE_NULL)
			buf_puts(&name, "[unknown symbol]");
		else
			buf_append(&name, sqlite3_column_text(st, 5),
			           (size_t)sqlite3_column_bytes(st, 5));
		int64_t idx = name.failed ? -1 :
			strdict_intern(&c->names, name.data ? name.data : "",
			                 name.len, NULL);
		if (idx < 0 || push_frame(c, idx) != 0) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
	}
	if (r != SQLITE_DONE) {
		rc = sqlerr(ps, r, "reading CPU samples", e);
		goto out;
	}
	if (have && (rc = emit_sample(ps, c, cur, start, null_tid, gtid, e)) != 0)
		goto out;
	rc = 0;
out:
	buf_free(&name);
	sqlite3_finalize(st);
	return rc;
}

/* Appends s to array a, or fails. */
static int add(json_t *a, json_t *v)
{
	return v ? json_array_append_new(a, v) : -1;
}

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static json_t *dict_strings(const struct strdict *d, uint64_t *invalid)
{
	json_t *a = json_array();
	for (size_t i = 0; a && i < d->count; i++)
		if (add(a, nsys_export_text(d->entries[i].key,
		                          d->entries[i].len, invalid)) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The threads array, with names from ThreadNames. */
static int build_threads(struct pstate *ps, json_t **out, uint64_t *invalid,
                         struct err *e)
{
	struct strdict byid, tnames;
	json_t *a = json_array();
	int rc = 0;

	strdict_init(&byid);
	strdict_init(&tnames);
	if (!a)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (ps->in->x->has_thread_names && ps->threads.count) {
		sqlite3_stmt *st;
		int r;
		rc = sqlite3_prepare_v2(ps->in->x->db,
			"SELECT t.globalTid, v.value FROM ThreadNames t "
			"JOIN StringIds v ON v.id = t.nameId "
			"WHERE t.globalTid IS NOT NULL ORDER BY t.rowid",
			-1, &st, NULL);
		if (rc != SQLITE_OK) {
			rc = sqlerr(ps, rc, "reading ThreadNames", e);
			goto out;
		}
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			char tid[32];
			size_t n = gtid_text(st, 0, tid);
			const char *v = (const char *)sqlite3_column_text(st, 1);
			int64_t k = strdict_intern(&tnames, v ? v : "",
				v ? (size_t)sqlite3_column_bytes(st, 1) : 0, NULL);
			if (k < 0 || strdict_put(&byid, tid, n, k) != 0) {
				r = SQLITE_NOMEM;
				break;
			}
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE) {
			rc = sqlerr(ps, r, "reading ThreadNames", e);
			goto out;
		}
	}
	for (size_t i = 0; i < ps->threads.count; i++) {
		const struct strdict_entry *t = &ps->threads.entries[i];
		json_t *o = json_object();
		int64_t k;
		char *end;
		int failed = !o || add(a, o) != 0;
		if (!failed && strcmp(t->key, "None") != 0) {
			int64_t g = strtoll(t->key, &end, 10);
			failed |= set(o, "global_tid", json_string(t->key)) ||
			          set(o, "pid", json_integer((g >> 24) & 0xFFFFFF)) ||
			          set(o, "tid", json_integer(g & 0xFFFFFF));
		} else if (!failed) {
			failed |= set(o, "global_tid", json_string("None")) ||
			          set(o, "pid", json_null()) ||
			          set(o, "tid", json_null());
		}
		if (!failed)
			failed |= set(o, "name",
				strdict_get(&byid, t->key, t->len, &k) ?
				nsys_export_text(tnames.entries[k].key,
				               tnames.entries[k].len, invalid) :
				json_null());
		if (failed) {
			rc = err_set(e, ERR_NOMEM, "out of memory");
			goto out;
		}
	}
out:
	strdict_free(&byid);
	strdict_free(&tnames);
	if (rc)
		json_decref(a);
	else
		*out = a;
	return rc;
}

static json_t *cpu_object(struct cpu *c, uint64_t *invalid)
{
	json_t *o = json_object(), *stacks = json_array();
	if (!o || !stacks)
		goto fail;
	for (size_t i = 0; i < c->stacks.count; i++) {
		const struct strdict_entry *s = &c->stacks.entries[i];
		json_t *fr = json_array();
		if (add(stacks, fr) != 0)
			goto fail;
		for (size_t k = 0; k < s->len / sizeof(int64_t); k++) {
			int64_t v;
			memcpy(&v, s->key + k * sizeof v, sizeof v);
			if (add(fr, json_integer(v)) != 0)
				goto fail;
		}
	}
	if (set(o, "pid", c->pid >= 0 ? json_integer(c->pid) : json_null()) ||
	    set(o, "names", dict_strings(&c->names, invalid)) ||
	    set(o, "stacks", stacks) ||
	    set(o, "samples", json_array()) ||
	    set(o, "sample_count", json_integer((json_int_t)c->count)) ||
	    set(o, "attribution", json_string(CPU_ATTRIBUTION)) ||
	    set(o, "evidence", json_string(CPU_EVIDENCE))) {
		stacks = NULL;
		goto fail;
	}
	return o;
fail:
	json_decref(stacks);
	json_decref(o);
	return NULL;
}

static json_t *i64_string(int64_t v)
{
	char t[32];
	snprintf(t, sizeof t, "%" PRId64, v);
	return json_string(t);
}

static json_t *pair(double a, double b)
{
	return json_pack("[ff]", a, b);
}

/* Assembles the profile object once both passes are done. */
static int build_profile(struct pstate *ps, struct nsys_profile_out *out,
                         const double range[2], struct cpu *cpu,
                         json_t *gpu, json_t *gpu_names, struct err *e)
{
	const struct nsys_profile_in *in = ps->in;
	const struct nsys_export *x = in->x;
	struct nsys_name nm;
	double c0 = 0, c1 = 0;
	json_t *threads = NULL, *p;
	int rc;

	nsys_name_parse(in->file, &nm);
	if ((rc = to_seconds(ps, x->cap_start, &c0, e)) != 0 ||
	    (rc = to_seconds(ps, x->cap_stop, &c1, e)) != 0 ||
	    (rc = build_threads(ps, &threads, &out->invalid_text, e)) != 0)
		return rc;
	const char *host = x->hostname ? x->hostname :
	                   nm.mapped ? nm.host : NULL;
	const char *host_source = x->hostname ? "Nsight environment" :
	                          nm.mapped ? "filename" : "unknown";
	p = json_object();
	if (!p ||
	    set(p, "id", json_integer(in->profile_id)) ||
	    set(p, "worker", nsys_export_string(nm.worker, strlen(nm.worker))) ||
	    set(p, "rank", nm.has_rank ? json_integer(nm.rank) : json_null()) ||
	    set(p, "engine", nm.has_engine ? json_integer(nm.engine)
	                                   : json_null()) ||
	    set(p, "gpus", nm.gpus[0] ? json_string(nm.gpus) : json_null()) ||
	    set(p, "host", host ? nsys_export_text(host, strlen(host), &out->invalid_text)
	                        : json_null()) ||
	    set(p, "host_source", json_string(host_source)) ||
	    set(p, "file", nsys_export_string(in->file, strlen(in->file))) ||
	    set(p, "evidence_source", json_integer(in->source_id)) ||
	    set(p, "epoch_ns", i64_string(x->epoch_ns)) ||
	    set(p, "system_clock_ns", x->has_sysclock ?
	                              i64_string(x->sysclock_ns) : json_null()) ||
	    set(p, "capture", pair(c0, c1)) ||
	    set(p, "invalid_or_boundary_ranges",
	        json_integer((json_int_t)out->invalid)) ||
	    set(p, "timed_ranges_scanned",
	        json_integer((json_int_t)out->scanned)) ||
	    set(p, "names", dict_strings(&ps->names, &out->invalid_text)) ||
	    set(p, "name_definitions", json_array()) ||
	    set(p, "threads", threads) ||
	    set(p, "imported_range", out->events ? pair(range[0], range[1])
	                                         : json_null()) ||
	    set(p, "events", json_array()) ||
	    set(p, "event_count", json_integer((json_int_t)out->events)) ||
	    set(p, "truncated", json_boolean(out->truncated)) ||
	    set(p, "cuda", json_boolean(x->cuda)) ||
	    set(p, "attribution", json_string(ATTRIBUTION)) ||
	    set(p, "clock", json_string(CLOCK)) ||
	    set(p, "cpu", cpu && cpu->count ? cpu_object(cpu, &out->invalid_text) : json_null()) ||
	    (gpu && json_object_set(p, "gpu", gpu) != 0) ||
	    (gpu && json_object_set(p, "gpu_names", gpu_names) != 0)) {
		json_decref(p);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	out->profile = p;
	return 0;
}

int nsys_profile_import(const struct nsys_profile_in *in,
                        struct nsys_profile_out *out, struct err *e)
{
	struct pstate ps;
	struct cpu cpu;
	struct nsys_gpu_out gout;
	double range[2] = {0, 0};
	int rc;

	memset(&gout, 0, sizeof gout);
	memset(out, 0, sizeof *out);
	memset(&ps, 0, sizeof ps);
	memset(&cpu, 0, sizeof cpu);
	ps.in = in;
	cpu.pid = -1;
	if (in->sink)
		cancel_sqlite(in->x->db, in->sink->cancel);
	strdict_init(&ps.names);
	strdict_init(&ps.text_ids);
	strdict_init(&ps.threads);
	strdict_init(&cpu.names);
	strdict_init(&cpu.stacks);
	rc = sqlite3_prepare_v2(in->x->db, "SELECT value FROM StringIds "
	                        "WHERE id = ?1", -1, &ps.string_by_id, NULL);
	if (rc != SQLITE_OK) {
		rc = sqlerr(&ps, rc, "reading StringIds", e);
		goto out;
	}
	if ((rc = nsys_gpu_open(in->x, in->file, in->origin_ns, &ps.gpu, e)) != 0 ||
	    (rc = stream_ranges(&ps, out, range, e)) != 0)
		goto out;
	if (in->x->has_samples && (rc = stream_samples(&ps, &cpu, e)) != 0)
		goto out;
	out->samples = cpu.count;
	if ((rc = nsys_gpu_stream(ps.gpu, in->sink, in->profile_id,
	                          in->max_events, &gout, e)) != 0)
		goto out;
	out->gpu_rows = gout.rows;
	out->gpu_invalid = gout.invalid;
	out->gpu_truncated = gout.truncated;
	out->invalid_text += gout.invalid_text;
	out->gpu_warnings = gout.warnings;
	gout.warnings = NULL;
	rc = build_profile(&ps, out, range, in->x->has_samples ? &cpu : NULL,
	                   gout.gpu, gout.names, e);
out:
	json_decref(gout.gpu);
	json_decref(gout.names);
	json_decref(gout.warnings);
	nsys_gpu_close(ps.gpu);
	if (rc) {
		json_decref(out->gpu_warnings);
		out->gpu_warnings = NULL;
	}
	sqlite3_finalize(ps.string_by_id);
	strdict_free(&ps.names);
	strdict_free(&ps.text_ids);
	strdict_free(&ps.threads);
	strdict_free(&cpu.names);
	strdict_free(&cpu.stacks);
	free(cpu.frames);
	return rc;
}
