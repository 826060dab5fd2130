/*
 * html: index.html assembly from the embedded viewer + core catalog (see
 * html.h).
 *
 * Contract with the viewer (web/README.md "Assembly contract"; keep both in
 * step):
 *
 *   Template: web/index.html is the page; html_write copies it, replacing
 *     <!--dsight:css-->   by <style> + every web/NAME.css (in table order:
 *                         the Makefile's WEB_FILES), joined with "\n"
 *                         + </style>
 *     <!--dsight:data-->  by the data elements below (required, once)
 *     <!--dsight:js-->    by <script> + every web/NAME.js (in table order,
 *                         base.js first), joined with "\n;\n" + </script>
 *   Any other <!--dsight:...--> marker, a repeated marker, or an asset
 *   containing "</script" or "</style" (any case) fails the build.
 *
 *   Data elements (never executed: type application/octet-stream):
 *     <script type="application/octet-stream" id="dsight-catalog">BASE64</script>
 *         the core catalog JSON (pure ASCII: other characters as \u
 *         escapes), gzip-compressed, base64 (no line breaks).
 *     <script type="application/octet-stream" id="dsight-catalog-index">BASE64</script>
 *         sharded catalogs only: the descriptor lists of catalog_shards
 *         (shards, lookup, summaries, time_summaries, search), encoded the
 *         same way; the
 *         core catalog's catalog_shards then lacks them.  The viewer
 *         decodes this element after the page is ready.
 *     <script type="application/octet-stream" id="dsight-shard-SHA">BASE64</script>
 *         single-file only: one per distinct shard, SHA = the descriptor's
 *         sha256; BASE64 encodes exactly the bytes of detail/SHA.json.gz.
 *   The core catalog's delivery.kind is "static", or "embedded" in a
 *   single-file page (there is no detail/ directory then).
 */
#include "report/html.h"
#include "base/gz.h"
#include "store/store_ext.h"
#include "base/hash.h"
#include "base/jsonout.h"
#include "base/utf8.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- core catalog ------------------------------------------------------ */

static json_t *density_json(const uint64_t *bins)
{
	json_t *a = json_array();
	for (int i = 0; i < SHARD_DENSITY_BINS; i++)
		json_array_append_new(a, json_integer(bins ? (json_int_t)bins[i] : 0));
	return a;
}

struct decorate {
	const struct shard_writer *w;
	const uint64_t *density;
	size_t nprofiles;
};

/* Adds a profile's event_chunks, event_density, cpu.chunks and, with GPU
 * rows, gpu_chunks to c. */
static void decorate_profile(json_t *c, const json_t *p, size_t i,
                             const struct decorate *d)
{
	json_t *cpu = json_object_get(p, "cpu");

	json_object_set_new(c, "event_chunks",
	                    shard_writer_descs_json(d->w, SHARD_EVENTS, (int64_t)i));
	if (json_is_object(json_object_get(p, "gpu")))
		json_object_set_new(c, "gpu_chunks",
		                    shard_writer_descs_json(d->w, SHARD_GPU, (int64_t)i));
	json_object_set_new(c, "event_density",
	                    density_json(d->density && i < d->nprofiles
	                                 ? d->density + i * SHARD_DENSITY_BINS
	                                 : NULL));
	if (json_is_object(cpu)) {
		json_t *cc = json_copy(cpu);
		json_object_set_new(cc, "chunks",
		                    shard_writer_descs_json(d->w, SHARD_SAMPLES, (int64_t)i));
		json_object_set_new(c, "cpu", cc);
	}
}

/* Adds a series' chunks to c. */
static void decorate_series(json_t *c, const json_t *s, size_t i,
                            const struct decorate *d)
{
	(void)s;
	json_object_set_new(c, "chunks",
	                    shard_writer_descs_json(d->w, SHARD_POINTS, (int64_t)i));
}

/* root[key] = a copy of catalog[key] (when an array) whose objects are
 * shallow copies decorated by f.  ERR_DATA when an element is no object. */
