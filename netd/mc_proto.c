/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memcache protocol parser: tokenizes one command line and checks it
 * the way memcached 1.6 does, so that every malformed line gets the reply
 * memcached gives it (see goblind(8), PROTOCOL).
 */
#include <string.h>

#include "mc_proto.h"

#define MAX_TOKENS 32 /* a non-get line with more is an ERROR */

struct tok {
	const char *p;
	size_t len;
};

/* Split on spaces (runs of them count once), at most @max tokens. */
static size_t tokenize(const char *p, const char *end, struct tok *t,
		       size_t max)
{
	size_t n = 0;

	while (p < end) {
		const char *s;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		s = p;
		while (p < end && *p != ' ')
			p++;
		if (n == max)
			return max + 1; /* too many */
		t[n].p = s;
		t[n].len = (size_t)(p - s);
		n++;
	}
	return n;
}

static bool tok_is(const struct tok *t, const char *s)
{
	size_t l = strlen(s);

	return t->len == l && !memcmp(t->p, s, l);
}

bool mc_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool mc_parse_i64(const char *s, size_t len, int64_t *out)
{
	uint64_t v;
	bool neg = len > 0 && s[0] == '-';

	if (neg) {
		s++;
		len--;
	}
	if (!mc_parse_u64(s, len, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX,
			  &v))
		return false;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

int64_t mc_exptime(int64_t sent, int64_t now)
{
	if (sent == 0)
		return 0;
	if (sent < 0)
		return -1;
	if (sent <= MC_REL_TIME_MAX)
		return now + sent;
	return sent <= now ? -1 : sent;
}

bool mc_key_valid(const char *key, size_t klen)
{
	if (klen == 0 || klen > MC_KEY_MAX)
		return false;
	for (size_t i = 0; i < klen; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c <= ' ' || c == 0x7f)
			return false;
	}
	return true;
}

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int mc_b64_decode(const char *in, size_t len, char *out, size_t max)
{
	size_t o = 0;

	if (len == 0 || len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;
		uint32_t w;

		for (int j = 0; j < 4; j++) {
			unsigned char c = (unsigned char)in[i + j];

			if (c == '=' && i + 4 == len && j >= 2) {
				v[j] = 0;
				pad++;
				continue;
			}
			if (pad || (v[j] = b64_val(c)) < 0)
				return -1; /* data after padding, or junk */
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
		    (uint32_t)v[2] << 6 | (uint32_t)v[3];
		if (o + 3 - (size_t)pad > max)
			return -1;
		out[o++] = (char)(w >> 16);
		if (pad < 2)
			out[o++] = (char)(w >> 8);
		if (pad < 1)
			out[o++] = (char)w;
	}
	return (int)o;
}

size_t mc_b64_encode(const void *in, size_t len, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = in;
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t w = (uint32_t)p[i] << 16;
		size_t n = len - i < 3 ? len - i : 3;

		if (n > 1)
			w |= (uint32_t)p[i + 1] << 8;
		if (n > 2)
			w |= p[i + 2];
		out[o++] = a[w >> 18 & 63];
		out[o++] = a[w >> 12 & 63];
		out[o++] = n > 1 ? a[w >> 6 & 63] : '=';
		out[o++] = n > 2 ? a[w & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

bool mc_next_key(const char **p, const char *end, const char **key,
		 size_t *klen)
{
	const char *s = *p;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return false;
	*key = s;
	while (s < end && *s != ' ')
		s++;
	*klen = (size_t)(s - *key);
	*p = s;
	return true;
}

static enum mc_parse_result client_error(struct mc_req *r, const char *msg)
{
	r->err = msg;
	return MC_PARSE_CLIENT_ERROR;
}

#define BAD_FORMAT "bad command line format"

static enum mc_parse_result set_key(struct mc_req *r, const struct tok *t)
{
	if (!mc_key_valid(t->p, t->len))
		return client_error(r, BAD_FORMAT);
	r->key = t->p;
	r->klen = t->len;
	return MC_PARSE_OK;
}

/*
 * "noreply" as the last of @n tokens, past @first_optional tokens
 * (memcached's set_noreply_maybe() looks at the last token whatever its
 * place: "verbosity noreply" and "set k 0 0 noreply" are quiet errors).
 */
static void take_noreply(struct mc_req *r, const struct tok *t, size_t n,
			 size_t first_optional)
{
	if (n > first_optional && tok_is(&t[n - 1], "noreply"))
		r->noreply = true;
}

/* set add replace append prepend cas: key flags exptime bytes [cas] */
static enum mc_parse_result parse_storage(struct mc_req *r, const struct tok *t,
					  size_t n)
{
	bool cas = r->cmd == MC_CAS;
	size_t want = cas ? 6 : 5;
	uint64_t v;

	if (n != want && n != want + 1)
		return MC_PARSE_ERROR;
	take_noreply(r, t, n, 1);
	if (set_key(r, &t[1]) != MC_PARSE_OK)
		return MC_PARSE_CLIENT_ERROR;
	if (!mc_parse_u64(t[2].p, t[2].len, UINT32_MAX, &v) ||
	    !mc_parse_i64(t[3].p, t[3].len, &r->exptime) ||
	    !mc_parse_u64(t[4].p, t[4].len, INT64_MAX, &r->bytes) ||
	    (cas && !mc_parse_u64(t[5].p, t[5].len, UINT64_MAX, &r->cas)))
		return client_error(r, BAD_FORMAT);
	r->flags = (uint32_t)v;
	return MC_PARSE_OK;
}

static enum mc_parse_result parse_retrieval(struct mc_req *r,
					    const struct tok *t, size_t n,
					    const char *end)
{
	size_t first = 1, kl;

	if (r->cmd == MC_GAT || r->cmd == MC_GATS) {
		if (n < 2)
			return MC_PARSE_ERROR;
		if (!mc_parse_i64(t[1].p, t[1].len, &r->exptime))
			return client_error(r, "invalid exptime argument");
		first = 2;
	}
	if (n < first + (first == 1))
		return MC_PARSE_ERROR;
	if (n == first) { /* "gat 10": no key, memcached answers END */
		r->keys = end;
		return MC_PARSE_OK;
	}
	r->keys = t[first].p;
	r->keys_len = (size_t)(end - t[first].p);
	/* one bad key refuses the line before any value (memcached) */
	for (const char *p = r->keys, *k; mc_next_key(&p, end, &k, &kl);)
		if (!mc_key_valid(k, kl))
			return client_error(r, BAD_FORMAT);
	return MC_PARSE_OK;
}

/* incr/decr KEY DELTA, touch KEY EXPTIME, each with an optional noreply */
static enum mc_parse_result parse_key_num(struct mc_req *r, const struct tok *t,
					  size_t n)
{
	bool touch = r->cmd == MC_TOUCH;

	if (n != 3 && n != 4)
		return MC_PARSE_ERROR;
	take_noreply(r, t, n, 1);
	if (set_key(r, &t[1]) != MC_PARSE_OK)
		return MC_PARSE_CLIENT_ERROR;
	if (touch && !mc_parse_i64(t[2].p, t[2].len, &r->exptime))
		return client_error(r, "invalid exptime argument");
	if (!touch && !mc_parse_u64(t[2].p, t[2].len, UINT64_MAX, &r->delta))
		return client_error(r, "invalid numeric delta argument");
	return MC_PARSE_OK;
}

static enum mc_parse_result parse_delete(struct mc_req *r, const struct tok *t,
					 size_t n)
{
	bool ok;

	if (n < 2 || n > 4)
		return MC_PARSE_ERROR;
	take_noreply(r, t, n, 2);
	/* a legacy "0" hold time is allowed, nothing else */
	ok = n == 2 || (n == 3 && (r->noreply || tok_is(&t[2], "0"))) ||
	     (n == 4 && r->noreply && tok_is(&t[2], "0"));
	if (!ok)
		return client_error(r, BAD_FORMAT
				    ".  Usage: delete <key> [noreply]");
	return set_key(r, &t[1]);
}

static enum mc_parse_result parse_flush(struct mc_req *r, const struct tok *t,
					size_t n)
{
	int64_t d;

	if (n > 3)
		return MC_PARSE_ERROR;
	take_noreply(r, t, n, 1);
	if (n - r->noreply == 2) {
		if (!mc_parse_i64(t[1].p, t[1].len, &d))
			return client_error(r, "invalid exptime argument");
		r->num = d > 0 ? (uint64_t)d : 0;
		r->has_num = true;
	} else if (n == 3) {
		return MC_PARSE_ERROR; /* two arguments, no noreply */
	}
	return MC_PARSE_OK;
}

static enum mc_parse_result parse_verbosity(struct mc_req *r,
					    const struct tok *t, size_t n)
{
	if (n != 2 && n != 3)
		return MC_PARSE_ERROR;
	take_noreply(r, t, n, 1);
	if (!mc_parse_u64(t[1].p, t[1].len, UINT32_MAX, &r->num))
		return client_error(r, BAD_FORMAT);
	r->has_num = true;
	return MC_PARSE_OK;
}

/* ---- meta commands ---- */

/* The flags each meta command takes (P and L are taken and ignored). */
static const char *meta_allowed(enum mc_cmd c)
{
	switch (c) {
	case MC_MG:
		return "bcfhklOqstuvGNRTPL";
	case MC_MS:
		return "bcCFIkOqsTMPL";
	case MC_MD:
		return "bCIkOqTPL";
	case MC_MA:
		return "bCNJDTMqtcvkOPL";
	case MC_ME:
		return "bPL";
	default:
		return "";
	}
}

static bool tok_i64(const struct mc_flag *f, int64_t *out)
{
	return mc_parse_i64(f->tok, f->len, out);
}

static bool tok_u64(const struct mc_flag *f, uint64_t max, uint64_t *out)
{
	return mc_parse_u64(f->tok, f->len, max, out);
}

/* G<first>-[<last>]: an inclusive byte range, HTTP style. */
static bool parse_range(struct mc_meta *m, const struct mc_flag *f)
{
	const char *dash = memchr(f->tok, '-', f->len);
	size_t a;

	if (!dash)
		return false;
	a = (size_t)(dash - f->tok);
	if (!mc_parse_u64(f->tok, a, UINT64_MAX - 1, &m->range_first))
		return false;
	if (a + 1 == f->len) {
		m->range_last = UINT64_MAX;
		return true;
	}
	return mc_parse_u64(dash + 1, f->len - a - 1, UINT64_MAX - 1,
			    &m->range_last) &&
	       m->range_last >= m->range_first;
}

static bool meta_mode(struct mc_req *r, const struct mc_flag *f)
{
	struct mc_meta *m = &r->meta;

	if (f->len != 1)
		return false;
	if (r->cmd == MC_MA) {
		switch (f->tok[0]) {
		case 'I':
		case 'i':
		case '+':
			m->mode = 0;
			return true;
		case 'D':
		case 'd':
		case '-':
			m->mode = 1;
			return true;
		}
		return false;
	}
	switch (f->tok[0]) {
	case 'S':
	case 's':
		m->mode = MC_MS_SET;
		return true;
	case 'E':
	case 'e':
		m->mode = MC_MS_ADD;
		return true;
	case 'R':
	case 'r':
		m->mode = MC_MS_REPLACE;
		return true;
	case 'A':
	case 'a':
		m->mode = MC_MS_APPEND;
		return true;
	case 'P':
	case 'p':
		m->mode = MC_MS_PREPEND;
		return true;
	}
	return false;
}

/* The numeric token of one flag; false: a bad token. */
static bool meta_token(struct mc_req *r, const struct mc_flag *f)
{
	struct mc_meta *m = &r->meta;
	uint64_t v;

	switch (f->f) {
	case 'T':
		return tok_i64(f, &m->ttl);
	case 'N':
		return tok_i64(f, &m->vivify_ttl);
	case 'R':
		return tok_i64(f, &m->recache);
	case 'C':
		return tok_u64(f, UINT64_MAX, &m->cas);
	case 'D':
		return tok_u64(f, UINT64_MAX, &m->delta);
	case 'J':
		return tok_u64(f, UINT64_MAX, &m->initial);
	case 'G':
		return parse_range(m, f);
	case 'F':
		if (!tok_u64(f, UINT32_MAX, &v))
			return false;
		m->client_flags = (uint32_t)v;
		return true;
	}
	return true;
}

static const char *meta_bad_token(const struct mc_req *r, char f)
{
	if (r->cmd == MC_MA)
		return "invalid or duplicate flag";
	if (f == 'F' && r->cmd == MC_MS)
		return BAD_FORMAT;
	if (f == 'M')
		return "invalid mode for ms M token";
	return "bad token in command line format";
}

static enum mc_parse_result parse_meta_flags(struct mc_req *r,
					     const struct tok *t, size_t n)
{
	const char *allowed = meta_allowed(r->cmd);
	struct mc_meta *m = &r->meta;

	m->delta = 1;
	for (size_t i = 0; i < n; i++) {
		struct mc_flag f = { t[i].p[0], 0, t[i].p + 1 };
		uint64_t bit;

		if (t[i].len - 1 > 255 || !strchr(allowed, f.f) || f.f < 'A' ||
		    f.f > 'z')
			return client_error(
				r, r->cmd == MC_MA ?
					   "invalid or duplicate flag" :
					   "invalid flag");
		f.len = (uint8_t)(t[i].len - 1);
		bit = 1ull << (f.f - 'A');
		if (m->seen & bit)
			return client_error(
				r, r->cmd == MC_MA ?
					   "invalid or duplicate flag" :
					   "duplicate flag");
		m->seen |= bit;
		if (f.f == 'O' && f.len > MC_OPAQUE_MAX)
			return client_error(r, "opaque token too long");
		if (f.f == 'M' && !meta_mode(r, &f))
			return client_error(r, meta_bad_token(r, 'M'));
		if (f.f != 'M' && !meta_token(r, &f))
			return client_error(r, meta_bad_token(r, f.f));
		if (m->n == MC_META_MAX)
			return client_error(r, "too many meta flags");
		m->fl[m->n++] = f;
	}
	return MC_PARSE_OK;
}

static enum mc_parse_result meta_key(struct mc_req *r, const struct tok *t)
{
	if (r->b64) {
		int n;

		if (t->len > MC_KEY_MAX)
			return client_error(r, BAD_FORMAT);
		n = mc_b64_decode(t->p, t->len, r->keybuf, MC_KEY_MAX);
		if (n <= 0)
			return client_error(r, "error decoding key");
		r->keybuf[n] = '\0';
		r->key = r->keybuf;
		r->klen = (size_t)n;
		return MC_PARSE_OK;
	}
	return set_key(r, t);
}

/* True when a b flag is among the tokens (the key is decoded first). */
static bool has_b_flag(const struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].len == 1 && t[i].p[0] == 'b')
			return true;
	return false;
}

static enum mc_parse_result parse_meta(struct mc_req *r, const struct tok *t,
				       size_t n)
{
	enum mc_parse_result ret;
	size_t first = 2;

	if (r->cmd == MC_MN)
		return MC_PARSE_OK;
	if (n < 2)
		return r->cmd == MC_ME ? client_error(r, BAD_FORMAT) :
					 MC_PARSE_ERROR;
	if (r->cmd == MC_MS) {
		if (n < 3 ||
		    !mc_parse_u64(t[2].p, t[2].len, INT64_MAX, &r->bytes))
			return client_error(r, BAD_FORMAT);
		r->swallow = true; /* its data block follows regardless */
		first = 3;
	}
	if (n > first + MC_META_MAX)
		return client_error(r, "too many meta flags");
	r->b64 = has_b_flag(t + first, n - first);
	if (r->cmd == MC_ME && n > 3)
		return client_error(r, BAD_FORMAT);
	ret = parse_meta_flags(r, t + first, n - first);
	if (ret != MC_PARSE_OK)
		return ret;
	if (meta_key(r, &t[1]) != MC_PARSE_OK)
		return MC_PARSE_CLIENT_ERROR;
	r->noreply = mc_meta_has(&r->meta, 'q');
	r->swallow = false;
	return MC_PARSE_OK;
}

static const struct {
	const char *name;
	enum mc_cmd cmd;
} commands[] = {
	{ "get", MC_GET },
	{ "gets", MC_GETS },
	{ "gat", MC_GAT },
	{ "gats", MC_GATS },
	{ "set", MC_SET },
	{ "add", MC_ADD },
	{ "replace", MC_REPLACE },
	{ "append", MC_APPEND },
	{ "prepend", MC_PREPEND },
	{ "cas", MC_CAS },
	{ "incr", MC_INCR },
	{ "decr", MC_DECR },
	{ "delete", MC_DELETE },
	{ "touch", MC_TOUCH },
	{ "flush_all", MC_FLUSH_ALL },
	{ "stats", MC_STATS },
	{ "version", MC_VERSION },
	{ "verbosity", MC_VERBOSITY },
	{ "quit", MC_QUIT },
	{ "lru_crawler", MC_METADUMP },
	{ "mg", MC_MG },
	{ "ms", MC_MS },
	{ "md", MC_MD },
	{ "ma", MC_MA },
	{ "mn", MC_MN },
	{ "me", MC_ME },
	{ "goblin", MC_GOBLIN },
};

static enum mc_cmd lookup(const struct tok *t)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (tok_is(t, commands[i].name))
			return commands[i].cmd;
	return MC_NONE;
}

