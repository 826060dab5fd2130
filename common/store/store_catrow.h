/*
 * store_catrow: the v1 `catalog` table's single row, written once at the
 * end of a build: the whole catalog while it is at most STORE_EXT_ROW_MAX
 * bytes (its collections read back from the extension tables), else the
 * core with "dsight_collections": "external" (doc/report-files.md), and
 * the build's generation id that row carries.
 */
#ifndef DSIGHT_STORE_CATROW_H
#define DSIGHT_STORE_CATROW_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"

#define STORE_GENERATION_LEN 32

/* A fresh random generation id: 32 lowercase hex digits + NUL (from the
 * kernel's random source); ERR_DATA when that cannot be read. */
int store_generation_new(char out[STORE_GENERATION_LEN + 1], struct err *e);

/* What the row is made of; every pointer is borrowed for the call. */
struct store_catrow_in {
	const char *path;            /* the database file, for messages */
	const json_t *catalog;
	const char *generation;
	const uint64_t *elements;    /* per collection: elements in the extension */
	uint64_t element_bytes;      /* their compact JSON, commas included */
};

/* What was written (the build's statistics). */
struct store_catrow_out {
	uint64_t catalog_bytes;       /* the row's JSON */
	uint64_t whole_catalog_bytes; /* ... had it held the collections */
	int external;                 /* its collections are only in the extension */
};

/* Inserts the row into db's `catalog` table and fills *out.  ERR_DATA
 * naming path on an SQLite failure, ERR_LIMIT past 2 GiB of JSON,
 * ERR_NOMEM. */
int store_catrow_write(sqlite3 *db, const struct store_catrow_in *in,
                       struct store_catrow_out *out, struct err *e);

#endif
