/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: two links joined over a lossy wire, shared by
 * sxrc_wire_stream_test (streams, XRC) and sxrc_wire_peer_test (a peer
 * that fails, windows and regions under the wire).
 *
 * Two links on the two ends of a veth pair, each end in a network
 * namespace of its own: softxrc6 on sxws0 (10.79.0.1) here, softxrc7 on
 * sxws1 (10.79.0.2) in the namespace sxws-peer, the "other host".  A
 * link in another namespace is on another network, so a message between
 * the two goes out as RoCEv2 packets: the requester's UDP socket in one
 * namespace, the veth, the responder's socket in the other, through the
 * kernel's IP and UDP paths as between two machines.  netem on both ends
 * of the veth loses, reorders and duplicates packets (SXRC_WIRE_NETEM,
 * default WS_NETEM below).  A program's first test makes the namespace,
 * the pair and both links; the others reuse them; they go when the
 * program exits.
 *
 * The helpers are static inline: each program includes this once, and
 * kselftest_harness.h, whose assertions they use, has one main.
 */
#ifndef SXRC_WIRE_PAIR_H
#define SXRC_WIRE_PAIR_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <stdatomic.h>
#include <infiniband/softxrc_xrc.h>

#include "kselftest_harness.h"
#include "sxrc_stream.h"
#include "sxrc_test.h"
#include "sxrc_util.h"

#define WS_DEV_A	"softxrc6"
#define WS_DEV_B	"softxrc7"
#define WS_IF_A		"sxws0"
#define WS_IF_B		"sxws1"
#define WS_NS		"sxws-peer"
#define WS_TOOL		"build/bin/softxrc"
#define WS_ADDR_A	"10.79.0.1"
#define WS_ADDR_B	"10.79.0.2"
#define WS_NETEM	"delay 1ms reorder 25% 50% loss 5% duplicate 5%"

#define WS_MSG_MAX	65536		/* the longest SEND */
#define WS_RQ		64		/* receive WQEs, send WQEs */
#define WS_SQ		64
#define WS_ATOMICS	2048
#define WS_CAS		256
#define WS_SECS		600		/* any test's deadline */

static inline const char *ws_netem(void)
{
	const char *e = getenv("SXRC_WIRE_NETEM");

	return e && *e ? e : WS_NETEM;
}

static inline void ws_net_down(void)
{
	sxrc_sh(WS_TOOL " link del " WS_DEV_A " 2>/dev/null; ip netns exec "
	      WS_NS " " WS_TOOL " link del " WS_DEV_B " 2>/dev/null; "
	      "ip link del " WS_IF_A " 2>/dev/null; ip netns del " WS_NS
	      " 2>/dev/null; true");
}

/* The program's last act (its tests run in children that _exit()). */
static inline void __attribute__((destructor)) ws_net_cleanup(void)
{
	if (!access("/run/netns/" WS_NS, F_OK))
		ws_net_down();
}

/*
 * The two hosts: made once, by the first test, and kept for the others
 * (a namespace costs seconds under TCG).  netem on both ends.
 */
static inline int ws_net_up(void)
{
	if (!access("/run/netns/" WS_NS, F_OK) &&
	    !access("/sys/class/misc/" WS_DEV_A, F_OK) &&
	    !access("/sys/class/misc/" WS_DEV_B, F_OK))
		return 0;
	ws_net_down();
	if (sxrc_sh("modprobe veth; modprobe sch_netem; "
		  "ip netns add " WS_NS " && ip link add " WS_IF_A
		  " type veth peer name " WS_IF_B " netns " WS_NS
		  " && ip addr add " WS_ADDR_A "/24 dev " WS_IF_A
		  " && ip link set " WS_IF_A " up"
		  " && ip -n " WS_NS " link set lo up"
		  " && ip -n " WS_NS " addr add " WS_ADDR_B "/24 dev " WS_IF_B
		  " && ip -n " WS_NS " link set " WS_IF_B " up"
		  " && tc qdisc add dev " WS_IF_A " root netem %s"
		  " && tc -n " WS_NS " qdisc add dev " WS_IF_B " root netem %s"
		  /*
		   * Neighbours known: an ARP exchange lost to netem would hold
		   * the first packets for a second, longer than the requester
		   * retries.
		   */
		  " && ip neigh replace " WS_ADDR_B " dev " WS_IF_A " lladdr"
		  " $(ip netns exec " WS_NS " cat /sys/class/net/" WS_IF_B
		  "/address) nud permanent"
		  " && ip -n " WS_NS " neigh replace " WS_ADDR_A " dev " WS_IF_B
		  " lladdr $(cat /sys/class/net/" WS_IF_A "/address) nud permanent"
		  " && " WS_TOOL " link add " WS_DEV_A " netdev " WS_IF_A
		  " && ip netns exec " WS_NS " " WS_TOOL " link add " WS_DEV_B
		  " netdev " WS_IF_B, ws_netem(), ws_netem()))
		return -1;
	return 0;
}