static int decorate_each(json_t *root, const json_t *catalog, const char *key,
                         void (*f)(json_t *, const json_t *, size_t,
                                   const struct decorate *),
                         const struct decorate *d, struct err *e)
{
	const json_t *arr = json_object_get(catalog, key);
	json_t *out;

	if (!json_is_array(arr))
		return 0;
	out = json_array();
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *el = json_array_get(arr, i), *c;
		if (!json_is_object(el)) {
			json_decref(out);
			return err_set(e, ERR_DATA, "%s[%zu] is not an object", key, i);
		}
		c = json_copy(el);
		f(c, el, i, d);
		json_array_append_new(out, c);
	}
	json_object_set_new(root, key, out);
	return 0;
}

json_t *html_core_catalog(const json_t *catalog, const struct shard_writer *w,
                          const uint64_t *density, size_t nprofiles,
                          int embedded, struct err *e)
{
	struct decorate d = {w, density, nprofiles};
	json_t *root, *delivery;

	if (!json_is_object(catalog)) {
		err_set(e, ERR_DATA, "The catalog is not an object");
		return NULL;
	}
	root = json_copy((json_t *)catalog);
	if (!root)
		goto nomem;
	if (decorate_each(root, catalog, "profiles", decorate_profile, &d, e) ||
	    decorate_each(root, catalog, "metrics", decorate_series, &d, e)) {
		json_decref(root);
		return NULL;
	}

	delivery = json_object();
	json_object_set_new(delivery, "version", json_integer(1));
	json_object_set_new(delivery, "kind", json_string(embedded ? "embedded" : "static"));
	json_object_set_new(delivery, "cache_bytes", json_integer(HTML_CACHE_BYTES));
	if (json_object_set_new(root, "delivery", delivery) != 0)
		goto nomem;
	return root;
nomem:
	json_decref(root);
	err_set(e, ERR_NOMEM, "Out of memory building the core catalog");
	return NULL;
}

/* ---- assets ------------------------------------------------------------ */

static const char *find_ci(const unsigned char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (strncasecmp((const char *)p + i, needle, k) == 0)
			return (const char *)p + i;
	return NULL;
}

int html_check_assets(const struct html_asset *assets, size_t n, struct err *e)
{
	static const char *bad[] = {"</script", "</style"};

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < 2; k++)
			if (find_ci(assets[i].data, assets[i].len, bad[k]))
				return err_set(e, ERR_DATA,
				               "Viewer asset %s contains \"%s\", which would end "
				               "its inlined element early; rebuild the viewer "
				               "without it", assets[i].name, bad[k]);
	return 0;
}

static const struct html_asset *asset_get(const struct html_asset *assets,
                                          size_t n, const char *name, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(assets[i].name) == len &&
		    memcmp(assets[i].name, name, len) == 0)
			return &assets[i];
	return NULL;
}

/* ---- output with a running SHA-256 ------------------------------------- */

struct out {
	const struct html_asset *assets; /* the viewer files */
	const char *coll_db; /* the store holding streamed collections, or NULL */
	size_t nassets;
	FILE *f;
	struct hash_sha256 md;
	uint64_t bytes;
	int failed;
};

static void out_write(struct out *o, const void *p, size_t n)
{
	if (o->failed || n == 0)
		return;
	if (fwrite(p, 1, n, o->f) != n) {
		o->failed = 1;
		return;
	}
	hash_sha256_update(&o->md, p, n);
	o->bytes += n;
}

static void out_puts(struct out *o, const char *s)
{
	out_write(o, s, strlen(s));
}

/* Writes base64 of n bytes (streaming: n may be any size). */
static void out_base64(struct out *o, const unsigned char *p, size_t n)
{
	unsigned char enc[4 * 1024 + 4];
	while (n > 0) {
		size_t k = n > 3 * 1024 ? 3 * 1024 : n;
		int m = EVP_EncodeBlock(enc, p, (int)k);
		out_write(o, enc, (size_t)m);
		p += k;
		n -= k;
	}
}

