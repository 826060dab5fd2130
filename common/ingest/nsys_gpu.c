/* nsys_gpu: GPU activity of one export (see nsys_gpu.h). */
#include "ingest/nsys_gpu.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/strdict.h"
#include "base/vec.h"
#include "ingest/nsys_launch.h"
#include "ingest/nsys_runs.h"

enum { T_KERNEL, T_MEMCPY, T_MEMSET, T_RUNTIME, NTABLES };

static const char *const table_names[NTABLES] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
	"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME"};

/* The unified row: one output column per entry, in this order; each table
 * reads the column named here or NULL. */
enum {
	C_START, C_END, C_DEVICE, C_STREAM, C_CORR, C_PID, C_NAME, C_SHORT,
	C_BYTES, C_COPYKIND, C_GX, C_GY, C_GZ, C_BX, C_BY, C_BZ, C_REGS,
	C_SSMEM, C_DSMEM, C_GRAPH, NCOLS
};

static const char *const col_names[NCOLS] = {
	"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
	"demangledName", "shortName", "bytes", "copyKind", "gridX", "gridY",
	"gridZ", "blockX", "blockY", "blockZ", "registersPerThread",
	"staticSharedMemory", "dynamicSharedMemory", "graphNodeId"};

/* Which columns each GPU table is read for. */
static int reads(int t, int c)
{
	switch (c) {
	case C_NAME: case C_SHORT: case C_GX: case C_GY: case C_GZ:
	case C_BX: case C_BY: case C_BZ: case C_REGS: case C_SSMEM:
	case C_DSMEM:
		return t == T_KERNEL;
	case C_BYTES:
		return t != T_KERNEL;
	case C_COPYKIND:
		return t == T_MEMCPY;
	default:
		return 1;
	}
}

/* row_gpu.v[] slot of a unified column, -1 none. */
static int int_slot(int c)
{
	switch (c) {
	case C_DEVICE: return ROW_GPU_DEVICE;
	case C_STREAM: return ROW_GPU_STREAM;
	case C_CORR: return ROW_GPU_CORRELATION;
	case C_BYTES: return ROW_GPU_BYTES;
	case C_GX: return ROW_GPU_GRID_X;
	case C_GY: return ROW_GPU_GRID_Y;
	case C_GZ: return ROW_GPU_GRID_Z;
	case C_BX: return ROW_GPU_BLOCK_X;
	case C_BY: return ROW_GPU_BLOCK_Y;
	case C_BZ: return ROW_GPU_BLOCK_Z;
	case C_REGS: return ROW_GPU_REGISTERS;
	case C_SSMEM: return ROW_GPU_STATIC_SMEM;
	case C_DSMEM: return ROW_GPU_DYNAMIC_SMEM;
	case C_GRAPH: return ROW_GPU_GRAPH_NODE;
	default: return -1;
	}
}

/* The CUPTI memcpy kinds, for exports without ENUM_CUDA_MEMCPY_OPER. */
static const char *const copy_kinds[] = {
	"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA",
	"DTOD", "HTOH", "PTOP"};

/* Column c of st into *v: 1 when it is an integer (one API call, not
 * two: the row loop's cost is mostly these). */
static int col_int(sqlite3_stmt *st, int c, int64_t *v)
{
	sqlite3_value *x = sqlite3_column_value(st, c);
	*v = sqlite3_value_int64(x);
	return sqlite3_value_type(x) == SQLITE_INTEGER;
}

struct open_range {
	int64_t end, ordinal;
};

struct stack {
	struct open_range *v;
	size_t n, cap;
};

