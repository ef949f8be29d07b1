/* emu/cfg/units.c — numbers with units (see units.h).
 *
 * Numbers are scanned as exact decimals (integer mantissa, power of ten) so that
 * "0.1s" is exactly 100000000 ns and "5%" is the same double as "0.05": integer
 * results use integer arithmetic, double results go through one correctly rounded
 * strtod of the rebuilt decimal. */
#include "emu/cfg/units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXP_DURATION "a duration like 5ms (units ns, us, ms, s)"
#define EXP_RATE "a rate like 10Gbit (units bit, Kbit, Mbit, Gbit, Tbit per second)"
#define EXP_SIZE "a size like 1500B or 1MiB (units B, KiB, MiB, GiB)"
#define EXP_PROB "a probability like 0.05 or 5%"
#define EXP_FLOPS "FLOP/s like 10T or 1e13 (optional suffix k, M, G, T)"

struct dec {
	bool neg;
	uint64_t mant;		/* significant digits, at most 19 */
	int exp;		/* value = mant * 10^exp */
};

/* Scans [+-]digits[.digits][e[+-]digits] at s; *end is the first unscanned char. */
static int scan_dec(const char *s, struct dec *d, const char **end)
{
	const char *p = s;
	int ndig = 0, nsig = 0;

	memset(d, 0, sizeof(*d));
	if (*p == '+' || *p == '-')
		d->neg = *p++ == '-';
	for (int frac = 0;; p++) {
		if (*p == '.' && !frac) {
			frac = 1;
			continue;
		}
		if (*p < '0' || *p > '9')
			break;
		ndig++;
		if (d->mant == 0 && *p == '0') {
			d->exp -= frac;
			continue;
		}
		if (++nsig > 19)
			return -ERANGE;
		d->mant = d->mant * 10 + (uint64_t)(*p - '0');
		d->exp -= frac;
	}
	if (ndig == 0)
		return -EINVAL;
	if ((*p == 'e' || *p == 'E') &&
	    ((p[1] >= '0' && p[1] <= '9') ||
	     ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
		char *e;
		long x = strtol(p + 1, &e, 10);

		if (x > 400 || x < -400)
			return -ERANGE;
		d->exp += (int)x;
		p = e;
	}
	*end = p;
	return 0;
}

/* The exact decimal times 10^shift, correctly rounded to a double. */
static double dec_double(const struct dec *d, int shift)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%s%" PRIu64 "e%d", d->neg ? "-" : "", d->mant,
		 d->exp + shift);
	return strtod(buf, NULL);
}

/* mant * 10^exp * mul as an exact int64, or -ERANGE / -EDOM (not whole). */
static int dec_int(const struct dec *d, int exp, uint64_t mul, int64_t *out)
{
	uint64_t v = d->mant;

	if (v != 0 && mul > UINT64_MAX / v)
		return -ERANGE;
	v *= mul;
	for (; exp > 0; exp--) {
		if (v > UINT64_MAX / 10)
			return -ERANGE;
		v *= 10;
	}
	for (; exp < 0 && v != 0; exp++) {
		if (v % 10)
			return -EDOM;
		v /= 10;
	}
	if (v > (uint64_t)INT64_MAX)
		return -ERANGE;
	*out = d->neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* Scans a number followed by a unit; *unit points at the (possibly empty) unit. */
static int scan_num(const char *s, struct dec *d, const char **unit, const char *expect,
		    char *err, size_t errlen)
{
	int r;

	if (!*s) {
		snprintf(err, errlen, "missing value; expected %s", expect);
		return -EINVAL;
	}
	r = scan_dec(s, d, unit);
	if (r == -ERANGE) {
		snprintf(err, errlen, "'%s' has too many digits; expected %s", s, expect);
		return -EINVAL;
	}
	if (r) {
		snprintf(err, errlen, "malformed number '%s'; expected %s", s, expect);
		return -EINVAL;
	}
	return 0;
}

int units_int(const char *s, int64_t *v, char *err, size_t errlen)
{
	struct dec d;
	const char *end;

	if (scan_num(s, &d, &end, "an integer", err, errlen))
		return -EINVAL;
	if (*end || strpbrk(s, ".eE")) {
		snprintf(err, errlen, "malformed integer '%s'; expected an integer", s);
		return -EINVAL;
	}
	if (dec_int(&d, d.exp, 1, v)) {
		snprintf(err, errlen, "'%s' is too large; expected an integer", s);
		return -EINVAL;
	}
	return 0;
}

int units_uint(const char *s, uint64_t *v, char *err, size_t errlen)
{
	char *end;

	if (!*s || *s < '0' || *s > '9') {
		snprintf(err, errlen, "%s '%s'; expected a non-negative integer",
			 *s ? "malformed integer" : "missing value", s);
		return -EINVAL;
	}
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end || errno) {
		snprintf(err, errlen, "%s '%s'; expected a non-negative integer below 2^64",
			 errno ? "too large" : "malformed integer", s);
		return -EINVAL;
	}
	return 0;
}

