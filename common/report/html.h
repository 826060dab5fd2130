/*
 * html: assembles index.html from the embedded viewer (web/, turned into
 * html_assets by scripts/embed-web at build time) and the core catalog
 * (doc/report-files.md "index.html").  The element ids and template markers the
 * viewer relies on are listed at the top of html.c and in web/README.md.
 */
#ifndef DSIGHT_HTML_H
#define DSIGHT_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "report/shard.h"

/* One embedded viewer file (generated table ends with a {0} entry). */
struct html_asset {
	const char *name;          /* base name, e.g. "index.html" */
	const unsigned char *data; /* NUL-terminated */
	size_t len;
};
extern const struct html_asset html_assets[];
extern const size_t html_asset_count;

#define HTML_CACHE_BYTES 33554432
/* --single-file pages above this size get a warning (decimal 100 MB). */
#define HTML_SINGLE_FILE_WARN_BYTES 100000000ull

/*
 * The core catalog: a new tree sharing catalog's unchanged values (do not
 * modify it), with per profile `event_chunks` and `event_density` (from
 * density: nprofiles rows of SHARD_DENSITY_BINS, NULL for zeros) and, when
 * the profile has a cpu object, `cpu.chunks`; per series `chunks`; and the
 * top-level `delivery` ("kind": "static", or "embedded" for single-file).
 * Returns NULL (e filled) when the catalog is malformed or memory runs out.
 */
json_t *html_core_catalog(const json_t *catalog, const struct shard_writer *w,
                          const uint64_t *density, size_t nprofiles,
                          int embedded, struct err *e);

struct html_stats {
	uint64_t bytes;          /* size of the written page */
	uint64_t catalog_bytes;  /* base64 text of the compressed core catalog */
	uint64_t embedded_bytes; /* base64 text of the embedded shards */
	uint64_t shards;         /* embedded shard files */
	char sha256[65];         /* of the page (manifest html_sha256) */
};

/*
 * Writes the page to path (created or truncated).  shard_dir NULL: a
 * progressive page (shards are fetched from detail/).  Otherwise every
 * shard named by the core catalog's descriptors is read from
 * shard_dir/<sha>.json.gz and embedded (single-file).  Fails (ERR_DATA)
 * when a viewer asset contains "</script" or "</style" (any case), when
 * the template is malformed, or on I/O errors; a partial file may remain.
 */
int html_write(const char *path, const json_t *core, const char *shard_dir,
               struct html_stats *stats, struct err *e);

/* html_write, with the catalog collections that the build streamed into
 * the extension tables of the store at coll_db (read-only) put back in
 * place of core's empty arrays, streamed through the compressor. */
int html_write_from(const char *path, const json_t *core,
                    const char *shard_dir, const char *coll_db,
                    struct html_stats *stats, struct err *e);

/* html_write with another set of viewer files (tests). */
int html_write_assets(const struct html_asset *assets, size_t nassets,
                      const char *path, const json_t *core,
                      const char *shard_dir, struct html_stats *st,
                      struct err *e);

/* Checks the embedded assets alone (the rule html_write enforces). */
int html_check_assets(const struct html_asset *assets, size_t n, struct err *e);

#endif
