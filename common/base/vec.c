/* vec: growing heap arrays (see vec.h). */
#include "base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VEC_MIN 16

/* The pointer is read and written through memcpy: arrp is the address of
 * a T *, which need not be a void * (no type-punned access). */
int vec_resize(void *arrp, size_t n, size_t elem)
{
	void *p, *q;

	if (elem && n > SIZE_MAX / elem)
		return -1;
	memcpy(&p, arrp, sizeof p);
	size_t bytes = n * elem;
	q = realloc(p, bytes > 0 ? bytes : 1);
	if (!q)
		return -1;
	memcpy(arrp, &q, sizeof q);
	return 0;
}

static int reserve(void *arrp, size_t *cap, size_t need, size_t elem,
                   int zero)
{
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap > SIZE_MAX / 2 ? SIZE_MAX : *cap * 2;
	if (nc < need)
		nc = need;
	if (nc < VEC_MIN)
		nc = VEC_MIN;
	if (vec_resize(arrp, nc, elem))
		return -1;
	if (zero) {
		char *p;
		memcpy(&p, arrp, sizeof p);
		memset(p + *cap * elem, 0, (nc - *cap) * elem);
	}
	*cap = nc;
	return 0;
}

int vec_reserve(void *arrp, size_t *cap, size_t need, size_t elem)
{
	return reserve(arrp, cap, need, elem, 0);
}

int vec_reserve_zero(void *arrp, size_t *cap, size_t need, size_t elem)
{
	return reserve(arrp, cap, need, elem, 1);
}