int units_double(const char *s, double *v, char *err, size_t errlen)
{
	struct dec d;
	const char *end;

	if (scan_num(s, &d, &end, "a number", err, errlen))
		return -EINVAL;
	if (*end) {
		snprintf(err, errlen, "malformed number '%s'; expected a number", s);
		return -EINVAL;
	}
	*v = dec_double(&d, 0);
	if (!isfinite(*v)) {
		snprintf(err, errlen, "'%s' is too large; expected a number", s);
		return -EINVAL;
	}
	return 0;
}

int units_bool(const char *s, bool *v, char *err, size_t errlen)
{
	static const char *const t[] = { "true", "yes", "on", "1" };
	static const char *const f[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (!strcasecmp(s, t[i]) || !strcasecmp(s, f[i])) {
			*v = !strcasecmp(s, t[i]);
			return 0;
		}
	}
	snprintf(err, errlen, "'%s' is not a boolean; expected true or false (also yes/no, on/off, "
		 "1/0)", s);
	return -EINVAL;
}

int units_prob(const char *s, double *v, char *err, size_t errlen)
{
	struct dec d;
	const char *end;

	if (scan_num(s, &d, &end, EXP_PROB, err, errlen))
		return -EINVAL;
	if (*end && strcmp(end, "%")) {
		snprintf(err, errlen, "malformed probability '%s'; expected %s", s, EXP_PROB);
		return -EINVAL;
	}
	*v = dec_double(&d, *end ? -2 : 0);
	return 0;
}

struct unit {
	const char *name;
	int exp10;		/* durations, rates, flops */
	int shift;		/* sizes: power of two */
};

static const struct unit dur_units[] = {
	{ "ns", 0, 0 }, { "nsec", 0, 0 }, { "nsecs", 0, 0 },
	{ "us", 3, 0 }, { "usec", 3, 0 }, { "usecs", 3, 0 },
	{ "ms", 6, 0 }, { "msec", 6, 0 }, { "msecs", 6, 0 },
	{ "s", 9, 0 }, { "sec", 9, 0 }, { "secs", 9, 0 },
};

int units_duration(const char *s, int64_t *ns, char *err, size_t errlen)
{
	struct dec d;
	const char *u;
	int r;

	if (scan_num(s, &d, &u, EXP_DURATION, err, errlen))
		return -EINVAL;
	if (!*u) {
		snprintf(err, errlen, "missing unit in '%s'; expected %s", s, EXP_DURATION);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++) {
		if (strcasecmp(u, dur_units[i].name))
			continue;
		r = dec_int(&d, d.exp + dur_units[i].exp10, 1, ns);
		if (r == -EDOM)
			snprintf(err, errlen, "'%s' is not a whole number of nanoseconds; expected "
				 "%s", s, EXP_DURATION);
		else if (r)
			snprintf(err, errlen, "'%s' is too large; expected %s", s, EXP_DURATION);
		return r ? -EINVAL : 0;
	}
	snprintf(err, errlen, "unknown unit '%s' in '%s'; expected %s", u, s, EXP_DURATION);
	return -EINVAL;
}

static const struct unit rate_units[] = {
	{ "bit", 0, 0 }, { "Kbit", 3, 0 }, { "Mbit", 6, 0 }, { "Gbit", 9, 0 }, { "Tbit", 12, 0 },
};

int units_rate(const char *s, double *bps, char *err, size_t errlen)
{
	struct dec d;
	const char *u;
	size_t ul;

	if (scan_num(s, &d, &u, EXP_RATE, err, errlen))
		return -EINVAL;
	if (!*u) {
		snprintf(err, errlen, "missing unit in '%s'; expected %s", s, EXP_RATE);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++) {
		if (!strcasecmp(u, rate_units[i].name)) {
			*bps = dec_double(&d, rate_units[i].exp10);
			if (isfinite(*bps))
				return 0;
			snprintf(err, errlen, "'%s' is too large; expected %s", s, EXP_RATE);
			return -EINVAL;
		}
	}
	ul = strlen(u);
	if (ul >= 3 && !strcasecmp(u + ul - 3, "bps"))
		snprintf(err, errlen, "ambiguous unit '%s' in '%s' (tc reads it as bytes per "
			 "second); expected %s", u, s, EXP_RATE);
	else
		snprintf(err, errlen, "unknown unit '%s' in '%s'; expected %s", u, s, EXP_RATE);
	return -EINVAL;
}

