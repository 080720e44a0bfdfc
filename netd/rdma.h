/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * goblind over RDMA verbs (issue 22): goblin's binary protocol
 * (gproto.h) on RC queue pairs that librdmacm connects, driven from the
 * workers' loops (event sources: the cm and completion channels).
 */
#ifndef GD_RDMA_H
#define GD_RDMA_H

#include "goblind.h"

/* --rdma-* options and their help: what set_option() hands over. */
extern const char gd_rdma_usage[];
/* Option @name (no dashes, "rdma-..."): NULL, or what is wrong. */
const char *gd_rdma_option(struct gd_settings *s, const char *name,
			   const char *val);

/*
 * With --rdma-port: listen on --rdma-address (an address of an RDMA
 * device) and register the transport, before the workers start.  0, or
 * -1 with the reason in @why.  Logs "rdma on ADDR:PORT" once listening.
 */
int gd_rdma_listen(struct gd *gd, char *why, size_t wlen);
/* After the workers stopped, before gs_close(): what gd_rdma_listen made. */
void gd_rdma_close(struct gd *gd);

#endif
