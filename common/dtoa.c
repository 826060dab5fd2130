/* dtoa: shortest round-trip digits of a double (see dtoa.h). */
#include "dtoa.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * For p = 15, 16, 17: print v correctly rounded to p significant digits and
 * keep the first that reads back to v.  When a k <= 15 digit string round
 * trips, rounding v to 15 digits reproduces it (the half-ulp of a double is
 * far below the half-unit of the 15th digit), so trailing zeros stripped from
 * the 15-digit form give the shortest (subnormals have less precision, so
 * there every length from 1 is tried); for 16 and 17 the correctly rounded
 * string is the nearest, so it round-trips whenever any string of that
 * length does.
 */
int dtoa_shortest_slow(double v, char digits[17], int *decpt)
{
	char tmp[40];
	int p, n = 0;

	for (p = v < DBL_MIN ? 1 : 15; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, v);
		if (p == 17 || strtod(tmp, NULL) == v)
			break;
	}
	/* tmp is d.ddddde[+-]XX */
	char *e = strchr(tmp, 'e');
	int exp10 = atoi(e + 1);
	for (char *s = tmp; s < e; s++)
		if (*s >= '0' && *s <= '9')
			digits[n++] = *s;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	*decpt = exp10 + 1;
	return n;
}

int dtoa_shortest(double v, char digits[17], int *decpt)
{
	return dtoa_shortest_slow(v, digits, decpt);
}