/*
 * lru_crawler metadump all|hash [PREFIX]: memcached's listing, with an
 * optional key prefix (a goblind extension).  memcached's other crawler
 * subcommands and class-id lists are not supported: ERROR, as for an
 * unknown command.
 */
/* memcached's class list: "all" or ids 1..63 separated by commas */
static bool crawl_classes(const struct tok *t)
{
	const char *p = t->p, *end = t->p + t->len;

	if (tok_is(t, "all"))
		return true;
	while (p < end) {
		const char *s = p;
		uint64_t id;

		while (p < end && *p != ',')
			p++;
		if (!mc_parse_u64(s, (size_t)(p - s), 63, &id) || id == 0)
			return false;
		if (p < end)
			p++;
	}
	return t->len > 0 && end[-1] != ',';
}

static enum mc_parse_result parse_metadump(struct mc_req *r,
					   const struct tok *t, size_t n)
{
	/*
	 * crawl: memcached's crawler reclaims expired items in the
	 * background; the store drops an expired object when it finds it,
	 * so there is nothing to start, and the command is answered as
	 * memcached answers a crawl it started.
	 */
	if (n == 3 && tok_is(&t[1], "crawl")) {
		r->cmd = MC_CRAWL;
		r->err = crawl_classes(&t[2]) ? NULL : "invalid class id";
		return MC_PARSE_OK;
	}
	if (n < 3 || n > 4 || !tok_is(&t[1], "metadump") ||
	    !(tok_is(&t[2], "all") || tok_is(&t[2], "hash")))
		return MC_PARSE_ERROR;
	if (n == 4) {
		if (!mc_key_valid(t[3].p, t[3].len))
			return client_error(r, BAD_FORMAT);
		r->arg = t[3].p;
		r->arg_len = t[3].len;
	}
	return MC_PARSE_OK;
}

