/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblin's client library: the binary protocol (netd/gproto.h) over
 * goblind's shared-memory ring (netd/ring_shm.h).  The client writes
 * request frames into the request ring and kicks the server only when it
 * parked; it busy-polls the reply ring for a bounded time, then parks on
 * its eventfd (and the setup socket, whose EOF is the server gone).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../netd/gproto.h"
#include "../netd/ring_shm.h"
#include "goblin_client.h"
#include "rdma_client.h"

#define GC_SPIN_NS  (200 * 1000) /* busy-poll a reply this long, then park */
#define GC_PARK_MS  1000	 /* a parked wait looks at the socket */
#define GC_YIELD_NS 500		 /* spinning longer, yield the CPU too */
#define RING_HELLO  "GBRING1\n"
#define RING_READY  "GBREADY\n"

struct goblin_client {
	int sock;    /* the setup socket: its EOF is the server gone */
	int kick_fd; /* the server's: we write it when it parked */
	int wake_fd; /* ours: the server writes it when we parked */
	struct gr_ctl *ctl;
	uint8_t *req, *rep;
	uint64_t req_tail, rep_head;
	uint64_t req_head_seen; /* the server's req_head, as last read */
	uint32_t window;
	uint32_t opaque;
	bool dead;
	struct gc_times t;
	struct grc *rdma; /* GC_RDMA: the verbs client, none of the above */
};

/* GC_RDMA: a 4 MiB window, waits bounded as goblinctl's (rxe is slow) */
#define GC_RDMA_WINDOW	   (4u << 20)
#define GC_RDMA_TIMEOUT_MS 30000

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

const char *gc_strerror(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such key";
	case -EMSGSIZE:
		return "value larger than the buffer";
	case -EPIPE:
		return "connection to goblind lost";
	case -EPROTO:
		return "protocol error";
	case -EPROTONOSUPPORT:
		return "transport not built";
	}
	return strerror(-err);
}

/* ---- connecting ---- */

static int recv_fds(int sock, int fds[3])
{
	char data[8];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(3 * sizeof(int))];
	} u;
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = u.b,
			     .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	ssize_t n;

	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	if (n != 8 || memcmp(data, RING_READY, 8) || !cm ||
	    cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(3 * sizeof(int))) {
		if (cm && cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(fds, CMSG_DATA(cm),
			       (k > 3 ? 3 : k) * sizeof(int));
			for (size_t i = 0; i < k && i < 3; i++)
				close(fds[i]);
		}
		return -EPROTO;
	}
	memcpy(fds, CMSG_DATA(cm), 3 * sizeof(int));
	return 0;
}

static int ring_connect(struct goblin_client *c, const char *path, char *why,
			size_t wlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fds[3] = { -1, -1, -1 }, ret;
	struct stat st;
	void *p;

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(why, wlen, "'%s': socket path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, path);
	c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&a, sizeof(a))) {
		ret = -errno;
		snprintf(why, wlen, "cannot connect to '%s': %s", path,
			 strerror(errno));
		return ret;
	}
	if (write(c->sock, RING_HELLO, 8) != 8 ||
	    (ret = recv_fds(c->sock, fds)) < 0) {
		snprintf(why, wlen, "'%s' does not set up a ring", path);
		return -EPROTO;
	}
	c->kick_fd = fds[1];
	c->wake_fd = fds[2];
	if (fstat(fds[0], &st) < 0 || st.st_size != GR_MAP_SIZE) {
		close(fds[0]);
		snprintf(why, wlen, "'%s': a ring of another size", path);
		return -EPROTO;
	}
	p = mmap(NULL, GR_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0],
		 0);
	close(fds[0]);
	if (p == MAP_FAILED) {
		ret = -errno;
		snprintf(why, wlen, "cannot map the ring: %s", strerror(errno));
		return ret;
	}
	c->ctl = p;
	if (c->ctl->magic != GR_MAGIC || c->ctl->version != GR_VERSION ||
	    c->ctl->req_off != GR_CTL_SIZE || c->ctl->req_size != GR_REQ_SIZE ||
	    c->ctl->rep_off != GR_CTL_SIZE + GR_REQ_SIZE ||
	    c->ctl->rep_size != GR_REP_SIZE || !c->ctl->window ||
	    c->ctl->window > GR_WINDOW) {
		snprintf(why, wlen, "'%s': a ring of another version", path);
		return -EPROTO;
	}
	c->req = (uint8_t *)p + GR_CTL_SIZE;
	c->rep = c->req + GR_REQ_SIZE;
	c->window = c->ctl->window;
	c->req_tail = atomic_load(&c->ctl->req_tail.v);
	c->req_head_seen = atomic_load(&c->ctl->req_head.v);
	c->rep_head = atomic_load(&c->ctl->rep_head.v);
	return 0;
}

