/* strdict: insertion-ordered byte-string dictionary (see strdict.h). */
#include "base/strdict.h"
#include "base/vec.h"

#include <stdlib.h>
#include <string.h>

static uint64_t dict_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

void strdict_init(struct strdict *d)
{
	memset(d, 0, sizeof *d);
}

void strdict_free(struct strdict *d)
{
	for (size_t i = 0; i < d->count; i++)
		free(d->entries[i].key);
	free(d->entries);
	free(d->slots);
	strdict_init(d);
}

/* The slot holding key, or the empty slot where it belongs.  An empty
 * key may come with a NULL pointer (a sample with no frames). */
static size_t dict_find(const struct strdict *d, const void *key,
                        size_t len, uint64_t h)
{
	size_t mask = d->nslots - 1, i = (size_t)h & mask;
	for (;;) {
		size_t s = d->slots[i];
		if (!s)
			return i;
		const struct strdict_entry *en = &d->entries[s - 1];
		if (en->hash == h && en->len == len &&
		    (len == 0 || memcmp(en->key, key, len) == 0))
			return i;
		i = (i + 1) & mask;
	}
}

static int dict_grow(struct strdict *d)
{
	size_t n = d->nslots ? d->nslots * 2 : 64;
	size_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	free(d->slots);
	d->slots = slots;
	d->nslots = n;
	for (size_t k = 0; k < d->count; k++) {
		size_t i = (size_t)d->entries[k].hash & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = k + 1;
	}
	return 0;
}

int strdict_get(const struct strdict *d, const void *key, size_t len,
                  int64_t *value)
{
	if (!d->nslots)
		return 0;
	size_t s = d->slots[dict_find(d, key, len, dict_hash(key, len))];
	if (!s)
		return 0;
	*value = d->entries[s - 1].value;
	return 1;
}

/* Adds an absent key; returns its entry index or -1. */
static int64_t dict_add(struct strdict *d, const void *key, size_t len,
                        uint64_t h, int64_t value)
{
	if ((d->count + 1) * 2 > d->nslots && dict_grow(d) != 0)
		return -1;
	if (vec_reserve(&d->entries, &d->cap, d->count + 1, sizeof *d->entries))
		return -1;
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	if (len)
		memcpy(copy, key, len);
	copy[len] = '\0';
	struct strdict_entry *en = &d->entries[d->count];
	en->key = copy;
	en->len = len;
	en->hash = h;
	en->value = value;
	d->slots[dict_find(d, key, len, h)] = d->count + 1;
	return (int64_t)d->count++;
}

int64_t strdict_intern(struct strdict *d, const void *key, size_t len,
                         int *added)
{
	uint64_t h = dict_hash(key, len);
	if (added)
		*added = 0;
	if (d->nslots) {
		size_t s = d->slots[dict_find(d, key, len, h)];
		if (s)
			return (int64_t)(s - 1);
	}
	if (added)
		*added = 1;
	return dict_add(d, key, len, h, (int64_t)d->count);
}

int strdict_put(struct strdict *d, const void *key, size_t len,
                  int64_t value)
{
	uint64_t h = dict_hash(key, len);
	if (d->nslots) {
		size_t s = d->slots[dict_find(d, key, len, h)];
		if (s) {
			d->entries[s - 1].value = value;
			return 0;
		}
	}
	return dict_add(d, key, len, h, value) < 0 ? -1 : 0;
}
