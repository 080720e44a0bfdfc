/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblinctl's memcache client: a TCP connection with a read buffer, and
 * pure parsers of the replies it reads (unit-tested alone: no dependence
 * on the rest of goblinctl).
 */
#ifndef GOBLINCTL_MC_CLIENT_H
#define GOBLINCTL_MC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MCC_KEY_MAX	  250 /* memcache's key limit */
/* A store key may be longer (HTTP's): listings and goblin commands. */
#define MCC_STORE_KEY_MAX 4096 /* the store's GS_KEY_MAX */
/* a reply line longer than this: -EPROTO (a metadump line of the longest
 * key, every byte %XX, fits) */
#define MCC_LINE_MAX	  (16u << 10)
#define MCC_RBUF	  (64u << 10) /* the blocking client's read buffer */

/* What a reply line is. */
enum mcc_kind {
	MCC_VALUE, /* VALUE key flags bytes [cas]: bytes follow */
	MCC_END,
	MCC_STORED,
	MCC_NOT_STORED,
	MCC_EXISTS,
	MCC_NOT_FOUND,
	MCC_DELETED,
	MCC_STAT,  /* STAT name value */
	MCC_ERROR, /* ERROR, CLIENT_ERROR ..., SERVER_ERROR ... */
	MCC_OTHER, /* anything else (metadump lines, VERSION) */
};

struct mcc_reply {
	enum mcc_kind kind;
	uint32_t flags;	  /* MCC_VALUE */
	uint64_t bytes;	  /* MCC_VALUE: value bytes after the line */
	const char *text; /* the line without its newline ... */
	size_t len;	  /* ... (points into the caller's buffer) */
};

/*
 * Parse one reply line at the start of @buf (@len bytes).  Returns 1 when
 * no whole line is there yet, 0 with *@r filled and *@consumed the line's
 * length with its newline, or -EPROTO for a line longer than MCC_LINE_MAX
 * or a malformed VALUE line.
 */
int mcc_reply_parse(const char *buf, size_t len, struct mcc_reply *r,
		    size_t *consumed);

/* A key memcache accepts: 1..MCC_KEY_MAX bytes, no control or space. */
bool mcc_key_valid(const char *key, size_t klen);


/* One entry of "lru_crawler metadump": the decoded key and its fields. */
struct mcc_dump {
	char key[MCC_STORE_KEY_MAX + 1]; /* NUL-terminated */
	size_t klen;
	int64_t exp; /* unix seconds, -1: never */
	int64_t la;  /* unix seconds */
	uint64_t size;
};

/*
 * Parse a metadump line ("key=K exp=E la=L cas=C fetch=F cls=N size=S",
 * @len bytes without the newline; fields may come in any order, unknown
 * ones are skipped).  The key is URI-decoded.  Returns 0 or -EPROTO.
 */
int mcc_dump_parse(const char *line, size_t len, struct mcc_dump *d);

/* ---- the blocking client of the online commands ---- */

struct mcc_conn {
	int fd;
	char *buf;	   /* MCC_RBUF bytes */
	size_t start, end; /* unread bytes: buf[start..end) */
};

/*
 * Connect to @host:@port (TCP, Nagle off), or to the Unix socket @host
 * when it starts with '/' (@port unused).  Returns 0, or -1 with a
 * message in @why.  The connection owns a read buffer: mcc_close() frees
 * it.
 */
int mcc_connect(struct mcc_conn *c, const char *host, const char *port,
		char *why, size_t wlen);
void mcc_close(struct mcc_conn *c);

/* Send all of @buf: 0 or -errno. */
int mcc_send(struct mcc_conn *c, const void *buf, size_t len);

/*
 * Read and parse the next reply line.  Returns 0, -EPROTO, -ECONNRESET
 * when the server closed, or another -errno.  *@r points into the read
 * buffer until the next call.
 */
int mcc_read_reply(struct mcc_conn *c, struct mcc_reply *r);

/*
 * Read up to @len bytes of a value into @buf (buffered bytes first).
 * Returns the count (> 0), -ECONNRESET at the end of the stream, or
 * -errno.
 */
ssize_t mcc_read_some(struct mcc_conn *c, void *buf, size_t len);

/* Read the "\r\n" after a value: 0, -EPROTO or -errno. */
int mcc_read_crlf(struct mcc_conn *c);

#endif