int gc_connect(enum gc_transport t, const char *where, unsigned port,
	       struct goblin_client **out, char *why, size_t wlen)
{
	struct goblin_client *c;
	char dummy[8];
	int ret;

	(void)port;
	if (!why) {
		why = dummy;
		wlen = sizeof(dummy);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sock = c->kick_fd = c->wake_fd = -1;
	if (t == GC_RDMA) {
		char ps[12];

		snprintf(ps, sizeof(ps), "%u", port);
		c->rdma = grc_connect(where, ps, GC_RDMA_WINDOW,
				      GC_RDMA_TIMEOUT_MS, why, wlen);
		ret = c->rdma ? 0 : -ECONNREFUSED;
	} else {
		ret = ring_connect(c, where, why, wlen);
	}
	if (ret < 0) {
		gc_close(c);
		return ret;
	}
	*out = c;
	return 0;
}

void gc_close(struct goblin_client *c)
{
	if (!c)
		return;
	grc_close(c->rdma);
	if (c->ctl)
		munmap(c->ctl, GR_MAP_SIZE);
	if (c->sock >= 0)
		close(c->sock);
	if (c->kick_fd >= 0)
		close(c->kick_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	free(c);
}

const struct gc_times *gc_last_times(const struct goblin_client *c)
{
	return &c->t;
}

/* ---- the rings ---- */

/* The server parked: kick it (after our store, Dekker's fence). */
static void kick_server(struct goblin_client *c)
{
	uint64_t one = 1;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&c->ctl->srv_parked.v, memory_order_relaxed) &&
	    write(c->kick_fd, &one, sizeof(one)) < 0) {
		/* a full counter: the server has kicks to read */
	}
}

/* Has the server gone (EOF on the setup socket)? */
static bool server_gone(struct goblin_client *c)
{
	char b;
	ssize_t n = recv(c->sock, &b, 1, MSG_DONTWAIT | MSG_PEEK);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		       errno != EINTR))
		c->dead = true;
	return c->dead;
}

/* Park until the server kicks us or goes.  0 or -EPIPE. */
static int park(struct goblin_client *c, bool (*ready)(struct goblin_client *))
{
	struct pollfd p[2] = { { .fd = c->wake_fd, .events = POLLIN },
			       { .fd = c->sock, .events = POLLIN } };
	uint64_t v;

	atomic_store(&c->ctl->cli_parked.v, 1);
	atomic_thread_fence(memory_order_seq_cst);
	while (!ready(c)) {
		if (server_gone(c))
			break;
		if (poll(p, 2, GC_PARK_MS) < 0 && errno != EINTR)
			break;
		if (p[0].revents && read(c->wake_fd, &v, sizeof(v)) < 0) {
			/* another wake took it */
		}
	}
	atomic_store(&c->ctl->cli_parked.v, 0);
	return c->dead ? -EPIPE : 0;
}

/*
 * Touch the two slots the next reply frame starts in while polling its
 * tail: their lines, rewritten by the server, are fetched alongside the
 * tail's instead of after it (one cross-core transfer on the path, not
 * two, for a small value).
 */
static void touch(const uint8_t *ring, uint64_t size, uint64_t pos)
{
	const volatile uint8_t *p = ring + pos % size;

	(void)p[0];
	if (pos % size + GR_LINE < size)
		(void)p[GR_LINE];
}

static bool reply_ready(struct goblin_client *c)
{
	touch(c->rep, GR_REP_SIZE, c->rep_head);
	return atomic_load_explicit(&c->ctl->rep_tail.v,
				    memory_order_acquire) != c->rep_head;
}

/*
 * Spin, then park, until @ready.  Past GC_YIELD_NS the spin yields the
 * CPU at each look at the clock: a server worker on our CPU (a machine
 * with more runnable threads than CPUs) then runs at once instead of
 * after our spin, and the ring does not settle into both sides spinning
 * out their bounds in turn and parking, ~65 us a round trip here.
 */