/*
 * goblin inspect|stat KEY [b]: goblind's admin commands, which memcached
 * does not have (it answers ERROR, as to any unknown command).  KEY is a
 * memcache key, or with b the base64 of any store key (HTTP's keys may be
 * longer than memcache's and hold spaces); mc_admin.c decodes it, since
 * keybuf holds MC_KEY_MAX bytes.
 */
static enum mc_parse_result parse_goblin(struct mc_req *r, const struct tok *t,
					 size_t n)
{
	if (n < 3 || n > 4 ||
	    !(tok_is(&t[1], "inspect") || tok_is(&t[1], "stat")))
		return MC_PARSE_ERROR;
	r->arg = t[1].p;
	r->arg_len = t[1].len;
	r->key = t[2].p;
	r->klen = t[2].len;
	if (n == 4) {
		if (!tok_is(&t[3], "b") ||
		    t[2].len > (MC_ADMIN_KEY_MAX + 2) / 3 * 4)
			return client_error(r, BAD_FORMAT);
		r->b64 = true;
	} else if (!mc_key_valid(t[2].p, t[2].len)) {
		return client_error(r, BAD_FORMAT);
	}
	return MC_PARSE_OK;
}

/* Lines that may be longer than MC_LINE_MAX: up to @get_max. */
static bool is_admin(const char *buf, size_t len)
{
	return len >= 7 && !memcmp(buf, "goblin ", 7);
}