static const struct unit size_units[] = {
	{ "B", 0, 0 }, { "KiB", 0, 10 }, { "MiB", 0, 20 }, { "GiB", 0, 30 },
};

int units_size(const char *s, int64_t *bytes, char *err, size_t errlen)
{
	struct dec d;
	const char *u;
	int r;

	if (scan_num(s, &d, &u, EXP_SIZE, err, errlen))
		return -EINVAL;
	if (!*u) {
		snprintf(err, errlen, "missing unit in '%s'; expected %s", s, EXP_SIZE);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(size_units) / sizeof(size_units[0]); i++) {
		if (strcmp(u, size_units[i].name))
			continue;
		r = dec_int(&d, d.exp, (uint64_t)1 << size_units[i].shift, bytes);
		if (r == -EDOM)
			snprintf(err, errlen, "'%s' is not a whole number of bytes; expected %s", s,
				 EXP_SIZE);
		else if (r)
			snprintf(err, errlen, "'%s' is too large; expected %s", s, EXP_SIZE);
		return r ? -EINVAL : 0;
	}
	snprintf(err, errlen, "unknown unit '%s' in '%s'; expected %s", u, s, EXP_SIZE);
	return -EINVAL;
}

static const struct unit flops_units[] = {
	{ "", 0, 0 }, { "k", 3, 0 }, { "K", 3, 0 }, { "M", 6, 0 }, { "G", 9, 0 }, { "T", 12, 0 },
};

int units_flops(const char *s, double *v, char *err, size_t errlen)
{
	struct dec d;
	const char *u;

	if (scan_num(s, &d, &u, EXP_FLOPS, err, errlen))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(flops_units) / sizeof(flops_units[0]); i++) {
		if (!strcmp(u, flops_units[i].name)) {
			*v = dec_double(&d, flops_units[i].exp10);
			if (isfinite(*v))
				return 0;
			snprintf(err, errlen, "'%s' is too large; expected %s", s, EXP_FLOPS);
			return -EINVAL;
		}
	}
	snprintf(err, errlen, "unknown suffix '%s' in '%s'; expected %s", u, s, EXP_FLOPS);
	return -EINVAL;
}

void units_fmt_double(double v, char *buf, size_t n)
{
	if (v == nearbyint(v) && fabs(v) < 1e15) {	/* 1000, not 1e+03 */
		snprintf(buf, n, "%.0f", v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void units_fmt_duration(int64_t ns, char *buf, size_t n)
{
	static const struct { const char *name; int64_t mul; } u[] = {
		{ "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 }, { "ns", 1 },
	};
	size_t i = 0;

	while (ns == 0 ? i > 0 : ns % u[i].mul != 0)
		i++;
	snprintf(buf, n, "%" PRId64 "%s", ns / u[i].mul, u[i].name);
}

/* v as an integer count of the largest exact unit of table u (descending), else
 * as the shortest double of the last unit. */
static void fmt_si(double v, const struct unit *u, size_t nu, char *buf, size_t n)
{
	if (v == 0) {	/* 0bit, not 0Tbit: a zero in the largest unit reads as a floor */
		snprintf(buf, n, "0%s", u[0].name);
		return;
	}
	for (size_t i = nu; i-- > 0;) {
		double m = pow(10, u[i].exp10), q = v / m;

		if (q == nearbyint(q) && fabs(q) < 1e15 && q * m == v) {
			snprintf(buf, n, "%.0f%s", q, u[i].name);
			return;
		}
	}
	units_fmt_double(v, buf, n);
	strncat(buf, u[0].name, n - strlen(buf) - 1);
}

void units_fmt_rate(double bps, char *buf, size_t n)
{
	fmt_si(bps, rate_units, sizeof(rate_units) / sizeof(rate_units[0]), buf, n);
}

void units_fmt_flops(double v, char *buf, size_t n)
{
	fmt_si(v, flops_units, sizeof(flops_units) / sizeof(flops_units[0]), buf, n);
}

void units_fmt_size(int64_t bytes, char *buf, size_t n)
{
	size_t i = sizeof(size_units) / sizeof(size_units[0]) - 1;
	int64_t m;

	for (;; i--) {
		m = (int64_t)1 << size_units[i].shift;
		if (i == 0 || (bytes != 0 && bytes % m == 0))
			break;
	}
	snprintf(buf, n, "%" PRId64 "%s", bytes / m, size_units[i].name);
}