static int wait_for(struct goblin_client *c,
		    bool (*ready)(struct goblin_client *))
{
	int64_t start = 0, t;

	for (unsigned i = 0;; i++) {
		if (ready(c))
			return 0;
		if (i > 4096) /* the first microseconds at full speed */
			__builtin_ia32_pause();
		if (i % 64)
			continue;
		if (!start) {
			start = now_ns();
			continue;
		}
		t = now_ns() - start;
		if (t > GC_SPIN_NS)
			return park(c, ready);
		if (t > GC_YIELD_NS)
			sched_yield();
	}
}

/*
 * The next reply frame, decoded in place (the server does not touch a
 * frame it published until we move the head past it).  0, -EPIPE, or
 * -EPROTO for a frame that does not decode.
 */
static int next_frame(struct goblin_client *c, struct gp_msg *m,
		      uint64_t *slots)
{
	uint64_t tail, off;
	uint32_t word;
	size_t used;
	int ret;

	for (;;) {
		if ((ret = wait_for(c, reply_ready)) < 0)
			return ret;
		tail = atomic_load_explicit(&c->ctl->rep_tail.v,
					    memory_order_acquire);
		off = c->rep_head % GR_REP_SIZE;
		memcpy(&word, c->rep + off, sizeof(word));
		if (word != GR_WRAP)
			break;
		c->rep_head += GR_REP_SIZE - off;
		atomic_store_explicit(&c->ctl->rep_head.v, c->rep_head,
				      memory_order_release);
	}
	if (gp_decode(c->rep + off, GR_REP_SIZE - off, GR_REP_SIZE, m, &used) !=
		    GP_OK ||
	    gr_slots(used) > tail - c->rep_head) {
		c->dead = true;
		return -EPROTO;
	}
	*slots = gr_slots(used);
	return 0;
}

/* Done with the frame next_frame() gave: its room goes back. */
static void frame_done(struct goblin_client *c, uint64_t slots)
{
	c->rep_head += slots;
	atomic_store_explicit(&c->ctl->rep_head.v, c->rep_head,
			      memory_order_release);
	kick_server(c); /* it may wait for room */
}

static uint8_t *req_room(struct goblin_client *c, uint64_t len)
{
	uint64_t pos, skip;

	/* the server's head is read only when the one we saw has no room:
	 * its cache line then stays the server's */
	for (unsigned i = 0;; i++) {
		if (gr_reserve(c->req, GR_REQ_SIZE, c->req_head_seen,
			       c->req_tail, len, &pos, &skip) == 0)
			break;
		c->req_head_seen = atomic_load_explicit(&c->ctl->req_head.v,
							memory_order_acquire);
		if (gr_reserve(c->req, GR_REQ_SIZE, c->req_head_seen,
			       c->req_tail, len, &pos, &skip) == 0)
			break;
		if (c->dead || (i % 4096 == 4095 && server_gone(c)))
			return NULL;
		if (i > 100000)
			usleep(20); /* a server busy with our last window */
		else
			__builtin_ia32_pause();
	}
	c->req_tail += skip;
	return c->req + pos;
}

static void req_put(struct goblin_client *c, uint64_t len)
{
	c->req_tail += gr_slots(len);
	atomic_store_explicit(&c->ctl->req_tail.v, c->req_tail,
			      memory_order_release);
	kick_server(c);
}

/* Send a request frame.  0, -EPIPE, or -EINVAL (a request that would
 * not decode). */
static int send_req(struct goblin_client *c, enum gp_template t,
		    const struct gp_req *r, const void *key, const void *inl,
		    uint32_t inline_len)
{
	uint64_t len = GP_REQ_FIXED + (uint64_t)r->key_len + inline_len;
	uint8_t *p;
	int n;

	if (c->dead)
		return -EPIPE;
	if (!(p = req_room(c, len)))
		return -EPIPE;
	n = gp_encode_req(p, len, t, ++c->opaque, r, key, inl, inline_len);
	if (n < 0)
		return n; /* nothing published: the ring is as it was */
	c->t.sent = now_ns();
	c->t.header = c->t.first = c->t.last = 0;
	req_put(c, (uint64_t)n);
	return 0;
}

