/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memcache text and meta protocol parser: command lines in, requests
 * out.  Pure: no sockets, no store, no allocation; every pointer in a
 * request points into the caller's buffer or into the request itself.
 */
#ifndef MC_PROTO_H
#define MC_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MC_KEY_MAX	 250  /* longest key, bytes (after base64 decoding) */
#define MC_LINE_MAX	 2048 /* a line without a newline past this closes */
#define MC_OPAQUE_MAX	 32   /* longest meta O token */
#define MC_META_MAX	 24   /* meta flags kept per request */
/* memcached's longest data block (an int32 with its CRLF): over it, and
 * over --max-item, a storage line is a bad command line */
#define MC_BLOCK_MAX	 (INT32_MAX - 2)
#define MC_REL_TIME_MAX	 (60 * 60 * 24 * 30) /* exptime: relative below */
/*
 * A retrieval line is parsed whole when its newline comes within this
 * many bytes; a longer one streams: its keys are taken from the read
 * buffer as they arrive (mc_parse_get_head(), mc_stream_key()), so a get
 * of any number of keys needs no buffer that grows with the line.
 */
#define MC_GET_WHOLE_MAX 8192
/*
 * The longest key of goblind's admin commands ("goblin inspect KEY b"):
 * the store's (GS_KEY_MAX), base64 on the line (5,464 bytes), so such a
 * line may be as long as a retrieval line parsed whole.
 */
#define MC_ADMIN_KEY_MAX 4096

enum mc_cmd {
	MC_NONE = 0,
	MC_GET,
	MC_GETS,
	MC_GAT,
	MC_GATS,
	MC_SET,
	MC_ADD,
	MC_REPLACE,
	MC_APPEND,
	MC_PREPEND,
	MC_CAS,
	MC_INCR,
	MC_DECR,
	MC_DELETE,
	MC_TOUCH,
	MC_FLUSH_ALL,
	MC_STATS,
	MC_VERSION,
	MC_VERBOSITY,
	MC_QUIT,
	MC_METADUMP, /* lru_crawler metadump all|hash [PREFIX] */
	MC_CRAWL,    /* lru_crawler crawl CLASSES: accepted, nothing to do */
	MC_MG,
	MC_MS,
	MC_MD,
	MC_MA,
	MC_MN,
	MC_ME,
	MC_GOBLIN, /* goblin inspect|stat KEY [b]: goblind's admin commands */
};

/* What mc_parse() found. */
enum mc_parse_result {
	MC_PARSE_OK = 0,       /* a request in *req */
	MC_PARSE_MORE,	       /* no whole line yet: read more */
	MC_PARSE_ERROR,	       /* unknown command or argument count: "ERROR" */
	MC_PARSE_CLIENT_ERROR, /* req->err follows "CLIENT_ERROR " */
	MC_PARSE_TOO_LONG,     /* no newline within the limit: close */
	MC_PARSE_CLOSE,	       /* an HTTP request line: close (memcached
				* does, against cross-protocol requests) */
};

/* Meta set modes (ms M token) and arithmetic modes (ma M token). */
enum mc_ms_mode {
	MC_MS_SET = 0,
	MC_MS_ADD,
	MC_MS_REPLACE,
	MC_MS_APPEND,
	MC_MS_PREPEND
};

/* One meta flag as given: its letter and its token (may be empty). */
struct mc_flag {
	char f;
	uint8_t len;
	const char *tok;
};

/*
 * Meta flags, in request order (response flags follow that order), and
 * the numeric tokens already parsed.  A field is meaningful only when
 * its letter is set in @seen (bit f - 'A').
 */
struct mc_meta {
	uint64_t seen;
	unsigned n;
	struct mc_flag fl[MC_META_MAX];
	int64_t ttl;	       /* T */
	int64_t vivify_ttl;    /* N */
	int64_t recache;       /* R */
	uint64_t cas;	       /* C */
	uint32_t client_flags; /* F */
	uint64_t delta;	       /* D (ma), default 1 */
	uint64_t initial;      /* J (ma), default 0 */
	int mode;	       /* M: enum mc_ms_mode, or 1 for ma decrement */
	uint64_t range_first;  /* G (mg): first byte */
	uint64_t range_last;   /* G: last byte, UINT64_MAX: to the end */
};