static bool is_retrieval(const char *buf, size_t len)
{
	return (len >= 4 && !memcmp(buf, "get ", 4)) ||
	       (len >= 5 &&
		(!memcmp(buf, "gets ", 5) || !memcmp(buf, "gat ", 4))) ||
	       (len >= 5 && !memcmp(buf, "gats ", 5));
}

/*
 * An HTTP request line sent to the memcache port (a browser, or a
 * cross-protocol request from a web page): memcached closes the
 * connection when an unknown command's last token starts with "HTTP/",
 * unless the command's first letter is one of those memcached sorts its
 * commands by (then it answers ERROR); a one-letter command is an ERROR
 * first.
 */
static bool is_http(const struct tok *t, size_t n)
{
	if (n < 2 || n > MAX_TOKENS || t[0].len < 2 ||
	    strchr("gsacidt", t[0].p[0]) || (t[0].p[0] == 'm' && t[0].len == 2))
		return false;
	return t[n - 1].len >= 5 && !memcmp(t[n - 1].p, "HTTP/", 5);
}

static enum mc_parse_result dispatch(struct mc_req *r, const struct tok *t,
				     size_t n, const char *end)
{
	switch (r->cmd) {
	case MC_GET:
	case MC_GETS:
	case MC_GAT:
	case MC_GATS:
		return parse_retrieval(r, t, n, end);
	case MC_SET:
	case MC_ADD:
	case MC_REPLACE:
	case MC_APPEND:
	case MC_PREPEND:
	case MC_CAS:
		return parse_storage(r, t, n);
	case MC_INCR:
	case MC_DECR:
	case MC_TOUCH:
		return parse_key_num(r, t, n);
	case MC_DELETE:
		return parse_delete(r, t, n);
	case MC_FLUSH_ALL:
		return parse_flush(r, t, n);
	case MC_VERBOSITY:
		return parse_verbosity(r, t, n);
	case MC_STATS:
		if (n > 1) {
			r->arg = t[1].p;
			r->arg_len = (size_t)(end - t[1].p);
		}
		return MC_PARSE_OK;
	case MC_VERSION:
	case MC_QUIT:
		return MC_PARSE_OK;
	case MC_METADUMP:
	case MC_CRAWL:
		return parse_metadump(r, t, n);
	case MC_MG:
	case MC_MS:
	case MC_MD:
	case MC_MA:
	case MC_MN:
	case MC_ME:
		return parse_meta(r, t, n);
	case MC_GOBLIN:
		return parse_goblin(r, t, n);
	case MC_NONE:
		break;
	}
	return MC_PARSE_ERROR;
}