static int status_err(unsigned st)
{
	switch (st) {
	case GP_S_OK:
		return 0;
	case GP_S_NOT_FOUND:
		return -ENOENT;
	case GP_S_EXISTS:
		return -EEXIST;
	case GP_S_NOT_STORED:
		return -ENOENT;
	case GP_S_TOO_LARGE:
		return -EFBIG;
	case GP_S_BUSY:
		return -ENOSPC;
	case GP_S_BAD_REQUEST:
		return -EINVAL;
	case GP_S_RANGE:
		return -ERANGE;
	case GP_S_UNSUPPORTED:
		return -EOPNOTSUPP;
	}
	return -EIO;
}

/* The response to our last request: its header in *r.  Its inline bytes
 * go to @fn; the frame is released. */
static int read_resp(struct goblin_client *c, struct gp_resp *r,
		     gc_window_fn fn, void *arg, int *cb_err, uint64_t *inl)
{
	struct gp_msg m;
	uint64_t slots;
	int ret = next_frame(c, &m, &slots);

	if (ret < 0)
		return ret;
	c->t.header = now_ns();
	if (m.h.template_id != GP_T_RESP || m.h.opaque != c->opaque) {
		c->dead = true;
		return -EPROTO;
	}
	*r = m.resp;
	*inl = m.payload_len;
	if (m.payload_len) {
		c->t.first = c->t.header;
		if (!*cb_err)
			*cb_err = fn(arg, m.payload, m.payload_len, 0);
	}
	if (r->length == m.payload_len)
		c->t.last = c->t.header;
	frame_done(c, slots);
	return 0;
}

/* The data frames of a value after its header: @got bytes came inline. */
static int read_data(struct goblin_client *c, uint64_t got, uint64_t total,
		     gc_window_fn fn, void *arg, int *cb_err)
{
	while (got < total) {
		struct gp_msg m;
		uint64_t slots;
		int ret = next_frame(c, &m, &slots);

		if (ret < 0)
			return ret;
		if (m.h.template_id != GP_T_DATA || m.h.opaque != c->opaque ||
		    m.data.offset != got || m.data.len > total - got ||
		    (m.data.flags & GP_DF_PLACED)) {
			c->dead = true;
			return -EPROTO;
		}
		if (!c->t.first)
			c->t.first = now_ns();
		if (!*cb_err && m.data.len)
			*cb_err = fn(arg, m.payload, m.data.len, got);
		got += m.data.len;
		frame_done(c, slots);
	}
	c->t.last = now_ns();
	return 0;
}

static void meta_of(const struct gp_resp *r, struct gc_meta *m)
{
	if (!m)
		return;
	m->size = r->value_size;
	m->cas = r->cas;
	m->flags = r->client_flags;
	m->ttl = r->ttl;
}

static int no_window(void *arg, const void *data, size_t len, uint64_t off)
{
	(void)arg, (void)data, (void)len, (void)off;
	return -EPROTO; /* a reply without a value carried one */
}

/* A request answered by a status alone. */
static int simple(struct goblin_client *c, enum gp_template t,
		  const struct gp_req *q, const void *key, struct gp_resp *r)
{
	int cb_err = 0, ret = send_req(c, t, q, key, NULL, 0);
	uint64_t inl;

	if (ret < 0)
		return ret;
	if ((ret = read_resp(c, r, no_window, NULL, &cb_err, &inl)) < 0)
		return ret;
	if (r->length || cb_err) {
		c->dead = true;
		return -EPROTO;
	}
	return status_err(r->status);
}

/* ---- RDMA: the same calls on the verbs client (rdma_client.h) ---- */

struct rdma_cb {
	gc_window_fn fn;
	void *arg;
	int err;
};

static int rdma_window(void *arg, const void *p, size_t n, uint64_t off)
{
	struct rdma_cb *cb = arg;

	cb->err = cb->fn(cb->arg, p, n, off);
	return cb->err < 0 ? -1 : 0;
}

/* grc's 0, 1 (a miss) or -1 as this library's -errno */
static int rdma_err(const struct rdma_cb *cb, int ret)
{
	if (ret == 1)
		return -ENOENT;
	if (ret < 0)
		return cb && cb->err < 0 ? cb->err : -EIO;
	return 0;
}