static uint64_t b64_len(uint64_t n)
{
	return (n + 2) / 3 * 4;
}

/* ---- data elements ----------------------------------------------------- */

static void collect_shas(const json_t *chunks, json_t *set)
{
	size_t i;
	json_t *d;
	json_array_foreach(chunks, i, d) {
		const char *sha = json_string_value(json_object_get(d, "sha256"));
		if (sha)
			json_object_set_new(set, sha, json_integer(
				json_integer_value(json_object_get(d, "bytes"))));
	}
}

/* A profile's nvtx_summary shards (doc/report-files.md). */
static void collect_summary_shas(const json_t *ns, json_t *set)
{
	json_t *lv;
	size_t i;

	json_array_foreach(json_object_get(ns, "levels"), i, lv)
		collect_shas(json_object_get(lv, "chunks"), set);
	collect_shas(json_object_get(ns, "names"), set);
}

/* Every distinct shard of the core catalog: sha -> bytes. */
static json_t *shard_set(const json_t *core)
{
	json_t *set = json_object(), *v;
	size_t i;

	json_array_foreach(json_object_get(core, "profiles"), i, v) {
		collect_shas(json_object_get(v, "event_chunks"), set);
		collect_shas(json_object_get(json_object_get(v, "cpu"), "chunks"), set);
		collect_summary_shas(json_object_get(v, "nvtx_summary"), set);
		collect_shas(json_object_get(v, "gpu_chunks"), set);
		collect_summary_shas(json_object_get(v, "gpu_summary"), set);
		collect_shas(json_object_get(json_object_get(v, "gpu_summary"), "bins"), set);
		collect_shas(json_object_get(json_object_get(v, "cpu"), "stack_sums"), set);
	}
	json_array_foreach(json_object_get(core, "metrics"), i, v)
		collect_shas(json_object_get(v, "chunks"), set);
	collect_shas(json_object_get(json_object_get(core, "metric_summary"), "chunks"), set);
	json_array_foreach(json_object_get(json_object_get(json_object_get(core, "metric_summary"),
	                                                   "fine"), "groups"), i, v)
		collect_shas(v, set);
	return set;
}