/* A counter of a link (counters/NAME). */
static inline long ws_counter(const char *dev, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/%s/counters/%s", dev,
		 name);
	return sxrc_read_long(path, 10);
}

static inline struct ibv_context *ws_open(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* The GID index whose GID is ::ffff:@addr, -1 if none (yet). */
static inline int ws_gid_index(struct ibv_context *ctx, const char *addr,
			       union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	struct in_addr in;
	int i;

	if (inet_pton(AF_INET, addr, &in) != 1 ||
	    ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(ctx, 1, i, gid))
			continue;
		if (!memcmp(gid->raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) &&
		    !memcmp(gid->raw + 12, &in, 4))
			return i;
	}
	return -1;
}

/* One host's side. */
struct ws_end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t len;
	union ibv_gid gid;
	int gidx;
};

/* What an RC connection over the wire is made of, beside the two ends. */
struct ws_path {
	uint32_t dqpn;		/* the peer's QP */
	uint32_t rq_psn;	/* where @e's receive queue starts */
	uint32_t sq_psn;	/* where @e's send queue starts */
	unsigned int timeout, retry, rnr;	/* ack timeout, retry counts */
	unsigned int rd_atomic;	/* READ/atomic depth, both ways */
	int access;		/* what the peer may do to @e's memory */
};

/*
 * @e's QP from RESET through INIT and RTR to RTS as @p says, towards
 * @peer's GID over the wire: GRH from @e's GID, MTU 1024.
 */
static inline int ws_qp_up(struct ws_end *e, const struct ws_end *peer,
			   const struct ws_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = p->access,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = p->dqpn;
	a.rq_psn = p->rq_psn;
	a.max_dest_rd_atomic = p->rd_atomic;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = e->gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = p->sq_psn;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry;
	a.rnr_retry = p->rnr;
	a.max_rd_atomic = p->rd_atomic;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * @e's QP to RTS towards @peer's QP, both queues from PSN 0x123456, every
 * remote access allowed, 16 READs and atomics in flight, @retry/@rnr
 * retries, ack timeout @timeout.
 */
static inline int ws_connect(struct ws_end *e, struct ws_end *peer,
			     unsigned int timeout, unsigned int retry,
			     unsigned int rnr)
{
	const struct ws_path p = {
		.dqpn = peer->qp->qp_num,
		.rq_psn = 0x123456, .sq_psn = 0x123456,
		.timeout = timeout, .retry = retry, .rnr = rnr,
		.rd_atomic = 16,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ws_qp_up(e, peer, &p);
}

static inline int ws_end_open(struct ws_end *e, const char *dev, const char *addr,
			      size_t len)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = WS_SQ, .max_recv_wr = WS_RQ,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int i;

	e->ctx = ws_open(dev);
	if (!e->ctx)
		return -1;
	/* The GID table follows the address a moment later. */
	for (i = 0; i < 100; i++) {
		e->gidx = ws_gid_index(e->ctx, addr, &e->gid);
		if (e->gidx >= 0)
			break;
		usleep(100000);
	}
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, WS_SQ + WS_RQ, NULL, NULL, 0);
	if (e->gidx < 0 || !e->pd || !e->cq)
		return -1;
	ia.send_cq = e->cq;
	ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	e->len = len;
	e->mem = sxrc_map(len, 0);
	if (!e->qp || !e->mem)
		return -1;
	e->mr = ibv_reg_mr(e->pd, e->mem, len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	return e->mr ? 0 : -1;
}

static inline void ws_end_close(struct ws_end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->mem)
		munmap(e->mem, e->len);
	if (e->ctx)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
}

/*
 * The stream QPs' ack timeout exponent: SXRC_WIRE_ACK_TIMEOUT, default
 * 14 (67 ms, as perftest and the pingpongs use).  The debug kernel runs
 * with 16: under KASAN a responder's burst of READ replies can outlast
 * 67 ms, and the requester then gives up on a live peer.
 */
static inline unsigned int ws_ack_timeout(void)
{
	const char *e = getenv("SXRC_WIRE_ACK_TIMEOUT");
	long t = e ? strtol(e, NULL, 0) : 14;

	return t > 0 && t < 32 ? t : 14;
}

static inline size_t ws_stream_bytes(void)
{
	const char *e = getenv("SXRC_WIRE_STREAM_MIB");
	long mib = e ? strtol(e, NULL, 0) : 64;

	return (size_t)(mib > 0 ? mib : 64) << 20;
}

#endif /* SXRC_WIRE_PAIR_H */
