/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the worker's rooms call in one another (internal to worker.c,
 * accept.c and conn.c; protocols use goblind.h).  Calls go one way:
 * worker.c (the loop) -> accept.c (accepting) -> conn.c (I/O, clocks).
 */
#ifndef GOBLIND_WORKER_H
#define GOBLIND_WORKER_H

#include "goblind.h"

/* ---- conn.c ---- */

/* Output is queued: wbuf or a zero-copy chunk.  (Inline: every turn of
 * conn_drive() asks, as when it was worker.c's static.) */
static inline bool conn_pending(const struct conn *c)
{
	return c->wend > c->wstart || c->chunk_len;
}
/* Write what is queued: wbuf, then the zero-copy chunk.  0 or -1. */
int conn_flush(struct conn *c);
/* Read into rbuf.  1: got bytes, 0: EAGAIN, -1: EOF or error. */
int conn_read(struct conn *c);

/* ---- accept.c ---- */

/* A connection of protocol @p on accepted socket @fd (counted already). */
void conn_new(struct worker *w, int fd, const struct gd_proto *p);
/* Add @wl's socket to the worker's epoll (EPOLLIN; a shared one also
 * EPOLLEXCLUSIVE).  0 or -1 with errno, as epoll_ctl(). */
int listener_arm(struct worker *w, struct wlistener *wl);
/* Accept what @wl's socket has pending (its epoll event). */
void accept_all(struct worker *w, struct wlistener *wl);
/* Take the connections other workers handed to @w (its mailbox). */
void handoff_run(struct worker *w);
/* Close those left when @w stopped (after its thread ended). */
void handoff_drop(struct worker *w);
/* Paused listeners whose time is up go back on.  Returns the ms until the
 * next one is due, or -1 when none is paused. */
int listeners_resume(struct worker *w);

#endif