struct nsys_gpu {
	const struct nsys_export *x;
	const char *file;
	int64_t origin_ns;
	int table[NTABLES];     /* present and importable */
	int col[NTABLES][NCOLS];
	int rt_cols[4];         /* runtime: start, globalTid, correlationId, nameId */
	int linking;            /* runtime calls are being filed */
	struct nsys_runs *rt;   /* the runtime calls in (start, rowid) order */
	int rt_have;            /* rt_call is read, not filed yet */
	struct nsys_launch_call rt_call;
	int64_t rt_pid, rt_corr;
	struct nsys_launch *launch;
	struct strdict tids;    /* gtid (8 bytes) -> index in stacks */
	struct {                /* gtids asked lately, by gtid */
		int64_t gtid;
		size_t at;      /* + 1 into stacks; 0 empty */
	} recent[16];
	struct stack *stacks;
	size_t nstacks, cap;
	json_t *warnings;
};

static int sqlerr(struct nsys_gpu *g, int rc, const char *what, struct err *e)
{
	return nsys_export_sqlerr(g->x, rc, what, e);
}

static int warnf(struct nsys_gpu *g, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int warnf(struct nsys_gpu *g, struct err *e, const char *fmt, ...)
{
	char *t = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&t, fmt, ap);
	va_end(ap);
	json_t *s = n < 0 ? NULL : nsys_export_string(t, (size_t)n);
	if (n >= 0)
		free(t);
	if (!s || json_array_append_new(g->warnings, s) != 0)
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

/* Finds the tables and columns; warns about missing columns. */
static int survey(struct nsys_gpu *g, struct err *e)
{
	static const char *const rt_names[4] = {
		"start", "globalTid", "correlationId", "nameId"};
	int rc = 0;
	for (int t = 0; t < NTABLES; t++) {
		int r = nsys_export_has_table(g->x, table_names[t], &rc);
		if (r < 0)
			return sqlerr(g, rc, "listing its tables", e);
		if (!r)
			continue;
		g->table[t] = 1;
		int n = t == T_RUNTIME ? 4 : NCOLS;
		for (int c = 0; c < n; c++) {
			const char *name = t == T_RUNTIME ? rt_names[c]
			                                  : col_names[c];
			if (t != T_RUNTIME && !reads(t, c))
				continue;
			r = nsys_export_has_column(g->x, table_names[t], name,
			                           &rc);
			if (r < 0)
				return sqlerr(g, rc, "listing its columns", e);
			if (t == T_RUNTIME)
				g->rt_cols[c] = r;
			else
				g->col[t][c] = r;
			if (!r && (rc = warnf(g, e, "%s: %s has no column %s; "
			                      "it is null", g->file,
			                      table_names[t], name)) != 0)
				return rc;
		}
		if (t != T_RUNTIME && (!g->col[t][C_START] || !g->col[t][C_END])) {
			g->table[t] = 0;
			if ((rc = warnf(g, e, "%s: %s is not imported without "
			                "start and end", g->file,
			                table_names[t])) != 0)
				return rc;
		}
	}
	return 0;
}

int nsys_gpu_open(const struct nsys_export *x, const char *file,
                  int64_t origin_ns, struct nsys_gpu **out, struct err *e)
{
	struct nsys_gpu *g = calloc(1, sizeof *g);
	int rc;
	*out = NULL;
	if (!g || !(g->warnings = json_array())) {
		free(g);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	g->x = x;
	g->file = file;
	g->origin_ns = origin_ns;
	strdict_init(&g->tids);
	*out = g;
	if ((rc = survey(g, e)) != 0)
		return rc;
	if (!(g->table[T_KERNEL] || g->table[T_MEMCPY] || g->table[T_MEMSET]) ||
	    !g->table[T_RUNTIME] || !g->rt_cols[0] || !g->rt_cols[1] ||
	    !g->rt_cols[2])
		return 0;
	if ((rc = nsys_launch_open(x, &g->launch, e)) != 0 ||
	    (rc = nsys_runs_open(x, table_names[T_RUNTIME], "start", 1,
	                         g->rt_cols[3] ? "globalTid, correlationId, "
	                         "nameId" : "globalTid, correlationId, NULL",
	                         NULL, &g->rt, e)) != 0)
		return rc;
	g->linking = 1;
	return 0;
}

/* The stack of open ranges of thread gtid (created empty), NULL when out
 * of memory. */
static struct stack *stack_of(struct nsys_gpu *g, int64_t gtid, int create)
{
	int64_t k;
	size_t r = (size_t)((uint64_t)gtid * 0x9E3779B97F4A7C15u >> 60);
	if (g->recent[r].at && g->recent[r].gtid == gtid)
		return &g->stacks[g->recent[r].at - 1];
	if (strdict_get(&g->tids, &gtid, sizeof gtid, &k)) {
		g->recent[r].gtid = gtid;
		g->recent[r].at = (size_t)k + 1;
		return &g->stacks[k];
	}
	if (!create)
		return NULL;
	if (vec_reserve_zero(&g->stacks, &g->cap, g->nstacks + 1,
	                     sizeof *g->stacks) ||
	    strdict_put(&g->tids, &gtid, sizeof gtid, (int64_t)g->nstacks))
		return NULL;
	return &g->stacks[g->nstacks++];
}

/* Files the call read (rt_call) with the range open on its thread. */
static int resolve(struct nsys_gpu *g, struct err *e)
{
	struct nsys_launch_call *c = &g->rt_call;
	struct stack *s = stack_of(g, c->tid, 0);
	while (s && s->n && s->v[s->n - 1].end < c->start)
		s->n--;
	c->nvtx = s && s->n ? s->v[s->n - 1].ordinal : -1;
	return nsys_launch_file(g->launch, g->rt_pid, g->rt_corr, c, e);
}

/* Reads the next runtime call (rowid, start, globalTid, correlationId,
 * nameId) with integer start, globalTid and correlationId into rt_call:
 * 1, 0 at the end, <0 (e set). */
static int next_call(struct nsys_gpu *g, struct err *e)
{
	sqlite3_stmt *r;
	int n;
	while ((n = nsys_runs_next(g->rt, &r, e)) > 0) {
		struct nsys_launch_call *c = &g->rt_call;
		if (!col_int(r, 1, &c->start) || !col_int(r, 2, &c->tid) ||
		    !col_int(r, 3, &g->rt_corr))
			continue;
		if (!col_int(r, 4, &c->name))
			c->name = -1;
		g->rt_pid = (c->tid >> 24) & 0xFFFFFF;
		return 1;
	}
	return n;
}

/* Files every runtime call that starts before `before` (all when
 * all != 0). */
static int advance(struct nsys_gpu *g, int64_t before, int all, struct err *e)
{
	for (;;) {
		if (!g->rt_have) {
			int r = next_call(g, e);
			if (r < 0)
				return e->code;
			if (r == 0) {
				g->linking = 0;
				return 0;
			}
			g->rt_have = 1;
		}
		if (!all && g->rt_call.start >= before)
			return 0;
		int rc = resolve(g, e);
		if (rc)
			return rc;
		g->rt_have = 0;
	}
}

int nsys_gpu_range(struct nsys_gpu *g, int64_t start, int64_t end,
                   int has_tid, int64_t gtid, int64_t ordinal,
                   struct err *e)
{
	if (!g || !g->linking)
		return 0;
	int rc = advance(g, start, 0, e);
	if (rc || !has_tid || !g->linking)
		return rc;
	struct stack *s = stack_of(g, gtid, 1);
	if (!s)
		return err_set(e, ERR_NOMEM, "out of memory");
	while (s->n && s->v[s->n - 1].end < start)
		s->n--;
	if (vec_reserve(&s->v, &s->cap, s->n + 1, sizeof *s->v))
		return err_set(e, ERR_NOMEM, "out of memory");
	s->v[s->n++] = (struct open_range){end, ordinal};
	return 0;
}

/* Streaming state of the GPU rows. */
struct gstream {
	struct nsys_gpu *g;
	struct strdict names;   /* the profile's gpu.names */
	struct strdict cache;   /* tag + id -> name index */
	struct {                /* the latest answers of cache, by id */
		int64_t id, index;
		char tag;
	} recent[256];
	struct {                /* launch tids as text, by tid */
		int64_t tid;
		size_t len;     /* 0: empty */
		char text[24];
	} tids[64];
	sqlite3_stmt *string_by_id, *copy_kind;
	int64_t devices[64];
	size_t ndevices;
	uint64_t kinds[3], linked, projected;
	double max_duration;
};

/* Name index of text s[0..n) (interned). */
static int64_t intern(struct gstream *gs, const char *s, size_t n)
{
	return strdict_intern(&gs->names, s ? s : "", s ? n : 0, NULL);
}

/* The value of StringIds id, or NULL; *n its length. */
static int string_of(struct gstream *gs, sqlite3_stmt *q, int64_t id,
                     const char **s, size_t *n, struct err *e)
{
	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, id);
	int r = sqlite3_step(q);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return sqlerr(gs->g, r, "reading StringIds", e);
	*s = r == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : NULL;
	*n = *s ? (size_t)sqlite3_column_bytes(q, 0) : 0;
	return 0;
}

/* The runtime function's name without its _v<digits> suffix. */
static size_t strip_version(const char *s, size_t n)
{
	size_t k = n;
	while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
		k--;
	if (k < n && k >= 2 && s[k - 1] == 'v' && s[k - 2] == '_')
		return k - 2;
	return n;
}

/* "Memcpy HtoD" from the enum name CUDA_MEMCPY_KIND_HTOD. */
static int64_t copy_name(struct gstream *gs, const char *kind, size_t n)
{
	static const char prefix[] = "CUDA_MEMCPY_KIND_";
	struct buf b;
	buf_init(&b, 0);
	buf_puts(&b, "Memcpy ");
	if (n >= sizeof prefix - 1 && !memcmp(kind, prefix, sizeof prefix - 1)) {
		kind += sizeof prefix - 1;
		n -= sizeof prefix - 1;
	}
	const char *to = NULL;
	for (size_t i = 1; i + 2 < n + 1 && !to; i++)
		if (kind[i] == 'T' && kind[i + 1] == 'O' && i + 2 < n)
			to = kind + i;
	if (to) {
		buf_append(&b, kind, (size_t)(to - kind));
		buf_puts(&b, "to");
		buf_append(&b, to + 2, n - (size_t)(to - kind) - 2);
	} else if (n == 0 || (n == 7 && !memcmp(kind, "UNKNOWN", 7))) {
		buf_puts(&b, "Unknown");
	} else {
		buf_append(&b, kind, n);
	}
	int64_t k = b.failed ? -1 : intern(gs, b.data, b.len);
	buf_free(&b);
	return k;
}

/* Cached lookup of a name index: tag says which kind of id it is. */
static int name_of(struct gstream *gs, char tag, int64_t id, int64_t *out,
                   struct err *e)
{
	char key[9];
	size_t slot = ((size_t)id * 31u + (unsigned char)tag) & 255;
	if (gs->recent[slot].tag == tag && gs->recent[slot].id == id) {
		*out = gs->recent[slot].index;
		return 0;
	}
	key[0] = tag;
	memcpy(key + 1, &id, sizeof id);
	if (strdict_get(&gs->cache, key, sizeof key, out)) {
		gs->recent[slot].tag = tag;
		gs->recent[slot].id = id;
		gs->recent[slot].index = *out;
		return 0;
	}
	const char *s = NULL;
	size_t n = 0;
	int rc;
	if (tag == 'c') {
		if (gs->copy_kind &&
		    (rc = string_of(gs, gs->copy_kind, id, &s, &n, e)) != 0)
			return rc;
		if (!s && id >= 0 &&
		    id < (int64_t)(sizeof copy_kinds / sizeof *copy_kinds)) {
			s = copy_kinds[id];
			n = strlen(s);
		}
		*out = copy_name(gs, s ? s : "", s ? n : 0);
	} else {
		if ((rc = string_of(gs, gs->string_by_id, id, &s, &n, e)) != 0)
			return rc;
		if (tag == 'r' && !s)
			*out = -2;
		else
			*out = intern(gs, s, tag == 'r' ? strip_version(s, n) : n);
	}
	if (*out == -1 || strdict_put(&gs->cache, key, sizeof key, *out))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

/* The columns of GPU table t after start and end, in unified order
 * (C_DEVICE...): NULL for those it lacks.  A row's column for unified
 * column c is then 1 + c (column 0 is the rowid). */
static int rest_cols(struct nsys_gpu *g, int t, struct buf *q)
{
	for (int c = C_END + 1; c < NCOLS; c++) {
		const char *n = col_names[c];
		buf_puts(q, c > C_END + 1 ? ", " : "");
		if (!reads(t, c) || !g->col[t][c])
			buf_puts(q, "NULL");
		else if (c == C_PID)
			buf_printf(q, "(\"%s\" >> 24) & 16777215", n);
		else
			buf_printf(q, "\"%s\"", n);
	}
	return q->failed ? -1 : 0;
}

/* The launch fields of r from its call (pid and corr in st). */
static int link_row(struct gstream *gs, sqlite3_stmt *st, int64_t at,
                    struct row_gpu *r, char tid[32], struct err *e)
{
	struct nsys_gpu *g = gs->g;
	struct nsys_launch_call c;
	int64_t pid, corr;
	int rc;
	if (!g->launch || !col_int(st, 1 + C_PID, &pid) ||
	    !col_int(st, 1 + C_CORR, &corr))
		return 0;
	rc = nsys_launch_find(g->launch, at, pid, corr, &c, e);
	if (rc <= 0)
		return rc < 0 ? e->code : 0;
	size_t k = (size_t)((uint64_t)c.tid * 0x9E3779B97F4A7C15u >> 58);
	if (!gs->tids[k].len || gs->tids[k].tid != c.tid) {
		gs->tids[k].tid = c.tid;
		gs->tids[k].len = (size_t)snprintf(gs->tids[k].text,
		                                   sizeof gs->tids[k].text,
		                                   "%" PRId64, c.tid);
	}
	r->launch_tid_len = gs->tids[k].len;
	memcpy(tid, gs->tids[k].text, r->launch_tid_len + 1);
	r->launch_tid = tid;
	if ((rc = nsys_export_seconds(g->x, g->origin_ns, c.start,
	                              &r->launch_start, e)) != 0)
		return rc;
	if (c.name >= 0) {
		if ((rc = name_of(gs, 'r', c.name, &r->launch_name, e)) != 0)
			return rc;
		if (r->launch_name == -2)
			r->launch_name = -1;
	}
	r->nvtx = c.nvtx;
	return 0;
}

/* One selected GPU row -> row_gpu (names resolved). */
static int fill_row(struct gstream *gs, int kind, sqlite3_stmt *st,
                    struct row_gpu *r, char tid[32], struct err *e)
{
	struct nsys_gpu *g = gs->g;
	int rc;
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->source_row = sqlite3_column_int64(st, 0);
	int64_t at = sqlite3_column_int64(st, 1 + C_START);
	if ((rc = nsys_export_seconds(g->x, g->origin_ns, at, &r->start,
	                              e)) != 0 ||
	    (rc = nsys_export_seconds(g->x, g->origin_ns,
	                              sqlite3_column_int64(st, 1 + C_END),
	                              &r->end, e)) != 0)
		return rc;
	for (int c = 0; c < NCOLS; c++) {
		int slot = int_slot(c);
		if (slot < 0)
			continue;
		if (!col_int(st, 1 + c, &r->v[slot])) {
			r->v[slot] = 0;
			r->nulls |= 1u << slot;
		}
	}
	r->short_name = -1;
	if (r->kind == ROW_GPU_KERNEL) {
		int64_t n, sn;
		int has_n = col_int(st, 1 + C_NAME, &n);
		int has_s = col_int(st, 1 + C_SHORT, &sn);
		if (has_s && (rc = name_of(gs, 'k', sn, &r->short_name, e)) != 0)
			return rc;
		if (has_n) {
			if ((rc = name_of(gs, 'k', n, &r->name, e)) != 0)
				return rc;
		} else if (has_s) {
			r->name = r->short_name;
		} else if ((r->name = intern(gs, "", 0)) < 0) {
			return err_set(e, ERR_NOMEM, "out of memory");
		}
	} else if (r->kind == ROW_GPU_MEMCPY) {
		int64_t k;
		if (!col_int(st, 1 + C_COPYKIND, &k))
			k = -1;
		if ((rc = name_of(gs, 'c', k, &r->name, e)) != 0)
			return rc;
	} else if ((r->name = intern(gs, "Memset", 6)) < 0) {
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	r->launch_name = -1;
	r->nvtx = -1;
	return link_row(gs, st, at, r, tid, e);
}

/* Notes device d in the sorted device list (at most 64 kept). */
static void note_device(struct gstream *gs, const struct row_gpu *r)
{
	if (r->nulls & (1u << ROW_GPU_DEVICE))
		return;
	int64_t d = r->v[ROW_GPU_DEVICE];
	size_t i = 0;
	while (i < gs->ndevices && gs->devices[i] < d)
		i++;
	if ((i < gs->ndevices && gs->devices[i] == d) || gs->ndevices >= 64)
		return;
	memmove(gs->devices + i + 1, gs->devices + i,
	        (gs->ndevices - i) * sizeof *gs->devices);
	gs->devices[i] = d;
	gs->ndevices++;
}

/* The devices with their TARGET_INFO_GPU names. */
static json_t *devices_json(struct gstream *gs, uint64_t *invalid)
{
	sqlite3_stmt *q = NULL;
	int rc;
	json_t *a = json_array();
	if (nsys_export_has_table(gs->g->x, "TARGET_INFO_GPU", &rc) == 1 &&
	    nsys_export_has_column(gs->g->x, "TARGET_INFO_GPU", "id", &rc) == 1 &&
	    nsys_export_has_column(gs->g->x, "TARGET_INFO_GPU", "name", &rc) == 1)
		sqlite3_prepare_v2(gs->g->x->db, "SELECT name FROM TARGET_INFO_GPU "
		                   "WHERE id = ?1 AND typeof(name) = 'text' "
		                   "ORDER BY rowid LIMIT 1", -1, &q, NULL);
	for (size_t i = 0; a && i < gs->ndevices; i++) {
		json_t *name = NULL;
		if (q) {
			sqlite3_reset(q);
			sqlite3_bind_int64(q, 1, gs->devices[i]);
			if (sqlite3_step(q) == SQLITE_ROW)
				name = nsys_export_text(
					(const char *)sqlite3_column_text(q, 0),
					(size_t)sqlite3_column_bytes(q, 0), invalid);
		}
		json_t *o = json_pack("{s:I,s:o}", "id", (json_int_t)gs->devices[i],
		                      "name", name ? name : json_null());
		if (!o || json_array_append_new(a, o) != 0) {
			json_decref(a);
			a = NULL;
		}
	}
	sqlite3_finalize(q);
	return a;
}

static json_t *gpu_json(struct gstream *gs, struct nsys_gpu_out *out)
{
	json_t *names = json_array();
	for (size_t i = 0; names && i < gs->names.count; i++) {
		json_t *s = nsys_export_text(gs->names.entries[i].key,
		                           gs->names.entries[i].len,
		                           &out->invalid_text);
		if (!s || json_array_append_new(names, s) != 0) {
			json_decref(names);
			names = NULL;
		}
	}
	json_t *dev = devices_json(gs, &out->invalid_text);
	if (!names || !dev) {
		json_decref(names);
		json_decref(dev);
		return NULL;
	}
	out->names = names;
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:f,s:o}",
	                 "rows", (json_int_t)out->rows,
	                 "kernels", (json_int_t)gs->kinds[0],
	                 "memcpys", (json_int_t)gs->kinds[1],
	                 "memsets", (json_int_t)gs->kinds[2],
	                 "launch_linked", (json_int_t)gs->linked,
	                 "nvtx_projected", (json_int_t)gs->projected,
	                 "invalid", (json_int_t)out->invalid,
	                 "truncated", out->truncated,
	                 "max_duration", gs->max_duration, "devices", dev);
}

/* The GPU tables read in order: each through nsys_runs, merged here. */
struct gtables {
	struct nsys_runs *t[3];
	sqlite3_stmt *cur[3];   /* each table's next row, NULL at its end */
	int bad[3];             /* its start or end is not an integer */
	int64_t key[3][3];      /* its start, end and rowid */
};

/* Steps table k of m; <0 (e set) on failure. */
static int gt_step(struct gtables *m, int k, struct err *e)
{
	int r = nsys_runs_next(m->t[k], &m->cur[k], e);
	if (r <= 0) {
		m->cur[k] = NULL;
		return r < 0 ? -1 : 0;
	}
	sqlite3_stmt *st = m->cur[k];
	/* both keys are read, whatever the first says */
	int ok0 = col_int(st, 1, &m->key[k][0]);
	int ok1 = col_int(st, 2, &m->key[k][1]);
	m->bad[k] = !ok0 || !ok1;
	m->key[k][2] = sqlite3_column_int64(st, 0);
	return 0;
}

static int gt_open(struct nsys_gpu *g, struct gtables *m, struct err *e)
{
	for (int t = T_KERNEL; t <= T_MEMSET; t++) {
		struct buf q;
		int rc;
		if (!g->table[t])
			continue;
		buf_init(&q, 0);
		if (rest_cols(g, t, &q) != 0) {
			buf_free(&q);
			return err_set(e, ERR_NOMEM, "out of memory");
		}
		rc = nsys_runs_open(g->x, table_names[t], "start, \"end\"", 2,
		                    q.data, NULL, &m->t[t], e);
		buf_free(&q);
		if (rc || gt_step(m, t, e))
			return e->code;
	}
	return 0;
}

/* 1 when table a's row orders before table b's (start, end, kind,
 * rowid; a row without integer start and end first). */
static int before(const struct gtables *m, int a, int b)
{
	if (m->bad[a] || m->bad[b])
		return m->bad[a];
	for (int c = 0; c < 2; c++)
		if (m->key[a][c] != m->key[b][c])
			return m->key[a][c] < m->key[b][c];
	if (a != b)
		return a < b;
	return m->key[a][2] < m->key[b][2];
}

/* The table whose row comes next, -1 when all are done. */
static int gt_pick(const struct gtables *m)
{
	int k = -1;
	for (int t = 0; t < 3; t++)
		if (m->cur[t] && (k < 0 || before(m, t, k)))
			k = t;
	return k;
}

static void gt_close(struct gtables *m)
{
	for (int t = 0; t < 3; t++)
		nsys_runs_close(m->t[t]);
}

static int stream_rows(struct gstream *gs, const struct row_sink *sink,
                       int64_t profile_id, int64_t max_rows,
                       struct nsys_gpu_out *out, struct err *e)
{
	struct gtables m;
	int rc, k;
	memset(&m, 0, sizeof m);
	if ((rc = gt_open(gs->g, &m, e)) != 0)
		goto out;
	int64_t kept = 0;
	while ((k = gt_pick(&m)) >= 0) {
		sqlite3_stmt *st = m.cur[k];
		if (m.bad[k] || m.key[k][1] < m.key[k][0]) {
			out->invalid++;
		} else if (max_rows >= 0 && kept >= max_rows) {
			out->truncated = 1;
		} else {
			struct row_gpu row;
			char tid[32];
			if ((rc = fill_row(gs, k, st, &row, tid, e)) != 0)
				goto out;
			note_device(gs, &row);
			if (row.end - row.start > gs->max_duration)
				gs->max_duration = row.end - row.start;
			gs->kinds[row.kind]++;
			gs->linked += row.launch_tid != NULL;
			gs->projected += row.nvtx >= 0;
			if (sink && sink->gpu &&
			    (rc = sink->gpu(sink->ctx, profile_id, kept, &row,
			                    e)) != 0)
				goto out;
			kept++;
		}
		if (gt_step(&m, k, e)) {
			rc = e->code;
			goto out;
		}
	}
	out->rows = (uint64_t)kept;
	rc = 0;
out:
	gt_close(&m);
	return rc;
}

int nsys_gpu_stream(struct nsys_gpu *g, const struct row_sink *sink,
                    int64_t profile_id, int64_t max_rows,
                    struct nsys_gpu_out *out, struct err *e)
{
	struct gstream gs;
	int rc = 0;
	memset(out, 0, sizeof *out);
	memset(&gs, 0, sizeof gs);
	gs.g = g;
	strdict_init(&gs.names);
	strdict_init(&gs.cache);
	if (g->linking && (rc = advance(g, 0, 1, e)) != 0)
		goto out;
	if (!(g->table[T_KERNEL] || g->table[T_MEMCPY] || g->table[T_MEMSET]))
		goto done;
	if (g->launch && (rc = nsys_launch_seal(g->launch, e)) != 0)
		goto out;
	rc = sqlite3_prepare_v2(g->x->db, "SELECT value FROM StringIds WHERE "
	                        "id = ?1", -1, &gs.string_by_id, NULL);
	if (rc != SQLITE_OK) {
		rc = sqlerr(g, rc, "reading StringIds", e);
		goto out;
	}
	int have = 0;
	if (nsys_export_has_table(g->x, "ENUM_CUDA_MEMCPY_OPER", &rc) == 1 &&
	    nsys_export_has_column(g->x, "ENUM_CUDA_MEMCPY_OPER", "id", &rc) == 1 &&
	    nsys_export_has_column(g->x, "ENUM_CUDA_MEMCPY_OPER", "name", &rc) == 1)
		have = sqlite3_prepare_v2(g->x->db, "SELECT name FROM "
		                          "ENUM_CUDA_MEMCPY_OPER WHERE id = ?1 AND "
		                          "typeof(name) = 'text'", -1,
		                          &gs.copy_kind, NULL) == SQLITE_OK;
	if (!have) {
		sqlite3_finalize(gs.copy_kind);
		gs.copy_kind = NULL;
	}
	if ((rc = stream_rows(&gs, sink, profile_id, max_rows, out, e)) != 0)
		goto out;
done:
	if (out->rows && !(out->gpu = gpu_json(&gs, out))) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto out;
	}
	out->warnings = json_incref(g->warnings);
	rc = 0;
out:
	sqlite3_finalize(gs.string_by_id);
	sqlite3_finalize(gs.copy_kind);
	strdict_free(&gs.names);
	strdict_free(&gs.cache);
	if (rc) {
		json_decref(out->gpu);
		json_decref(out->names);
		out->gpu = out->names = NULL;
	}
	return rc;
}

void nsys_gpu_close(struct nsys_gpu *g)
{
	if (!g)
		return;
	nsys_runs_close(g->rt);
	nsys_launch_close(g->launch);
	for (size_t i = 0; i < g->nstacks; i++)
		free(g->stacks[i].v);
	free(g->stacks);
	strdict_free(&g->tids);
	json_decref(g->warnings);
	free(g);
}