static int rdma_get_cb(struct goblin_client *c, const void *key, size_t klen,
		       gc_window_fn fn, void *arg, struct gc_meta *m)
{
	struct rdma_cb cb = { fn, arg, 0 };
	struct grc_times t;
	struct grc_meta gm;
	int ret = grc_get(c->rdma, key, klen, rdma_window, &cb, &gm, &t);

	c->t = (struct gc_times){ t.sent, t.header, t.first, t.last };
	if (ret == 0 && m)
		*m = (struct gc_meta){ gm.size, gm.cas, gm.flags, gm.ttl };
	return rdma_err(&cb, ret);
}

/* ---- requests ---- */

int gc_get_cb(struct goblin_client *c, const void *key, size_t klen,
	      gc_window_fn fn, void *arg, struct gc_meta *m)
{
	struct gp_req q = { .key_len = (uint16_t)klen };
	struct gp_resp r;
	int cb_err = 0, ret;
	uint64_t inl;

	if (!klen || klen > GP_KEY_MAX)
		return -EINVAL;
	if (c->rdma)
		return rdma_get_cb(c, key, klen, fn, arg, m);
	if ((ret = send_req(c, GP_T_GET, &q, key, NULL, 0)) < 0 ||
	    (ret = read_resp(c, &r, fn, arg, &cb_err, &inl)) < 0)
		return ret;
	if (r.status != GP_S_OK)
		return status_err(r.status);
	meta_of(&r, m);
	ret = read_data(c, inl, r.length, fn, arg, &cb_err);
	return ret < 0 ? ret : cb_err;
}

struct into_buf {
	uint8_t *buf;
	size_t cap;
	size_t got;
	bool over;
};

static int to_buf(void *arg, const void *data, size_t len, uint64_t off)
{
	struct into_buf *b = arg;

	if (off + len > b->cap) {
		b->over = true;
		return 0; /* read on, drop: the size is reported */
	}
	memcpy(b->buf + off, data, len);
	b->got = off + len;
	return 0;
}

int gc_get(struct goblin_client *c, const void *key, size_t klen, void *buf,
	   size_t cap, struct gc_meta *m)
{
	struct into_buf b = { .buf = buf, .cap = cap };
	struct gc_meta mm;
	int ret = gc_get_cb(c, key, klen, to_buf, &b, &mm);

	if (ret == 0 && m)
		*m = mm;
	if (ret == 0 && (b.over || mm.size > cap))
		return -EMSGSIZE;
	return ret;
}

int gc_set(struct goblin_client *c, const void *key, size_t klen,
	   const void *val, size_t len, const struct gc_set_opts *o)
{
	static const struct gc_set_opts none;
	struct gp_req q = { .key_len = (uint16_t)klen, .length = len };
	const uint8_t *v = val;
	uint64_t sent;
	struct gp_resp r;
	uint32_t n;
	int cb_err = 0, ret;
	uint64_t inl;

	if (!o)
		o = &none;
	if (!klen || klen > GP_KEY_MAX)
		return -EINVAL;
	if (c->rdma) /* a plain set only, over RDMA here */
		return o->add || o->replace || o->cas ?
			       -EOPNOTSUPP :
			       rdma_err(NULL, grc_set(c->rdma, key, klen, val,
						      len, o->flags, o->ttl));
	q.client_flags = o->flags;
	q.ttl = o->ttl;
	q.cas = o->cas;
	q.flags = (o->add ? GP_RQ_ADD : 0) | (o->replace ? GP_RQ_REPLACE : 0);
	n = len < c->window ? (uint32_t)len : c->window;
	if ((ret = send_req(c, GP_T_SET, &q, key, v, n)) < 0)
		return ret;
	for (sent = n; sent < len; sent += n) {
		struct gp_data d = { .offset = sent };
		uint8_t *p;

		n = len - sent < c->window ? (uint32_t)(len - sent) : c->window;
		d.len = n;
		d.flags = sent + n == len ? GP_DF_LAST : 0;
		if (!(p = req_room(c, GP_DATA_FIXED + (uint64_t)n)))
			return -EPIPE;
		gp_encode_data(p, GP_DATA_FIXED + n, c->opaque, &d, v + sent);
		req_put(c, GP_DATA_FIXED + (uint64_t)n);
	}
	if ((ret = read_resp(c, &r, no_window, NULL, &cb_err, &inl)) < 0)
		return ret;
	if (r.length || cb_err) {
		c->dead = true;
		return -EPROTO;
	}
	return status_err(r.status);
}

