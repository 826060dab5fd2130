/* Unit tests for common/html: asset checks, core catalog, page assembly. */
#include "testlib.h"

#include "report/html.h"
#include "base/jsonout.h"

#include <openssl/evp.h>
#include <strings.h>
#include <zlib.h>

static char tmpdir[64];

static void mktmp(void)
{
	strcpy(tmpdir, "/tmp/dsight-test-html-XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
}

static void rmtmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		abort();
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long k = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)k + 1);
	*n = fread(p, 1, (size_t)k, f);
	p[*n] = 0;
	fclose(f);
	return p;
}

/* The base64 text of the element with the given id, decoded and gunzipped. */
/* The base64-decoded bytes of the <script> element with this id (malloc'd,
 * *len set), or NULL. */
static unsigned char *element_raw(const char *page, const char *id, size_t *len)
{
	char needle[160];
	snprintf(needle, sizeof needle, "id=\"%s\"", id);
	const char *p = strstr(page, needle);
	if (!p)
		return NULL;
	p = strchr(p, '>') + 1;
	const char *q = strstr(p, "</script>");
	size_t n = (size_t)(q - p);
	unsigned char *raw = malloc(n + 4);
	int m = EVP_DecodeBlock(raw, (const unsigned char *)p, (int)n);
	if (m < 0) {
		free(raw);
		return NULL;
	}
	while (n > 0 && p[n - 1] == '=') { /* DecodeBlock keeps padding zeros */
		m--;
		n--;
	}
	*len = (size_t)m;
	return raw;
}

/* The gunzipped payload of that element, NUL-terminated (malloc'd). */
static char *element_payload(const char *page, const char *id)
{
	size_t m;
	unsigned char *raw = element_raw(page, id, &m);
	if (!raw)
		return NULL;
	size_t cap = 1 << 22;
	char *out = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof z);
	inflateInit2(&z, 15 + 16);
	z.next_in = raw;
	z.avail_in = (uInt)m;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap - 1;
	int rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	free(raw);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	out[cap - 1 - z.avail_out] = 0;
	return out;
}

TEST(asset_check_rejects_closing_tags)
{
	struct err e;
	struct html_asset ok[] = {{"a.js", (const unsigned char *)"x = '<\\/script>';", 17}};
	struct html_asset bad1[] = {{"b.js", (const unsigned char *)"s = '</SCRIPT>'", 15}};
	struct html_asset bad2[] = {{"c.css", (const unsigned char *)"/* </Style */", 13}};
	CHECK_EQ(html_check_assets(ok, 1, &e), 0);
	CHECK_EQ(html_check_assets(bad1, 1, &e), ERR_DATA);
	CHECK(strstr(e.msg, "b.js") != NULL);
	CHECK_EQ(html_check_assets(bad2, 1, &e), ERR_DATA);
	CHECK(strstr(e.msg, "c.css") != NULL && strstr(e.msg, "</style") != NULL);
	/* the viewer actually embedded passes */
	CHECK_EQ(html_check_assets(html_assets, html_asset_count, &e), 0);
}

static const char *CATALOG =
	"{\"schema\":\"srtctl-trace/1\",\"meta\":{\"duration\":10.0},"
	"\"metrics\":[{\"id\":0,\"name\":\"m\",\"points\":[]},{\"id\":1,\"name\":\"n\",\"points\":[]}],"
	"\"profiles\":[{\"id\":0,\"events\":[],\"event_count\":2,\"cpu\":{\"samples\":[],\"sample_count\":1}},"
	"{\"id\":1,\"events\":[],\"event_count\":0,\"cpu\":null}]}";

