/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The mirror's origin fetcher (goblind --mirror URL): a few threads, each
 * driving a libcurl multi handle for the keys that hash to it.  A miss becomes one origin request however many
 * clients ask for the object meanwhile; a cacheable response is admitted
 * to the store as a fill while it arrives, and every waiting client reads
 * the fill (read-while-fill).  Uncacheable responses reach their clients
 * the same way, through a fill under a private key that is never served
 * by name and is deleted when the response is complete.
 */
#ifndef FETCH_H
#define FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../store/goblin.h"

struct fetcher;

struct fetch_opts {
	const char *origin;	/* base URL: "http://host:port[/prefix]" */
	unsigned timeout_ms;	/* connect + response head; and a transfer
				 * that makes no progress for this long */
	uint64_t max_object;	/* larger responses are passed, not stored */
	unsigned max_transfers;	/* origin transfers at once, in all */
	unsigned threads;	/* fetcher threads (shards by key hash),
				 * at most FETCH_THREADS_MAX; 0: 1 */
};

#define FETCH_THREADS_MAX 64

enum fetch_kind {
	FETCH_OBJECT = 0,	/* r: the object under the key (a fill or
				 * committed); serve it, attrs in its meta */
	FETCH_PASS,		/* r: a private fill holding the origin's
				 * response (status and headers in its attr
				 * record); not stored under the key */
	FETCH_REPLY,		/* no body from the origin: reply @status
				 * (502, 504) with @msg */
};

/*
 * One client's interest in a fetch.  The caller owns it (embedded in its
 * connection) and sets @done before fetcher_get(); the fetcher fills in
 * the result and calls @done exactly once, on the fetcher thread, unless
 * fetcher_cancel() withdrew it first.  @done must only hand @fw back to
 * its owner (a mailbox and an eventfd write): it must not call into the
 * fetcher or the store.
 */
struct fetch_waiter {
	void (*done)(struct fetch_waiter *fw);
	/* the result, valid when done() runs */
	enum fetch_kind kind;
	int status;			/* FETCH_REPLY */
	char msg[160];			/* FETCH_REPLY: why, for the body */
	struct gs_reader *r;		/* FETCH_OBJECT, FETCH_PASS: the
					 * caller's now; gs_reader_close() */
	/* the fetcher's */
	struct fetch_waiter *next;
	void *job;
	unsigned shard;
};

/* Counters, summed over the fetcher's life. */
struct fetch_stats {
	uint64_t origin_requests;	/* requests sent to the origin */
	uint64_t origin_bytes;		/* response body bytes received */
	uint64_t origin_errors;		/* connect/transfer failures: 502 */
	uint64_t origin_timeouts;	/* timeouts: 504 */
	uint64_t collapsed;		/* waiters that joined a running fetch */
	uint64_t stored;		/* responses admitted under their key */
	uint64_t passed;		/* responses not stored (any reason) */
	uint64_t revalidations;		/* conditional requests for stale ones */
	uint64_t not_modified;		/* ... answered 304: metadata refreshed */
	uint64_t forwarded;		/* PUT/POST/DELETE passed to the origin */
	uint64_t aborted_fills;		/* fills given up mid-body */
};

/**
 * Start the fetcher thread for @s.  Returns NULL with a message in @err
 * (a bad URL, libcurl failing to start).
 */
struct fetcher *fetcher_new(struct gs_store *s, const struct fetch_opts *o,
			    char *err, size_t errlen);

/** Stop the thread: running fetches are aborted, waiters get 502. */
void fetcher_free(struct fetcher *f);

/* What the client's request says that the origin and RFC 9111 care about. */
struct fetch_req {
	const char *authorization;	/* NULL: none */
	size_t authorization_len;
	const char *cache_control;	/* NULL: none */
	size_t cache_control_len;
};

/**
 * Ask for @key (the decoded request path without its leading '/', as the
 * store sees it).  @req (may be NULL) is copied: with Authorization the
 * request goes to the origin with it, on its own (it joins no other fetch
 * and none joins it), and its response is stored only where RFC 9111 §3.5
 * allows; a request Cache-Control of no-store keeps the response out of
 * the store.  @stale is read before the call returns.  With @stale (the metadata of a stored version that is
 * no longer fresh) the request is conditional on its validators, and a
 * 304 refreshes the stored metadata without a new body.  Joins a fetch of
 * the same key already running.  Returns 0: done() will be called.
 */
int fetcher_get(struct fetcher *f, const char *key, size_t klen,
		const struct gs_meta *stale, const struct fetch_req *req,
		struct fetch_waiter *fw);

/* A client write passed through to the origin (mirror mode). */
struct fetch_forward {
	const char *method;		/* "PUT", "POST", "DELETE" */
	const void *body;		/* the whole request body, or NULL */
	size_t body_len;
	const char *ctype;		/* Content-Type, or NULL */
	size_t ctype_len;
};

/**
 * Send @fwd to the origin for @key; on a 2xx or 3xx answer the stored
 * object is deleted (invalidated).  The answer reaches @fw as FETCH_PASS
 * (or FETCH_REPLY on failure).  The caller keeps @fwd's buffers until
 * done() ran or the waiter was cancelled.
 */
int fetcher_forward(struct fetcher *f, const char *key, size_t klen,
		    const struct fetch_forward *fwd, struct fetch_waiter *fw);

/**
 * Withdraw @fw (its client went away).  true: withdrawn, done() will not
 * run.  false: done() ran or is running; the owner will receive @fw and
 * must close fw->r.
 */
bool fetcher_cancel(struct fetcher *f, struct fetch_waiter *fw);

void fetcher_stats(struct fetcher *f, struct fetch_stats *out);

#endif