int gc_delete(struct goblin_client *c, const void *key, size_t klen)
{
	struct gp_req q = { .key_len = (uint16_t)klen };
	struct gp_resp r;

	if (!klen || klen > GP_KEY_MAX)
		return -EINVAL;
	if (c->rdma)
		return rdma_err(NULL, grc_del(c->rdma, key, klen));
	return simple(c, GP_T_DELETE, &q, key, &r);
}

int gc_touch(struct goblin_client *c, const void *key, size_t klen,
	     uint32_t ttl)
{
	struct gp_req q = { .key_len = (uint16_t)klen, .ttl = ttl };
	struct gp_resp r;

	if (!klen || klen > GP_KEY_MAX)
		return -EINVAL;
	if (c->rdma) /* not in the verbs client yet */
		return -EOPNOTSUPP;
	return simple(c, GP_T_TOUCH, &q, key, &r);
}

int gc_noop(struct goblin_client *c)
{
	struct gp_req q = { 0 };
	struct gp_resp r;

	if (c->rdma) /* not in the verbs client yet */
		return -EOPNOTSUPP;
	return simple(c, GP_T_NOOP, &q, NULL, &r);
}

struct grow {
	char *p;
	size_t len, cap;
};

static int to_grow(void *arg, const void *data, size_t len, uint64_t off)
{
	struct grow *g = arg;

	(void)off;
	if (g->len + len + 1 > g->cap) {
		size_t cap = (g->len + len + 1) * 2;
		char *np = realloc(g->p, cap);

		if (!np)
			return -ENOMEM;
		g->p = np;
		g->cap = cap;
	}
	memcpy(g->p + g->len, data, len);
	g->len += len;
	return 0;
}

/*
 * The binary protocol's "name value" lines (@raw, freed here) as
 * memcache's "STAT name value" ones, in a NUL-terminated *@text.
 */
static int stat_lines(struct grow raw, int ret, char **text, size_t *len)
{
	struct grow g = { 0 };
	size_t i = 0;

	while (ret == 0 && i < raw.len) {
		const char *nl = memchr(raw.p + i, '\n', raw.len - i);
		size_t n = nl ? (size_t)(nl - raw.p) - i : raw.len - i;

		if ((ret = to_grow(&g, "STAT ", 5, 0)) ||
		    (ret = to_grow(&g, raw.p + i, n, 0)) ||
		    (ret = to_grow(&g, "\r\n", 2, 0)))
			break;
		i += n + 1;
	}
	if (ret == 0)
		ret = to_grow(&g, "", 0, 0);
	free(raw.p);
	if (ret < 0) {
		free(g.p);
		return ret;
	}
	g.p[g.len] = '\0';
	*text = g.p;
	*len = g.len;
	return 0;
}

static int rdma_stats(struct goblin_client *c, char **text, size_t *len)
{
	struct grow raw = { 0 };
	int ret = grc_stats(c->rdma, to_grow, &raw) < 0 ? -EIO : 0;

	return stat_lines(raw, ret, text, len);
}

int gc_stats(struct goblin_client *c, const char *group, char **text,
	     size_t *len)
{
	size_t glen = group ? strlen(group) : 0;
	struct gp_req q = { .key_len = (uint16_t)glen };
	struct grow g = { 0 };
	struct gp_resp r;
	int cb_err = 0, ret;
	uint64_t inl;

	if (glen > GP_KEY_MAX)
		return -EINVAL;
	if (c->rdma) /* the general stats only */
		return glen ? -EOPNOTSUPP : rdma_stats(c, text, len);
	if ((ret = send_req(c, GP_T_STATS, &q, group, NULL, 0)) < 0 ||
	    (ret = read_resp(c, &r, to_grow, &g, &cb_err, &inl)) < 0)
		goto fail;
	if (r.status != GP_S_OK) {
		ret = status_err(r.status);
		goto fail;
	}
	ret = read_data(c, inl, r.length, to_grow, &g, &cb_err);
	if (ret < 0 || (ret = cb_err) < 0)
		goto fail;
	return stat_lines(g, 0, text, len);
fail:
	free(g.p);
	return ret;
}
