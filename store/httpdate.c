/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP-dates (RFC 9110 sec. 5.6.7): parsed in the three formats, written
 * as IMF-fixdate.  Here in the store because the attribute record's
 * older text form holds them; goblind and the origin client use the same
 * two functions.  Pure: walks (pointer, length), never past it.
 */
#include <string.h>

#include "goblin.h"
#include "httptok.h"

#define HTTP_DATE_LEN GS_HTTP_DATE_LEN

/* IMF-fixdate years 0000-9999: what HTTP_DATE_LEN can hold */
#define DATE_MIN INT64_C(-62167219200) /* 0000-01-01 00:00:00 */
#define DATE_MAX INT64_C(253402300799) /* 9999-12-31 23:59:59 */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* ---- HTTP-date ---- */

static const char *const wkday[7] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};
static const char *const weekday[7] = {
	"Sunday",   "Monday", "Tuesday",  "Wednesday",
	"Thursday", "Friday", "Saturday",
};
static const char *const month[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static const int mdays[12] = {
	31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
};

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant) */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* A cursor over a date: each step consumes exactly what it matches. */
struct cur {
	const char *p, *end;
};

static bool lit(struct cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ht_lower(c->p[i]) != ht_lower(s[i]))
			return false;
	c->p += n;
	return true;
}

/* exactly @n digits */
static bool digits(struct cur *c, int n, int *v)
{
	*v = 0;
	if (c->end - c->p < n)
		return false;
	for (int i = 0; i < n; i++) {
		if (!ht_is_digit(c->p[i]))
			return false;
		*v = *v * 10 + (c->p[i] - '0');
	}
	c->p += n;
	return true;
}

/* one of the names in @names (case-insensitive); its index or -1 */
static int name(struct cur *c, const char *const *names, int count)
{
	for (int i = 0; i < count; i++)
		if (lit(c, names[i]))
			return i;
	return -1;
}

/* "HH:MM:SS" */
static bool time_of_day(struct cur *c, int *h, int *mi, int *s)
{
	return digits(c, 2, h) && lit(c, ":") && digits(c, 2, mi) &&
	       lit(c, ":") && digits(c, 2, s);
}

/*
 * The long day names start with the short ones: try the long list first
 * for RFC 850, and require the separator that follows to tell them apart.
 */
int gs_http_date_parse(const char *s, size_t len, int64_t *t)
{
	struct cur c;
	int mon, day, year, h, mi, sec, wd;
	int64_t y;

	ht_trim(&s, &len);
	c.p = s;
	c.end = s + len;
	if ((wd = name(&c, weekday, 7)) >= 0 && lit(&c, ", ")) {
		/* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
		if (!digits(&c, 2, &day) || !lit(&c, "-") ||
		    (mon = name(&c, month, 12)) < 0 || !lit(&c, "-") ||
		    !digits(&c, 2, &year) || !lit(&c, " ") ||
		    !time_of_day(&c, &h, &mi, &sec) || !lit(&c, " GMT"))
			return -1;
		/* a fixed pivot keeps this pure: 70-99 are 19xx, 00-69 20xx */
		y = year + (year >= 70 ? 1900 : 2000);
	} else {
		c.p = s;
		if ((wd = name(&c, wkday, 7)) < 0)
			return -1;
		if (lit(&c, ", ")) {
			/* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
			if (!digits(&c, 2, &day) || !lit(&c, " ") ||
			    (mon = name(&c, month, 12)) < 0 || !lit(&c, " ") ||
			    !digits(&c, 4, &year) || !lit(&c, " ") ||
			    !time_of_day(&c, &h, &mi, &sec) || !lit(&c, " GMT"))
				return -1;
		} else {
			/* asctime: Sun Nov  6 08:49:37 1994 */
			if (!lit(&c, " ") || (mon = name(&c, month, 12)) < 0 ||
			    !lit(&c, " "))
				return -1;
			if (lit(&c, " ")) {
				if (!digits(&c, 1, &day))
					return -1;
			} else if (!digits(&c, 2, &day)) {
				return -1;
			}
			if (!lit(&c, " ") || !time_of_day(&c, &h, &mi, &sec) ||
			    !lit(&c, " ") || !digits(&c, 4, &year))
				return -1;
		}
		y = year;
	}
	if (c.p != c.end)
		return -1;
	/* second 60: a leap second (RFC 5322), counted as the next minute */
	if (day < 1 || day > mdays[mon] + (mon == 1 && leap(y)) || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	(void)wd; /* a wrong day name is tolerated, as most servers do */
	*t = days_from_civil(y, mon + 1, day) * 86400 + h * 3600 + mi * 60 +
	     sec;
	return 0;
}

/* @v in exactly @n decimal digits, zero padded (0 <= v < 10^n) */
static void put_digits(char *out, int64_t v, int n)
{
	while (n--) {
		out[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void gs_http_date_format(int64_t t, char *out)
{
	int64_t days, secs, y;
	int m, d, wd;

	t = clamp(t, DATE_MIN, DATE_MAX);
	days = t / 86400;
	secs = t % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	/* 1970-01-01 was a Thursday */
	wd = (int)(((days % 7) + 7 + 4) % 7);
	memcpy(out, wkday[wd], 3);
	memcpy(out + 3, ", ", 2);
	put_digits(out + 5, d, 2);
	out[7] = ' ';
	memcpy(out + 8, month[m - 1], 3);
	out[11] = ' ';
	put_digits(out + 12, y, 4);
	out[16] = ' ';
	put_digits(out + 17, secs / 3600, 2);
	out[19] = ':';
	put_digits(out + 20, secs / 60 % 60, 2);
	out[22] = ':';
	put_digits(out + 23, secs % 60, 2);
	memcpy(out + 25, " GMT", 5); /* and the NUL */
}