static struct shard_writer *filled_writer(void)
{
	struct shard_writer *w = NULL;
	struct shard_writer_opts o = {.dir = tmpdir, .threads = 1};
	struct err e;
	if (shard_writer_open(&w, &o, &e))
		abort();
	shard_writer_set_duration(w, 10.0);
	struct row_event e1 = {1.0, 2.0, 0, "5", 1, 0}, e2 = {-1.0, 20.0, 0, "5", 1, 1};
	struct row_sample s1 = {3.0, "5", 1, 0, 9};
	struct row_point p1 = {0.5, {NUM_INT, 7, 7.0, NULL, 0}, 0, 0, NULL, 0, 0, 0};
	shard_writer_event(w, 0, 0, &e1, &e);
	shard_writer_event(w, 0, 1, &e2, &e);
	shard_writer_sample(w, 0, 0, &s1, &e);
	shard_writer_point(w, 1, 0, &p1, &e);
	if (shard_writer_finish(w, &e))
		abort();
	return w;
}

static json_t *core_of(struct shard_writer *w, int embedded)
{
	struct err e;
	uint64_t dens[2 * SHARD_DENSITY_BINS];
	json_t *cat = json_loads(CATALOG, 0, NULL);
	shard_writer_density(w, 0, dens);
	shard_writer_density(w, 1, dens + SHARD_DENSITY_BINS);
	json_t *core = html_core_catalog(cat, w, dens, 2, embedded, &e);
	json_decref(cat);
	return core;
}

TEST(core_catalog_fields)
{
	mktmp();
	struct shard_writer *w = filled_writer();
	json_t *core = core_of(w, 0);
	CHECK(core != NULL);
	json_t *p0 = json_array_get(json_object_get(core, "profiles"), 0);
	json_t *p1 = json_array_get(json_object_get(core, "profiles"), 1);
	CHECK_EQ(json_array_size(json_object_get(p0, "event_chunks")), 1);
	json_t *dens = json_object_get(p0, "event_density");
	CHECK_EQ(json_array_size(dens), 512);
	CHECK_EQ(json_integer_value(json_array_get(dens, 0)), 1);
	CHECK_EQ(json_integer_value(json_array_get(dens, 52)), 2);
	CHECK_EQ(json_integer_value(json_array_get(dens, 511)), 1);
	CHECK_EQ(json_array_size(json_object_get(json_object_get(p0, "cpu"), "chunks")), 1);
	CHECK_EQ(json_array_size(json_object_get(p1, "event_chunks")), 0);
	CHECK_EQ(json_array_size(json_object_get(p1, "event_density")), 512);
	CHECK(json_is_null(json_object_get(p1, "cpu")));
	json_t *m = json_object_get(core, "metrics");
	CHECK_EQ(json_array_size(json_object_get(json_array_get(m, 0), "chunks")), 0);
	CHECK_EQ(json_array_size(json_object_get(json_array_get(m, 1), "chunks")), 1);
	struct buf b;
	buf_init(&b, 0);
	jsonout_tree(&b, json_object_get(core, "delivery"), 0);
	CHECK_STR(b.data, "{\"version\":1,\"kind\":\"static\",\"cache_bytes\":33554432}");
	buf_free(&b);
	json_decref(core);
	shard_writer_free(w);
	rmtmp();
}