struct mc_req {
	enum mc_cmd cmd;
	const char *key; /* single-key commands; may point at keybuf */
	size_t klen;
	const char *keys; /* get/gets/gat/gats: the key list ... */
	size_t keys_len;  /* ... for mc_next_key() */
	uint32_t flags;	  /* client flags */
	int64_t exptime;  /* as sent: see mc_exptime() */
	uint64_t bytes;	  /* value bytes that follow the line */
	uint64_t cas;	  /* cas unique */
	uint64_t delta;	  /* incr/decr */
	uint64_t num;	  /* verbosity level, flush_all delay */
	bool has_num;
	bool noreply;
	bool b64;	 /* meta b: key was base64, keybuf holds it */
	bool swallow;	 /* an ms refused after its length parsed:
			  * bytes + 2 bytes follow all the same */
	const char *arg; /* stats: the argument, metadump: the key
			  * prefix; NULL: none */
	size_t arg_len;
	const char *err; /* MC_PARSE_CLIENT_ERROR: the message */
	struct mc_meta meta;
	char keybuf[MC_KEY_MAX + 1];
};

/*
 * Parse one command line at the start of @buf (@len bytes, not NUL
 * terminated).  Lines end with "\n" or "\r\n".  On every result but
 * MC_PARSE_MORE and MC_PARSE_TOO_LONG, *@consumed is the length of the
 * line with its newline: the caller skips it.  A storage command's data
 * block is not consumed: req->bytes + 2 bytes follow.  A line with no
 * newline is MC_PARSE_MORE up to MC_LINE_MAX bytes, or up to @get_max
 * for a retrieval command (long multi-gets), MC_PARSE_TOO_LONG after.
 */
enum mc_parse_result mc_parse(const char *buf, size_t len, size_t get_max,
			      struct mc_req *req, size_t *consumed);

/*
 * The head of a retrieval line too long to parse whole ("get ", "gats
 * EXPTIME " ...): req->cmd and req->exptime, and in *@consumed the bytes
 * up to its first key.  MC_PARSE_OK, MC_PARSE_CLIENT_ERROR (a bad exptime:
 * the rest of the line is to be skipped), or MC_PARSE_TOO_LONG (not a
 * retrieval command: close, as for any long line).
 */
enum mc_parse_result mc_parse_get_head(const char *buf, size_t len,
				       struct mc_req *req, size_t *consumed);

/*
 * The next key of a streamed key list in @buf (@len bytes): 1, a key at
 * *@key (its *@klen bytes, a "\r" before the newline left out) and
 * *@consumed the bytes up to its end; 2, the line ended (*@consumed: the
 * newline included); 0, more bytes are needed (*@consumed: the spaces
 * before); -1, a key over MC_KEY_MAX (*@consumed: the spaces before).
 */
int mc_stream_key(const char *buf, size_t len, const char **key, size_t *klen,
		  size_t *consumed);

/*
 * The next key of a get's key list: advances *@p (start with req->keys)
 * up to @end.  Returns false when no key is left.
 */
bool mc_next_key(const char **p, const char *end, const char **key,
		 size_t *klen);

/* A key memcache accepts: 1..MC_KEY_MAX bytes, no control or space. */
bool mc_key_valid(const char *key, size_t klen);

/*
 * Decode standard base64 (with padding) of @len bytes into @out (room
 * for @max).  Returns the decoded length or -1.
 */
int mc_b64_decode(const char *in, size_t len, char *out, size_t max);

/* Encode @len bytes into @out (room for 4 * ceil(len / 3) + 1). */
size_t mc_b64_encode(const void *in, size_t len, char *out);

/*
 * Parse an unsigned decimal of the whole token (no sign, no spaces) no
 * larger than @max.  Returns false on anything else.
 */
bool mc_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out);
/* Signed decimal of the whole token. */
bool mc_parse_i64(const char *s, size_t len, int64_t *out);

/*
 * An exptime as sent (0: never, negative: already expired, up to 30 days:
 * relative, else absolute unix seconds) as absolute unix seconds for the
 * store (0: never; an expired time is returned as -1).
 */
int64_t mc_exptime(int64_t sent, int64_t now);

/* True when @m holds flag @f. */
static inline bool mc_meta_has(const struct mc_meta *m, char f)
{
	return f >= 'A' && f <= 'z' && (m->seen >> (f - 'A') & 1);
}

#endif