static int embed_shard(struct out *o, const char *dir, const char *sha,
                       uint64_t bytes, struct err *e)
{
	char path[4096];
	unsigned char blk[3 * 4096];
	uint64_t total = 0;
	size_t n;
	FILE *f;

	if (strlen(sha) != 64 || strspn(sha, "0123456789abcdef") != 64)
		return err_set(e, ERR_DATA, "Malformed shard name in the catalog: %s", sha);
	snprintf(path, sizeof path, "%s/%s.json.gz", dir, sha);
	f = fopen(path, "rb");
	if (!f)
		return err_sys(e, ERR_DATA, "Cannot open shard %s", path);
	out_puts(o, "<script type=\"application/octet-stream\" id=\"dsight-shard-");
	out_puts(o, sha);
	out_puts(o, "\">");
	while ((n = fread(blk, 1, sizeof blk, f)) > 0) {
		out_base64(o, blk, n);
		total += n;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return err_sys(e, ERR_DATA, "Cannot read shard %s", path);
	if (total != bytes)
		return err_set(e, ERR_DATA, "Shard %s has %llu bytes, expected %llu",
		               path, (unsigned long long)total, (unsigned long long)bytes);
	out_puts(o, "</script>\n");
	return 0;
}

/* The catalog text streamed through gzip (base/gz) and base64 (3-byte
 * carry, so the text is that of the whole stream). */
struct gzb64 {
	struct out *o;
	struct gz z;
	unsigned char carry[3];
	size_t ncarry;
	uint64_t gzbytes;
};

static int b64_feed(void *ctx, const unsigned char *p, size_t n, struct err *e)
{
	struct gzb64 *g = ctx;
	(void)e;
	g->gzbytes += n;
	while (n > 0 && g->ncarry > 0 && g->ncarry < 3) {
		g->carry[g->ncarry++] = *p++;
		n--;
	}
	if (g->ncarry == 3) {
		out_base64(g->o, g->carry, 3);
		g->ncarry = 0;
	}
	size_t whole = n / 3 * 3;
	out_base64(g->o, p, whole);
	memcpy(g->carry, p + whole, n - whole);
	g->ncarry = n - whole;
	return 0;
}

struct gz_ctx {
	struct gzb64 *g;
	struct err *e;
	unsigned char part[4]; /* a character split between two writes */
	size_t npart;
};

static int gz_ascii(struct gz_ctx *c, const char *data, size_t n)
{
	return gz_stream(&c->g->z, data, n, 0, b64_feed, c->g, "the catalog", c->e);
}

/* One character of n bytes (>= 2) as JSON \u escapes (a surrogate pair
 * above U+FFFF). */
static int gz_escape(struct gz_ctx *c, const unsigned char *p, size_t n)
{
	unsigned long cp = utf8_decode(p, n);
	char esc[13];
	int len;
	if (cp >= 0x10000) {
		cp -= 0x10000;
		len = snprintf(esc, sizeof esc, "\\u%04lx\\u%04lx", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
	} else {
		len = snprintf(esc, sizeof esc, "\\u%04lx", cp);
	}
	return gz_ascii(c, esc, (size_t)len);
}

/* The catalog text with every non-ASCII character written as a JSON \u
 * escape (inside strings, the only place JSON has them): the same value
 * as pure ASCII, which a browser decodes and parses faster.  The text is
 * valid UTF-8 (jansson's); a character may be split between two writes. */
static int gz_out(void *ctx, const char *data, size_t n)
{
	struct gz_ctx *c = ctx;
	const unsigned char *p = (const unsigned char *)data;
	size_t i = 0, run = 0;
	int rc;

	while (c->npart && i < n) {
		c->part[c->npart++] = p[i++];
		if (c->npart == utf8_lead_len(c->part[0])) {
			if ((rc = gz_escape(c, c->part, c->npart)))
				return rc;
			c->npart = 0;
		}
	}
	run = i;
	while (i < n) {
		size_t k = utf8_lead_len(p[i]);
		if (k <= 1) { /* ASCII (jansson's text is valid UTF-8) */
			i++;
			continue;
		}
		if (i > run && (rc = gz_ascii(c, data + run, i - run)))
			return rc;
		if (i + k > n) {
			memcpy(c->part, p + i, n - i);
			c->npart = n - i;
			return 0;
		}
		if ((rc = gz_escape(c, p + i, k)))
			return rc;
		i += k;
		run = i;
	}
	return i > run ? gz_ascii(c, data + run, i - run) : 0;
}

/* Writes one data element: <script ... id="ID">, the JSON of value (with
 * the collections in `from_db` streamed from db, see
 * store_ext_emit_catalog) as pure ASCII, gzip, base64, then </script>.
 * *b64_bytes: the length of the base64 text. */
static int write_gz_element(struct out *o, const char *id, sqlite3 *db,
                            const json_t *value, unsigned from_db,
                            uint64_t *b64_bytes, struct err *e)
{
	struct gzb64 g;
	struct gz_ctx c = {&g, e, {0}, 0};
	int rc;

	memset(&g, 0, sizeof g);
	g.o = o;
	gz_init(&g.z, 9);
	out_puts(o, "<script type=\"application/octet-stream\" id=\"");
	out_puts(o, id);
	out_puts(o, "\">");
	rc = store_ext_emit_catalog(db, value, from_db, NULL, gz_out, &c, e);
	if (!rc)
		rc = gz_stream(&g.z, NULL, 0, 1, b64_feed, &g, "the catalog", e);
	gz_free(&g.z);
	if (rc)
		return rc;
	if (g.ncarry)
		out_base64(o, g.carry, g.ncarry);
	out_puts(o, "</script>\n");
	*b64_bytes = b64_len(g.gzbytes);
	return 0;
}

/* The descriptor lists of a sharded catalog's index, which the page
 * carries in their own element (decoded after the page is ready). */
static const char *const index_lists[] = {"shards", "lookup", "summaries",
                                          "time_summaries", "search"};

/*
 * Splits core for the page: *head is core without the index's descriptor
 * lists, *lists an object holding them (NULL when core has no catalog
 * index).  Both are new trees sharing core's values; the caller decrefs
 * them.  Returns ERR_NOMEM when memory runs out.
 */
static int split_index(const json_t *core, json_t **head, json_t **lists,
                       struct err *e)
{
	json_t *ix = json_object_get(core, "catalog_shards"), *ixh;

	*head = NULL;
	*lists = NULL;
	if (!json_is_object(ix) || !json_object_get(ix, "shards"))
		return 0;
	*head = json_copy((json_t *)core);
	ixh = json_copy(ix);
	*lists = json_object();
	if (!*head || !ixh || !*lists)
		goto nomem;
	for (size_t k = 0; k < sizeof index_lists / sizeof index_lists[0]; k++) {
		json_t *v = json_object_get(ix, index_lists[k]);
		if (!v)
			continue;
		if (json_object_set(*lists, index_lists[k], v))
			goto nomem;
		json_object_del(ixh, index_lists[k]);
	}
	if (json_object_set_new(*head, "catalog_shards", ixh) == 0)
		return 0;
	ixh = NULL;
nomem:
	json_decref(ixh);
	json_decref(*head);
	json_decref(*lists);
	*head = *lists = NULL;
	return err_set(e, ERR_NOMEM, "Out of memory for the catalog index");
}

static int write_data(struct out *o, const json_t *core, const char *shard_dir,
                      struct html_stats *st, struct err *e)
{
	sqlite3 *db = NULL;
	json_t *head = NULL, *lists = NULL;
	unsigned mask = 0;
	uint64_t n = 0;
	int rc;

	if (o->coll_db && (rc = store_ext_open_collections(o->coll_db, &db, &mask, e)))
		return rc;
	if (!(rc = split_index(core, &head, &lists, e)))
		rc = write_gz_element(o, "dsight-catalog", db, head ? head : core,
		                      mask, &st->catalog_bytes, e);
	if (!rc && lists && !(rc = write_gz_element(o, "dsight-catalog-index",
	                                             NULL, lists, 0, &n, e)))
		st->catalog_bytes += n;
	json_decref(head);
	json_decref(lists);
	sqlite3_close(db);
	if (rc)
		return rc;

	if (!shard_dir)
		return 0;
	json_t *set = shard_set(core), *v;
	const char *sha;
	json_object_foreach(set, sha, v) {
		uint64_t before = o->bytes;
		if ((rc = embed_shard(o, shard_dir, sha,
		                      (uint64_t)json_integer_value(v), e)))
			break;
		st->embedded_bytes += o->bytes - before;
		st->shards++;
	}
	json_decref(set);
	return rc;
}

/* ---- template ---------------------------------------------------------- */

static int has_suffix(const char *name, const char *suf)
{
	size_t n = strlen(name), k = strlen(suf);
	return n >= k && strcmp(name + n - k, suf) == 0;
}

/* Every asset with the suffix, in table (WEB_FILES) order, joined by sep. */
static void out_assets(struct out *o, const char *suf, const char *sep)
{
	int first = 1;
	for (size_t i = 0; i < o->nassets; i++) {
		if (!has_suffix(o->assets[i].name, suf))
			continue;
		if (!first)
			out_puts(o, sep);
		first = 0;
		out_write(o, o->assets[i].data, o->assets[i].len);
	}
}

static int expand(struct out *o, const struct html_asset *tpl, const json_t *core,
                  const char *shard_dir, struct html_stats *st, struct err *e)
{
	const char *p = (const char *)tpl->data, *end = p + tpl->len;
	static const char open[] = "<!--dsight:";
	int seen[3] = {0, 0, 0}, rc;
	static const char *names[3] = {"css", "data", "js"};

	for (;;) {
		const char *m = memmem(p, (size_t)(end - p), open, sizeof open - 1);
		if (!m) {
			out_write(o, p, (size_t)(end - p));
			break;
		}
		out_write(o, p, (size_t)(m - p));
		const char *q = m + sizeof open - 1;
		const char *close = memmem(q, (size_t)(end - q), "-->", 3);
		if (!close)
			return err_set(e, ERR_DATA, "Viewer template: unterminated marker");
		size_t kl = (size_t)(close - q);
		int which = -1;
		for (int k = 0; k < 3; k++)
			if (kl == strlen(names[k]) && memcmp(q, names[k], kl) == 0)
				which = k;
		if (which < 0)
			return err_set(e, ERR_DATA, "Viewer template: unknown marker "
			               "\"<!--dsight:%.*s-->\"", (int)utf8_cut(q, kl, 40), q);
		if (seen[which]++)
			return err_set(e, ERR_DATA, "Viewer template: marker "
			               "<!--dsight:%s--> appears twice", names[which]);
		if (which == 0) {
			out_puts(o, "<style>");
			out_assets(o, ".css", "\n");
			out_puts(o, "</style>");
		} else if (which == 1) {
			if ((rc = write_data(o, core, shard_dir, st, e)))
				return rc;
		} else {
			out_puts(o, "<script>");
			out_assets(o, ".js", "\n;\n");
			out_puts(o, "</script>");
		}
		p = close + 3;
	}
	if (!seen[1])
		return err_set(e, ERR_DATA, "Viewer template has no <!--dsight:data--> marker");
	return 0;
}

static int write_page(const struct html_asset *assets, size_t nassets,
                      const char *path, const json_t *core,
                      const char *shard_dir, const char *coll_db,
                      struct html_stats *st, struct err *e)
{
	const struct html_asset *tpl = asset_get(assets, nassets, "index.html", 10);
	struct out o = {0};
	int rc;

	memset(st, 0, sizeof *st);
	o.coll_db = coll_db;
	o.assets = assets;
	o.nassets = nassets;
	if ((rc = html_check_assets(assets, nassets, e)))
		return rc;
	if (!tpl)
		return err_set(e, ERR_DATA, "The embedded viewer has no index.html");
	o.f = fopen(path, "wb");
	if (!o.f)
		return err_sys(e, ERR_DATA, "Cannot create %s", path);
	if ((rc = hash_sha256_begin(&o.md, e))) {
		fclose(o.f);
		return rc;
	}
	rc = expand(&o, tpl, core, shard_dir, st, e);
	if (fclose(o.f) != 0 && !rc && !o.failed)
		o.failed = 1;
	if (!rc && o.failed) {
		errno = errno ? errno : EIO;
		rc = err_sys(e, ERR_DATA, "Cannot write %s", path);
	}
	if (rc) {
		hash_sha256_abort(&o.md);
		return rc;
	}
	hash_sha256_end(&o.md, st->sha256);
	st->bytes = o.bytes;
	return 0;
}

int html_write_assets(const struct html_asset *assets, size_t nassets,
                      const char *path, const json_t *core,
                      const char *shard_dir, struct html_stats *st,
                      struct err *e)
{
	return write_page(assets, nassets, path, core, shard_dir, NULL, st, e);
}

int html_write(const char *path, const json_t *core, const char *shard_dir,
               struct html_stats *st, struct err *e)
{
	return write_page(html_assets, html_asset_count, path, core, shard_dir,
	                  NULL, st, e);
}

int html_write_from(const char *path, const json_t *core,
                    const char *shard_dir, const char *coll_db,
                    struct html_stats *st, struct err *e)
{
	return write_page(html_assets, html_asset_count, path, core, shard_dir,
	                  coll_db, st, e);
}