TEST(progressive_page)
{
	struct err e;
	struct html_stats st;
	char path[128];
	size_t n;
	mktmp();
	struct shard_writer *w = filled_writer();
	json_t *core = core_of(w, 0);
	snprintf(path, sizeof path, "%s/index.html", tmpdir);
	CHECK_EQ(html_write(path, core, NULL, &st, &e), 0);
	char *page = slurp(path, &n);
	CHECK(page && n == st.bytes);
	CHECK_EQ(strncasecmp(page, "<!doctype html>", 15), 0);
	CHECK(strstr(page, "<!--dsight:") == NULL);
	CHECK(strstr(page, "id=\"dsight-shard-") == NULL); /* the viewer JS names the prefix */
	char *json = element_payload(page, "dsight-catalog");
	struct buf b;
	buf_init(&b, 0);
	jsonout_tree(&b, core, 0);
	CHECK_STR(json, b.data);
	buf_free(&b);
	/* html_sha256 is the page's hash */
	unsigned char md[32];
	unsigned int l;
	char hex[65];
	EVP_Digest(page, n, md, &l, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	CHECK_STR(hex, st.sha256);
	free(json);
	free(page);
	json_decref(core);
	shard_writer_free(w);
	rmtmp();
}

/* A sharded catalog's descriptor lists go to their own element: the
 * core element keeps the rest of catalog_shards in order, and the two
 * read together give back the whole index. */
TEST(catalog_index_lists_in_their_own_element)
{
	struct err e;
	struct html_stats st;
	char path[128];
	size_t n;
	mktmp();
	json_t *core = json_loads(
		"{\"schema\":\"s\",\"requests\":[],\"catalog_shards\":{\"version\":1,"
		"\"counts\":{\"requests\":3},\"shards\":[{\"sha256\":\"ab\",\"bounds\":[0.1,0.25,3,4]}],"
		"\"lookup\":[{\"first\":\"r\\u00e9\"}],\"search\":null,"
		"\"top_ttft\":[[\"r1\",12.5]],\"density\":[1,2]},\"delivery\":{}}", 0, NULL);
	CHECK(core != NULL);
	snprintf(path, sizeof path, "%s/index.html", tmpdir);
	CHECK_EQ(html_write(path, core, NULL, &st, &e), 0);
	char *page = slurp(path, &n);
	char *head = element_payload(page, "dsight-catalog");
	char *lists = element_payload(page, "dsight-catalog-index");
	CHECK_STR(head, "{\"schema\":\"s\",\"requests\":[],\"catalog_shards\":{\"version\":1,"
	          "\"counts\":{\"requests\":3},\"top_ttft\":[[\"r1\",12.5]],\"density\":[1,2]},"
	          "\"delivery\":{}}");
	CHECK_STR(lists, "{\"shards\":[{\"sha256\":\"ab\",\"bounds\":[0.1,0.25,3,4]}],"
	          "\"lookup\":[{\"first\":\"r\\u00e9\"}],\"search\":null}");
	/* the caller's tree is untouched */
	CHECK(json_object_get(json_object_get(core, "catalog_shards"), "shards") != NULL);
	/* a catalog without an index writes one element */
	json_object_del(core, "catalog_shards");
	CHECK_EQ(html_write(path, core, NULL, &st, &e), 0);
	free(page);
	page = slurp(path, &n);
	CHECK(strstr(page, "id=\"dsight-catalog-index\"") == NULL);
	free(head);
	free(lists);
	free(page);
	json_decref(core);
	rmtmp();
}

TEST(single_file_page_embeds_every_shard)
{
	struct err e;
	struct html_stats st;
	char path[128];
	size_t n, zn;
	mktmp();
	struct shard_writer *w = filled_writer();
	json_t *core = core_of(w, 1);
	snprintf(path, sizeof path, "%s/index.html", tmpdir);
	CHECK_EQ(html_write(path, core, tmpdir, &st, &e), 0);
	CHECK_EQ(st.shards, 3);
	char *page = slurp(path, &n);
	CHECK(strstr(page, "\"embedded\"") == NULL); /* only inside the gzip */
	json_t *files = shard_writer_files(w);
	CHECK_EQ(json_array_size(files), 3);
	for (size_t i = 0; i < json_array_size(files); i++) {
		const char *f = json_string_value(json_array_get(files, i));
		char id[128], zpath[200];
		snprintf(id, sizeof id, "dsight-shard-%.64s", f + 7);
		char *rows = element_payload(page, id);
		CHECK(rows && rows[0] == '[');
		/* the embedded bytes are the shard file's bytes */
		snprintf(zpath, sizeof zpath, "%s/%s", tmpdir, f + 7);
		char *z = slurp(zpath, &zn);
		size_t en = 0;
		unsigned char *emb = element_raw(page, id, &en);
		CHECK(z != NULL && emb != NULL);
		CHECK_EQ(en, zn);
		CHECK(z && emb && en == zn && memcmp(emb, z, zn) == 0);
		free(emb);
		free(z);
		free(rows);
	}
	char *json = element_payload(page, "dsight-catalog");
	CHECK(json && strstr(json, "\"kind\":\"embedded\"") != NULL);
	free(json);
	json_decref(files);
	free(page);
	/* a missing shard file is an error naming it */
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -f %s/*.json.gz", tmpdir);
	CHECK_EQ(system(cmd), 0);
	CHECK_EQ(html_write(path, core, tmpdir, &st, &e), ERR_DATA);
	CHECK(strstr(e.msg, "Cannot open shard") != NULL);
	json_decref(core);
	shard_writer_free(w);
	rmtmp();
}

#define A(name, text) {name, (const unsigned char *)(text), sizeof(text) - 1}

/* Writes a page from the given assets; returns html_write's code. */
static int page_from(const struct html_asset *as, size_t n, struct err *e,
                     char **page)
{
	char path[128];
	struct html_stats st;
	size_t len;
	json_t *core = json_loads("{\"delivery\":{}}", 0, NULL);
	snprintf(path, sizeof path, "%s/index.html", tmpdir);
	int rc = html_write_assets(as, n, path, core, NULL, &st, e);
	json_decref(core);
	if (page)
		*page = rc ? NULL : slurp(path, &len);
	return rc;
}

TEST(template_markers)
{
	struct err e;
	char *page;
	mktmp();
	struct html_asset good[] = {
		A("a.js", "var a = 1;"), A("b.css", "p{}"), A("b.js", "var b = 2;"),
		A("c.css", "q{}"),
		A("index.html", "<head><!--dsight:css--></head><body><!--dsight:data-->"
		                "<!--dsight:js--></body>"),
	};
	CHECK_EQ(page_from(good, 5, &e, &page), 0);
	CHECK(page && strstr(page, "<head><style>p{}\nq{}</style></head>") != NULL);
	CHECK(page && strstr(page, "<script>var a = 1;\n;\nvar b = 2;</script></body>") != NULL);
	CHECK(page && strstr(page, "<body><script type=\"application/octet-stream\" "
	                           "id=\"dsight-catalog\">") != NULL);
	free(page);

	struct html_asset nodata[] = {A("index.html", "<!--dsight:css--><!--dsight:js-->")};
	CHECK_EQ(page_from(nodata, 1, &e, NULL), ERR_DATA);
	CHECK(strstr(e.msg, "dsight:data") != NULL);
	struct html_asset unknown[] = {A("index.html", "<!--dsight:data--><!--dsight:font-->")};
	CHECK_EQ(page_from(unknown, 1, &e, NULL), ERR_DATA);
	CHECK(strstr(e.msg, "dsight:font") != NULL);
	struct html_asset twice[] = {A("index.html", "<!--dsight:data--><!--dsight:data-->")};
	CHECK_EQ(page_from(twice, 1, &e, NULL), ERR_DATA);
	struct html_asset unterminated[] = {A("index.html", "<!--dsight:data")};
	CHECK_EQ(page_from(unterminated, 1, &e, NULL), ERR_DATA);
	struct html_asset notpl[] = {A("x.js", "1")};
	CHECK_EQ(page_from(notpl, 1, &e, NULL), ERR_DATA);
	CHECK(strstr(e.msg, "index.html") != NULL);
	/* the build-time check: a closing tag in any asset fails the page */
	struct html_asset closing[] = {
		A("evil.js", "document.write('</Script>')"),
		A("index.html", "<!--dsight:data--><!--dsight:js-->"),
	};
	CHECK_EQ(page_from(closing, 2, &e, NULL), ERR_DATA);
	CHECK(strstr(e.msg, "evil.js") != NULL);
	rmtmp();
}

int main(void)
{
	RUN(asset_check_rejects_closing_tags);
	RUN(core_catalog_fields);
	RUN(progressive_page);
	RUN(catalog_index_lists_in_their_own_element);
	RUN(single_file_page_embeds_every_shard);
	RUN(template_markers);
	return testlib_done();
}