enum mc_parse_result mc_parse(const char *buf, size_t len, size_t get_max,
			      struct mc_req *req, size_t *consumed)
{
	const char *nl = memchr(buf, '\n', len), *end;
	struct tok t[MAX_TOKENS];
	size_t n;

	memset(req, 0, offsetof(struct mc_req, keybuf));
	if (!nl) {
		size_t max = is_retrieval(buf, len) || is_admin(buf, len) ?
				     get_max :
				     MC_LINE_MAX;

		return len > max ? MC_PARSE_TOO_LONG : MC_PARSE_MORE;
	}
	*consumed = (size_t)(nl - buf) + 1;
	end = nl > buf && nl[-1] == '\r' ? nl - 1 : nl;
	if ((size_t)(end - buf) > MC_LINE_MAX && !is_retrieval(buf, len) &&
	    !is_admin(buf, len))
		return MC_PARSE_TOO_LONG;
	n = tokenize(buf, end, t, MAX_TOKENS);
	if (n == 0)
		return MC_PARSE_ERROR;
	req->cmd = lookup(&t[0]);
	if (req->cmd == MC_NONE)
		return is_http(t, n) ? MC_PARSE_CLOSE : MC_PARSE_ERROR;
	if (n > MAX_TOKENS) {
		if (req->cmd != MC_GET && req->cmd != MC_GETS &&
		    req->cmd != MC_GAT && req->cmd != MC_GATS)
			return MC_PARSE_ERROR;
		n = MAX_TOKENS; /* the key list runs to the end anyway */
	}
	return dispatch(req, t, n, end);
}

