/*
 * nsys_dict: an insertion-ordered byte-string dictionary for the Nsight
 * importer (range names, thread ids, CPU stacks, string-id caches).
 *
 * Keys are copied; each key maps to an int64 value; keys can be listed in
 * insertion order.  Memory grows with the number of distinct keys only.
 */
#ifndef DSIGHT_NSYS_DICT_H
#define DSIGHT_NSYS_DICT_H

#include <stddef.h>
#include <stdint.h>

struct nsys_dict_entry {
	char *key; /* NUL-terminated copy; len excludes the NUL */
	size_t len;
	uint64_t hash;
	int64_t value;
};

struct nsys_dict {
	struct nsys_dict_entry *entries; /* insertion order */
	size_t count, cap;
	size_t *slots; /* open addressing: entry index + 1, 0 = empty */
	size_t nslots;
};

void nsys_dict_init(struct nsys_dict *d);
void nsys_dict_free(struct nsys_dict *d);

/* Looks key up: returns 1 and sets *value when present, else 0. */
int nsys_dict_get(const struct nsys_dict *d, const void *key, size_t len,
                  int64_t *value);

/*
 * Returns the insertion index of key, adding it (with value = its index)
 * when absent; *added (may be NULL) tells which.  -1 when out of memory.
 */
int64_t nsys_dict_intern(struct nsys_dict *d, const void *key, size_t len,
                         int *added);

/* Sets key's value, adding the key when absent.  0, or -1 out of memory. */
int nsys_dict_put(struct nsys_dict *d, const void *key, size_t len,
                  int64_t value);

#endif
