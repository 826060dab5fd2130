/*
 * strdict: an insertion-ordered byte-string dictionary (the Nsight
 * importer's range names, thread ids, CPU stacks and string-id caches; the
 * grouping engine's interned keys).
 *
 * Keys are copied; each key maps to an int64 value; keys can be listed in
 * insertion order.  Memory grows with the number of distinct keys only.
 */
#ifndef DSIGHT_STRDICT_H
#define DSIGHT_STRDICT_H

#include <stddef.h>
#include <stdint.h>

struct strdict_entry {
	char *key; /* NUL-terminated copy; len excludes the NUL */
	size_t len;
	uint64_t hash;
	int64_t value;
};

struct strdict {
	struct strdict_entry *entries; /* insertion order */
	size_t count, cap;
	size_t *slots; /* open addressing: entry index + 1, 0 = empty */
	size_t nslots;
};

void strdict_init(struct strdict *d);
void strdict_free(struct strdict *d);

/* Looks key up: returns 1 and sets *value when present, else 0. */
int strdict_get(const struct strdict *d, const void *key, size_t len,
                  int64_t *value);

/*
 * Returns the insertion index of key, adding it (with value = its index)
 * when absent; *added (may be NULL) tells which.  -1 when out of memory.
 */
int64_t strdict_intern(struct strdict *d, const void *key, size_t len,
                         int *added);

/* Sets key's value, adding the key when absent.  0, or -1 out of memory. */
int strdict_put(struct strdict *d, const void *key, size_t len,
                  int64_t value);

#endif