enum mc_parse_result mc_parse_get_head(const char *buf, size_t len,
				       struct mc_req *req, size_t *consumed)
{
	const char *p = buf, *end = buf + len, *s;
	struct tok t;

	memset(req, 0, offsetof(struct mc_req, keybuf));
	while (p < end && *p == ' ')
		p++;
	s = p;
	while (p < end && *p != ' ' && *p != '\n')
		p++;
	t.p = s;
	t.len = (size_t)(p - s);
	req->cmd = lookup(&t);
	if (p == end || *p != ' ' ||
	    (req->cmd != MC_GET && req->cmd != MC_GETS && req->cmd != MC_GAT &&
	     req->cmd != MC_GATS))
		return MC_PARSE_TOO_LONG;
	while (p < end && *p == ' ')
		p++;
	if (req->cmd == MC_GAT || req->cmd == MC_GATS) {
		s = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (p == end || *p != ' ')
			return MC_PARSE_TOO_LONG;
		*consumed = (size_t)(p - buf);
		if (!mc_parse_i64(s, (size_t)(p - s), &req->exptime))
			return client_error(req, "invalid exptime argument");
		while (p < end && *p == ' ')
			p++;
	}
	*consumed = (size_t)(p - buf);
	return MC_PARSE_OK;
}

int mc_stream_key(const char *buf, size_t len, const char **key, size_t *klen,
		  size_t *consumed)
{
	const char *p = buf, *end = buf + len, *s;

	while (p < end && *p == ' ')
		p++;
	*consumed = (size_t)(p - buf);
	if (p == end)
		return 0;
	if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')) {
		*consumed += *p == '\n' ? 1 : 2;
		return 2;
	}
	s = p;
	while (p < end && *p != ' ' && *p != '\n')
		p++;
	if (p == end) /* a "\r" may still be the line's end */
		return (size_t)(p - s) > MC_KEY_MAX + 1 ? -1 : 0;
	*key = s;
	*klen = (size_t)(p - s);
	if (*p == '\n' && *klen && s[*klen - 1] == '\r')
		--*klen;
	*consumed = (size_t)(s + *klen - buf);
	return 1;
}
