// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: RC over a lossy wire, every byte exactly once and in
 * order.
 *
 * Two links on the two ends of a veth pair, each end in a network
 * namespace of its own: softxrc6 on sxws0 (10.79.0.1) here, softxrc7 on
 * sxws1 (10.79.0.2) in the namespace sxws-peer, the "other host".  A
 * link in another namespace is on another network, so a message between
 * the two goes out as RoCEv2 packets: the requester's UDP socket in one
 * namespace, the veth, the responder's socket in the other, through the
 * kernel's IP and UDP paths as between two machines.  netem on both ends
 * of the veth loses, reorders and duplicates packets (SXRC_WIRE_NETEM,
 * default WS_NETEM below).
 *
 * The tests, each checking what arrived against what was sent:
 *   stream.sends     SXRC_WIRE_STREAM_MIB MiB (default 64) of SEND with
 *                    immediate, messages of 1 byte to 64 KiB: every
 *                    receive completes once, in order, with its length,
 *                    number and bytes; nothing more arrives after
 *   stream.writes    4 MiB by RDMA WRITE in pieces of 1 byte to 256 KiB,
 *                    compared in the peer's memory, then READ back
 *   stream.atomics   fetch-and-adds whose returned values are 0, 1, 2...
 *                    exactly (a duplicate executed twice would skip one),
 *                    then a compare-and-swap chain
 *   peer.host_gone   the peer's host drops everything: the send fails
 *                    with RETRY_EXC_ERR after exactly retry_cnt resends,
 *                    what follows is flushed, the QP is in ERR
 *   peer.qp_gone     the peer's QP was destroyed: the same
 *   peer.no_receive  the peer posts no receive: RNR_RETRY_EXC_ERR after
 *                    rnr_retry RNR NAKs
 *   peer.rereg_under_posted_recv  a new translation under the peer's
 *                    posted receive: REM_OP_ERR for the SEND, then flush
 *   peer.window_local_write_right  a window bound with LOCAL_WRITE
 *                    among its rights, written and invalidated remotely
 *   peer.odp_memory  requests and ACKs are handled in softirq; SENDs
 *                    and WRITEs into an ODP region, which softirq
 *                    leaves to the receive worker, land whole
 *   peer.pages_gone_in_flight  packets sent from a region's pages
 *                    (uncopied) and held by netem arrive intact after
 *                    the QP, the region and the memory are gone
 *   xrc.shared_rcv_qp  three processes of the peer host share one XRC
 *                    receive QP through OFED's calls (one creates it, two
 *                    register), each with its XRC SRQ; this host's XRC
 *                    send QP reaches all three SRQs through it.  The
 *                    creator exits and the QP keeps serving the other
 *                    two; one unregisters, the last exits, and the QP is
 *                    gone: the next send fails with RETRY_EXC_ERR
 * The stream tests also require that netem did its work: retransmissions
 * and dropped duplicates are counted in the links' counters.
 *
 * The first test makes the namespace, the pair and both links; the others
 * reuse them; they go when the program exits.
 */
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

static const char *ws_netem(void)
{
	const char *e = getenv("SXRC_WIRE_NETEM");

	return e && *e ? e : WS_NETEM;
}

static void ws_net_down(void)
{
	sxrc_sh(WS_TOOL " link del " WS_DEV_A " 2>/dev/null; ip netns exec "
	      WS_NS " " WS_TOOL " link del " WS_DEV_B " 2>/dev/null; "
	      "ip link del " WS_IF_A " 2>/dev/null; ip netns del " WS_NS
	      " 2>/dev/null; true");
}

/* The program's last act (its tests run in children that _exit()). */
static void __attribute__((destructor)) ws_net_cleanup(void)
{
	if (!access("/run/netns/" WS_NS, F_OK))
		ws_net_down();
}

/*
 * The two hosts: made once, by the first test, and kept for the others
 * (a namespace costs seconds under TCG).  netem on both ends.
 */
static int ws_net_up(void)
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
static long ws_counter(const char *dev, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/%s/counters/%s", dev,
		 name);
	return sxrc_read_long(path, 10);
}

static struct ibv_context *ws_open(const char *name)
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
static int ws_gid_index(struct ibv_context *ctx, const char *addr,
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

/*
 * @e's QP to RTR (and RTS) towards @peer over the wire: GRH from @e's
 * GID to @peer's, MTU 1024, @retry/@rnr retries, ack timeout @timeout.
 */
static int ws_connect(struct ws_end *e, struct ws_end *peer,
		      unsigned int timeout, unsigned int retry,
		      unsigned int rnr)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x123456;
	a.max_dest_rd_atomic = 16;
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
	a.sq_psn = 0x123456;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr;
	a.max_rd_atomic = 16;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int ws_end_open(struct ws_end *e, const char *dev, const char *addr,
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

static void ws_end_close(struct ws_end *e)
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

/* The stream's byte at offset @off (seeded by @seed): cheap, no period. */
static inline uint64_t ws_word(uint64_t i, uint64_t seed)
{
	uint64_t z = i * 0x9e3779b97f4a7c15ULL + seed;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void ws_fill(uint8_t *p, uint64_t off, size_t len, uint64_t seed)
{
	size_t i = 0;

	while (i < len) {
		uint64_t w = ws_word((off + i) >> 3, seed);
		unsigned int b = (off + i) & 7;

		for (; b < 8 && i < len; b++, i++)
			p[i] = w >> (b * 8);
	}
}

/* The offset of the first byte of @p that is not the stream's, or -1. */
static long ws_check(const uint8_t *p, uint64_t off, size_t len,
		     uint64_t seed)
{
	uint8_t buf[4096];
	size_t done, n, i;

	for (done = 0; done < len; done += n) {
		n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ws_fill(buf, off + done, n, seed);
		if (memcmp(buf, p + done, n))
			for (i = 0; i < n; i++)
				if (buf[i] != p[done + i])
					return done + i;
	}
	return -1;
}

/*
 * The stream QPs' ack timeout exponent: SXRC_WIRE_ACK_TIMEOUT, default
 * 14 (67 ms, as perftest and the pingpongs use).  The debug kernel runs
 * with 16: under KASAN a responder's burst of READ replies can outlast
 * 67 ms, and the requester then gives up on a live peer.
 */
static unsigned int ws_ack_timeout(void)
{
	const char *e = getenv("SXRC_WIRE_ACK_TIMEOUT");
	long t = e ? strtol(e, NULL, 0) : 14;

	return t > 0 && t < 32 ? t : 14;
}

static size_t ws_stream_bytes(void)
{
	const char *e = getenv("SXRC_WIRE_STREAM_MIB");
	long mib = e ? strtol(e, NULL, 0) : 64;

	return (size_t)(mib > 0 ? mib : 64) << 20;
}

FIXTURE(stream) {
	struct ws_end a, b;	/* the requester's host, the responder's */
	long retrans, drops;	/* both links' counters at the start */
	double t0, deadline;
};

FIXTURE_SETUP(stream)
{
	size_t mem = WS_RQ * WS_MSG_MAX;	/* 4 MiB */

	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, ws_net_up());
	/* a: the source and READ target; b: the receive ring, WRITE target. */
	ASSERT_EQ(0, ws_end_open(&self->a, WS_DEV_A, WS_ADDR_A, 2 * mem));
	ASSERT_EQ(0, ws_end_open(&self->b, WS_DEV_B, WS_ADDR_B, mem));
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, ws_ack_timeout(), 7, 7));
	ASSERT_EQ(0, ws_connect(&self->b, &self->a, ws_ack_timeout(), 7, 7));
	self->retrans = ws_counter(WS_DEV_A, "wire_retransmits") +
			ws_counter(WS_DEV_B, "wire_retransmits");
	self->drops = ws_counter(WS_DEV_A, "wire_rx_dropped") +
		      ws_counter(WS_DEV_B, "wire_rx_dropped");
	self->t0 = sxrc_now_ms();
	self->deadline = self->t0 + WS_SECS * 1000.0;
}

FIXTURE_TEARDOWN(stream)
{
	ws_end_close(&self->a);
	ws_end_close(&self->b);
}

/* netem lost and duplicated packets, and the links saw it. */
static void ws_netem_seen(struct __test_metadata *_metadata,
			  FIXTURE_DATA(stream) *self)
{
	long retrans = ws_counter(WS_DEV_A, "wire_retransmits") +
		       ws_counter(WS_DEV_B, "wire_retransmits");
	long drops = ws_counter(WS_DEV_A, "wire_rx_dropped") +
		     ws_counter(WS_DEV_B, "wire_rx_dropped");
	long pkts = ws_counter(WS_DEV_A, "wire_tx_packets") +
		    ws_counter(WS_DEV_B, "wire_tx_packets");

	TH_LOG("%.1f s, %ld packets sent (all tests), %ld go-back-N resends, %ld dropped as duplicates or out of order",
	       (sxrc_now_ms() - self->t0) / 1000, pkts,
	       retrans - self->retrans, drops - self->drops);
	if (!getenv("SXRC_WIRE_NETEM")) {
		EXPECT_LT(self->retrans, retrans);
		EXPECT_LT(self->drops, drops);
	}
}

/* Post receive WQE @k (slot k % WS_RQ of b's ring). */
static int ws_post_recv(struct ws_end *b, uint64_t k)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->mem + (k % WS_RQ) * WS_MSG_MAX,
		.length = WS_MSG_MAX, .lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(b->qp, &wr, &bad);
}

/* The next message's length: 1 byte to 64 KiB, a quarter of them full. */
static uint32_t ws_next_len(struct sxrc_rng *rng, size_t left)
{
	uint32_t len = sxrc_rnd(rng, 4) ? 1 + sxrc_rnd(rng, WS_MSG_MAX) :
		       WS_MSG_MAX;

	return len > left ? left : len;
}

TEST_F_TIMEOUT(stream, sends, WS_SECS + 60)
{
	size_t total = ws_stream_bytes(), sent_bytes = 0, off = 0;
	uint64_t sent = 0, scomp = 0, recvd = 0, posted = 0, nmsg = 0;
	long lent = ws_counter(WS_DEV_A, "wire_tx_lent");
	long soft = ws_counter(WS_DEV_B, "wire_rx_softirq");
	struct sxrc_rng rng = { 0x5eed5 };
	struct ibv_wc wc[16];
	uint64_t *offs;
	uint32_t *lens;
	int i, n;

	/* The messages: lengths that add up to total. */
	for (off = 0; off < total; nmsg++)
		off += ws_next_len(&rng, total - off);
	lens = calloc(nmsg, sizeof(*lens));
	offs = calloc(nmsg, sizeof(*offs));
	ASSERT_NE(NULL, lens);
	ASSERT_NE(NULL, offs);
	rng.s = 0x5eed5;
	for (off = 0, n = 0; off < total; n++) {
		offs[n] = off;
		lens[n] = ws_next_len(&rng, total - off);
		off += lens[n];
	}
	for (i = 0; i < WS_RQ; i++)
		ASSERT_EQ(0, ws_post_recv(&self->b, posted++));

	while (recvd < nmsg) {
		ASSERT_LT(sxrc_now_ms(), self->deadline) {
			TH_LOG("%llu of %llu messages received, %llu sent",
			       (unsigned long long)recvd,
			       (unsigned long long)nmsg,
			       (unsigned long long)sent);
		}
		/*
		 * a: the send queue full, each message in its slot of a's
		 * ring; never more than b has receive WQEs for (no RNR).
		 */
		while (sent < nmsg && sent - recvd < WS_RQ &&
		       sent - scomp < WS_SQ) {
			uint8_t *src = self->a.mem + (sent % WS_SQ) * WS_MSG_MAX;
			struct ibv_sge sge = {
				.addr = (uintptr_t)src, .length = lens[sent],
				.lkey = self->a.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = sent, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl((uint32_t)sent),
			}, *bad;

			ws_fill(src, offs[sent], lens[sent], 1);
			ASSERT_EQ(0, ibv_post_send(self->a.qp, &wr, &bad));
			sent_bytes += lens[sent++];
		}
		n = ibv_poll_cq(self->a.cq, 16, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++, scomp++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status) {
				TH_LOG("send %llu: %s",
				       (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
				ws_netem_seen(_metadata, self);
			}
			ASSERT_EQ(scomp, wc[i].wr_id);
		}
		n = ibv_poll_cq(self->b.cq, 16, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++, recvd++) {
			uint8_t *p = self->b.mem + (recvd % WS_RQ) * WS_MSG_MAX;
			long bad;

			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
			ASSERT_EQ(recvd, wc[i].wr_id);
			ASSERT_EQ(IBV_WC_RECV, wc[i].opcode);
			ASSERT_TRUE(wc[i].wc_flags & IBV_WC_WITH_IMM);
			ASSERT_EQ((uint32_t)recvd, ntohl(wc[i].imm_data));
			ASSERT_EQ(lens[recvd], wc[i].byte_len);
			bad = ws_check(p, offs[recvd], lens[recvd], 1);
			ASSERT_EQ(-1, bad) {
				TH_LOG("message %llu: byte %ld of %u differs",
				       (unsigned long long)recvd, bad,
				       lens[recvd]);
			}
			ASSERT_EQ(0, ws_post_recv(&self->b, posted++));
		}
		if (!n)
			usleep(100);
	}
	EXPECT_EQ(total, sent_bytes);
	/* The last sends complete; nothing more arrives at b. */
	while (scomp < nmsg && sxrc_poll_n(self->a.cq, wc, 1, 5000) == 1) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(scomp, wc[0].wr_id);
		scomp++;
	}
	EXPECT_EQ(nmsg, scomp);
	EXPECT_EQ(0, sxrc_poll_n(self->b.cq, wc, 1, 500));
	lent = ws_counter(WS_DEV_A, "wire_tx_lent") - lent;
	TH_LOG("%zu bytes in %llu messages, %ld packets lent their pages",
	       total, (unsigned long long)nmsg, lent);
	/* Most payloads went out from a's pages, uncopied. */
	EXPECT_LT(0, lent);
	/* The receiving softirq took requests itself. */
	soft = ws_counter(WS_DEV_B, "wire_rx_softirq") - soft;
	TH_LOG("%ld packets handled in b's softirq", soft);
	EXPECT_LT(0, soft);
	ws_netem_seen(_metadata, self);
	free(lens);
	free(offs);
}

/* Run WRITEs (or READs) of random pieces of [0, len) through a's queue. */
static int ws_rdma_all(struct __test_metadata *_metadata,
		       FIXTURE_DATA(stream) *self, enum ibv_wr_opcode op,
		       uint8_t *local, size_t len, uint32_t seed)
{
	struct sxrc_rng rng = { seed };
	uint64_t posted = 0, done = 0;
	struct ibv_wc wc[16];
	size_t off = 0;
	int i, n;

	while (off < len || done < posted) {
		if (sxrc_now_ms() > self->deadline)
			return -1;
		while (off < len && posted - done < WS_SQ) {
			uint32_t piece = 1 + sxrc_rnd(&rng, 256 * 1024);
			struct ibv_sge sge = {
				.addr = (uintptr_t)local + off,
				.lkey = self->a.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.opcode = op, .send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = {
					.remote_addr = (uintptr_t)self->b.mem + off,
					.rkey = self->b.mr->rkey,
				},
			}, *bad;

			if (piece > len - off)
				piece = len - off;
			sge.length = piece;
			if (ibv_post_send(self->a.qp, &wr, &bad))
				return -1;
			off += piece;
			posted++;
		}
		n = ibv_poll_cq(self->a.cq, 16, wc);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++, done++)
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id != done) {
				TH_LOG("%s %llu: %s", op == IBV_WR_RDMA_READ ?
				       "READ" : "WRITE",
				       (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
				ws_netem_seen(_metadata, self);
				return -1;
			}
		if (!n)
			usleep(100);
	}
	return 0;
}

TEST_F_TIMEOUT(stream, writes, WS_SECS + 60)
{
	size_t len = self->b.len;
	uint8_t *src = self->a.mem, *back = self->a.mem + len;
	long bad;

	ws_fill(src, 0, len, 2);
	memset(self->b.mem, 0, len);
	memset(back, 0, len);
	ASSERT_EQ(0, ws_rdma_all(_metadata, self, IBV_WR_RDMA_WRITE, src, len,
				 7));
	bad = ws_check(self->b.mem, 0, len, 2);
	ASSERT_EQ(-1, bad) TH_LOG("the peer's byte %ld differs", bad);
	ASSERT_EQ(0, ws_rdma_all(_metadata, self, IBV_WR_RDMA_READ, back, len,
				 11));
	bad = ws_check(back, 0, len, 2);
	ASSERT_EQ(-1, bad) TH_LOG("byte %ld read back differs", bad);
	TH_LOG("%zu bytes written and read back", len);
	ws_netem_seen(_metadata, self);
}

TEST_F_TIMEOUT(stream, atomics, WS_SECS + 60)
{
	uint64_t *counter = (uint64_t *)self->b.mem;
	uint64_t *got = (uint64_t *)self->a.mem;
	uint64_t posted = 0, done = 0, total = WS_ATOMICS + WS_CAS;
	struct ibv_wc wc[16];
	int i, n;

	*counter = 0;
	memset(got, 0xff, total * sizeof(*got));
	/*
	 * Fetch-and-adds first, then compare-and-swaps that each expect the
	 * value the one before left: one step of the chain executed twice
	 * (or not at all) breaks the rest.
	 */
	while (done < total) {
		ASSERT_LT(sxrc_now_ms(), self->deadline);
		while (posted < total && posted - done < 16) {
			struct ibv_sge sge = {
				.addr = (uintptr_t)&got[posted], .length = 8,
				.lkey = self->a.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sge, .num_sge = 1,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.atomic = {
					.remote_addr = (uintptr_t)counter,
					.rkey = self->b.mr->rkey,
				},
			}, *bad;

			if (posted < WS_ATOMICS) {
				wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				wr.wr.atomic.compare_add = 1;
			} else {
				wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.compare_add = posted;
				wr.wr.atomic.swap = posted + 1;
			}
			ASSERT_EQ(0, ibv_post_send(self->a.qp, &wr, &bad));
			posted++;
		}
		n = ibv_poll_cq(self->a.cq, 16, wc);
		ASSERT_LE(0, n);
		for (i = 0; i < n; i++, done++) {
			ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
			ASSERT_EQ(done, wc[i].wr_id);
		}
		if (!n)
			usleep(100);
	}
	for (i = 0; i < (int)total; i++)
		ASSERT_EQ((uint64_t)i, got[i]) TH_LOG("atomic %d", i);
	EXPECT_EQ(total, *counter);
	ws_netem_seen(_metadata, self);
}

/* Peers that are not there. */
FIXTURE(peer) {
	struct ws_end a, b;
	bool cut;
};

FIXTURE_SETUP(peer)
{
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, ws_net_up());
	ASSERT_EQ(0, ws_end_open(&self->a, WS_DEV_A, WS_ADDR_A, 1 << 16));
	ASSERT_EQ(0, ws_end_open(&self->b, WS_DEV_B, WS_ADDR_B, 1 << 16));
	/* Ack timeout 12: 16.8 ms; three resends; RNR NAK twice. */
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 12, 3, 2));
	ASSERT_EQ(0, ws_connect(&self->b, &self->a, 12, 3, 2));
}

FIXTURE_TEARDOWN(peer)
{
	if (self->cut)
		sxrc_sh("tc qdisc change dev " WS_IF_A " root netem %s",
		      ws_netem());
	ws_end_close(&self->a);
	ws_end_close(&self->b);
}

/* Post one SEND of 100 bytes from @a. */
static int ws_send(struct ws_end *a, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem, .length = 100, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * A SEND from a must fail with @status within @secs and leave the QP in
 * ERR; the next one is flushed.
 */
static void ws_send_fails(struct __test_metadata *_metadata, struct ws_end *a,
			  enum ibv_wc_status status, int secs)
{
	struct ibv_wc wc;

	ASSERT_EQ(0, ws_send(a, 1));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, secs * 1000));
	EXPECT_EQ(1, wc.wr_id);
	EXPECT_EQ(status, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(IBV_QPS_ERR, sxrc_qp_state(a->qp));
	ASSERT_EQ(0, ws_send(a, 2));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 5000));
	EXPECT_EQ(2, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
}

TEST_F_TIMEOUT(peer, host_gone, 120)
{
	long before = ws_counter(WS_DEV_A, "wire_retransmits");

	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem loss 100%%"));
	ws_send_fails(_metadata, &self->a, IBV_WC_RETRY_EXC_ERR, 60);
	/* The one packet, then retry_cnt times again. */
	EXPECT_EQ(before + 3, ws_counter(WS_DEV_A, "wire_retransmits"));
}

TEST_F_TIMEOUT(peer, qp_gone, 120)
{
	ASSERT_EQ(0, ibv_destroy_qp(self->b.qp));
	self->b.qp = NULL;
	ws_send_fails(_metadata, &self->a, IBV_WC_RETRY_EXC_ERR, 60);
}

TEST_F_TIMEOUT(peer, no_receive, 120)
{
	ws_send_fails(_metadata, &self->a, IBV_WC_RNR_RETRY_EXC_ERR, 60);
}

/* Post a receive of @len bytes at @buf of @mr on @e's QP. */
static int ws_post_recv_at(struct ws_end *e, struct ibv_mr *mr, void *buf,
			   uint32_t len, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

/*
 * A new translation under b's posted receive WQE, then two SENDs from a
 * over the wire: b's receive completes with a local protection error,
 * a's first SEND with a remote operational error (the NAK's) and only
 * the second flushed.  Both QPs through RESET back to RTS: traffic again.
 */
TEST_F_TIMEOUT(peer, rereg_under_posted_recv, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ws_end *a = &self->a, *b = &self->b;
	struct ibv_wc wc[2];
	int n = 0;

	ASSERT_EQ(0, ws_post_recv_at(b, b->mr, b->mem, 256, 5));
	ASSERT_EQ(0, ibv_rereg_mr(b->mr, IBV_REREG_MR_CHANGE_TRANSLATION,
				  NULL, b->mem + 32768, 32768, 0));
	ASSERT_EQ(0, ws_send(a, 1));
	ASSERT_EQ(0, ws_send(a, 2));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, wc, 1, 30000));
	EXPECT_EQ(5, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wc[0].status)
		TH_LOG("receive: %s", ibv_wc_status_str(wc[0].status));
	n = sxrc_poll_n(a->cq, wc, 2, 30000);
	ASSERT_EQ(2, n);
	EXPECT_EQ(1, wc[0].wr_id);
	EXPECT_EQ(IBV_WC_REM_OP_ERR, wc[0].status)
		TH_LOG("first SEND: %s", ibv_wc_status_str(wc[0].status));
	EXPECT_EQ(2, wc[1].wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc[1].status);

	ASSERT_EQ(0, ibv_modify_qp(a->qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_modify_qp(b->qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(a, b, 12, 7, 2));
	ASSERT_EQ(0, ws_connect(b, a, 12, 7, 2));
	ASSERT_EQ(0, ws_post_recv_at(b, b->mr, b->mem + 32768, 256, 6));
	ASSERT_EQ(0, ws_send(a, 3));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	ASSERT_EQ(1, sxrc_poll_n(b->cq, wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
	EXPECT_EQ(100, wc[0].byte_len);
}

/*
 * A type 2 window bound with REMOTE_WRITE | LOCAL_WRITE (as programs
 * written for ConnectX ask) on a region registered LOCAL_WRITE |
 * MW_BIND: a WRITEs through it over the wire, then invalidates it with
 * SEND_WITH_INV; the key is dead after.
 */
TEST_F_TIMEOUT(peer, window_local_write_right, 120)
{
	struct ws_end *a = &self->a, *b = &self->b;
	struct ibv_mr *mr = ibv_reg_mr(b->pd, b->mem, 16384,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(b->pd, IBV_MW_TYPE_2);
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem, .length = 64, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;
	uint32_t k;

	ASSERT_NE(NULL, mr);
	ASSERT_NE(NULL, mw);
	k = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = k;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)b->mem;
	wr.bind_mw.bind_info.length = 4096;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					       IBV_ACCESS_LOCAL_WRITE;
	ASSERT_EQ(0, ibv_post_send(b->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, &wc, 1, 5000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("bind: %s", ibv_wc_status_str(wc.status));

	memset(a->mem, 0x5c, 64);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 8;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = (uintptr_t)b->mem + 1000;
	wr.wr.rdma.rkey = k;
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 30000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("write: %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(0x5c, b->mem[1000 + 63]);

	/* Invalidated by the peer: the receive says which key. */
	ASSERT_EQ(0, ws_post_recv_at(b, mr, b->mem + 8192, 256, 9));
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 10;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = k;
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(a->cq, &wc, 1, 30000));
	ASSERT_EQ(IBV_WC_SUCCESS, wc.status)
		TH_LOG("send with invalidate: %s", ibv_wc_status_str(wc.status));
	ASSERT_EQ(1, sxrc_poll_n(b->cq, &wc, 1, 30000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_NE(0, wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_EQ(k, wc.invalidated_rkey);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * A packet that went out from the pages of its region outlives the
 * region: netem holds a's packets half a second while a's QP, region and
 * memory go and the memory is written over; they still arrive, with the
 * bytes they had when posted.
 */
#define WS_LENT_MSGS	4
#define WS_LENT_LEN	16384	/* 16 packets of MTU 1024 each */

TEST_F_TIMEOUT(peer, pages_gone_in_flight, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	long lent = ws_counter(WS_DEV_A, "wire_tx_lent");
	size_t churn_len = 64 << 20;
	struct ibv_wc wc[WS_LENT_MSGS];
	uint8_t *churn;
	int i;

	for (i = 0; i < WS_LENT_MSGS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->b.mem + i * WS_LENT_LEN,
			.length = WS_LENT_LEN, .lkey = self->b.mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
		}, *bad;

		ASSERT_EQ(0, ibv_post_recv(self->b.qp, &wr, &bad));
	}
	/*
	 * An ack timeout of 2.1 s outlasts the held round trip: with the
	 * fixture's 16.8 ms, a debug kernel slow enough to post past it saw
	 * the timer go off, the window shut to one packet and the rest of
	 * the messages wait for acknowledgments.
	 */
	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 19, 3, 2));
	ws_fill(self->a.mem, 0, WS_LENT_MSGS * WS_LENT_LEN, 77);
	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem delay 500ms"));
	for (i = 0; i < WS_LENT_MSGS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->a.mem + i * WS_LENT_LEN,
			.length = WS_LENT_LEN, .lkey = self->a.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND,
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(self->a.qp, &wr, &bad));
	}
	/* All of it is on the wire, from a's pages. */
	ASSERT_LE(lent + WS_LENT_MSGS * WS_LENT_LEN / 1024,
		  ws_counter(WS_DEV_A, "wire_tx_lent"));
	ASSERT_EQ(0, ibv_destroy_qp(self->a.qp));
	self->a.qp = NULL;
	ASSERT_EQ(0, ibv_dereg_mr(self->a.mr));
	self->a.mr = NULL;
	ASSERT_EQ(0, munmap(self->a.mem, self->a.len));
	self->a.mem = NULL;
	/* The pages just freed are the first to be handed out again. */
	churn = sxrc_map(churn_len, 0);
	ASSERT_NE(NULL, churn);
	memset(churn, 0x5a, churn_len);
	munmap(churn, churn_len);

	ASSERT_EQ(WS_LENT_MSGS,
		  sxrc_poll_n(self->b.cq, wc, WS_LENT_MSGS, 10000));
	for (i = 0; i < WS_LENT_MSGS; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_RECV, wc[i].opcode);
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(WS_LENT_LEN, wc[i].byte_len);
		EXPECT_EQ(-1, ws_check(self->b.mem + i * WS_LENT_LEN,
				       i * WS_LENT_LEN, WS_LENT_LEN, 77));
	}
}

/* Post an @op of @len bytes from a's memory at @off, signaled. */
static int ws_post_op(struct ws_end *a, enum ibv_wr_opcode op, size_t off,
		      uint32_t len, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->mem + off, .length = len,
		.lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(id),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

/*
 * Requests are handled in the receiving socket's softirq, but pages of
 * an ODP region are faulted in, which softirq cannot wait for: such a
 * packet goes to the receive worker as it came.  SENDs into receive
 * WQEs on a region never touched yet, a WRITE and a WRITE with
 * immediate into it: every byte lands, every WQE completes once, in
 * order.
 */
#define WS_ODP_LEN	16384	/* 16 packets of MTU 1024 each */

TEST_F_TIMEOUT(peer, odp_memory, 120)
{
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	long soft = ws_counter(WS_DEV_B, "wire_rx_softirq");
	long soft_a = ws_counter(WS_DEV_A, "wire_rx_softirq");
	size_t len = 4 * WS_ODP_LEN;
	struct ibv_wc wc[4];
	struct ibv_mr *mr;
	uint8_t *mem;
	int i, n;

	/* Faults under TCG (and KASAN) may outlast the fixture's 16.8 ms. */
	ASSERT_EQ(0, ibv_modify_qp(self->a.qp, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ws_connect(&self->a, &self->b, 16, 7, 2));

	/* Warm-up into pinned memory: the QP's wire state is made. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ws_post_recv_at(&self->b, self->b.mr,
					     self->b.mem, 100, 100 + i));
		ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_SEND, 0, 100, 0, 0,
					100 + i));
		ASSERT_EQ(1, sxrc_poll_n(self->a.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(1, sxrc_poll_n(self->b.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
	}
	/* The second went through softirq, at least, and an ACK. */
	EXPECT_LT(soft, ws_counter(WS_DEV_B, "wire_rx_softirq"));
	EXPECT_LT(soft_a, ws_counter(WS_DEV_A, "wire_rx_softirq"));

	mem = sxrc_map(len, 0);
	ASSERT_NE(NULL, mem);
	mr = ibv_reg_mr(self->b.pd, mem, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	ws_fill(self->a.mem, 0, len, 91);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ws_post_recv_at(&self->b, mr,
					     mem + i * WS_ODP_LEN,
					     WS_ODP_LEN, i));
	/* The immediate's receive, in pinned memory. */
	ASSERT_EQ(0, ws_post_recv_at(&self->b, self->b.mr, self->b.mem, 0,
				     2));
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_SEND,
					i * WS_ODP_LEN, WS_ODP_LEN, 0, 0, i));
	ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_RDMA_WRITE, 2 * WS_ODP_LEN,
				WS_ODP_LEN, (uintptr_t)mem + 2 * WS_ODP_LEN,
				mr->rkey, 2));
	ASSERT_EQ(0, ws_post_op(&self->a, IBV_WR_RDMA_WRITE_WITH_IMM,
				3 * WS_ODP_LEN, WS_ODP_LEN,
				(uintptr_t)mem + 3 * WS_ODP_LEN, mr->rkey, 3));

	ASSERT_EQ(4, sxrc_poll_n(self->a.cq, wc, 4, 30000));
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status)
			TH_LOG("%d: %s", i, ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(i, wc[i].wr_id);
	}
	n = sxrc_poll_n(self->b.cq, wc, 3, 10000);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status)
			TH_LOG("%d: %s", i, ibv_wc_status_str(wc[i].status));
		EXPECT_EQ(i, wc[i].wr_id);
		EXPECT_EQ(i < 2 ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM,
			  wc[i].opcode);
		EXPECT_EQ(WS_ODP_LEN, wc[i].byte_len);
	}
	EXPECT_EQ(3, ntohl(wc[2].imm_data));
	EXPECT_EQ(-1, ws_check(mem, 0, len, 91));
	/* Nothing more. */
	EXPECT_EQ(0, sxrc_poll_n(self->b.cq, wc, 1, 200));
	ibv_dereg_mr(mr);
	munmap(mem, len);
}

/* A UD QP of @e, in RTS with Q_Key @qkey. */
static struct ibv_qp *ws_ud_qp(struct ws_end *e, uint32_t qkey)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = e->cq, .recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };
	struct ibv_qp *qp = ibv_create_qp(e->pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	if (qp)
		ibv_destroy_qp(qp);
	return NULL;
}

/*
 * Datagrams into receive buffers of an ODP region, a page each:
 * the device's receive worker does not fault them (it serves every QP
 * of the device), the QP's own work item does, with the receive WQE the
 * worker took held for it, and every datagram lands, in order, whole.
 */
TEST_F_TIMEOUT(peer, ud_odp_memory, 120)
{
	const uint32_t qkey = 0x11223344, n = 4, len = 512, stride = 4096;
	struct ibv_qp *ua = ws_ud_qp(&self->a, qkey);
	struct ibv_qp *ub = ws_ud_qp(&self->b, qkey);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = self->b.gid, .sgid_index = self->a.gidx,
			 .hop_limit = 64 },
	};
	size_t blen = n * stride;
	struct ibv_wc wc[4];
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t *mem;
	uint32_t i;

	ASSERT_NE(NULL, ua);
	ASSERT_NE(NULL, ub);
	/* UD has no retries: a's way out loses nothing for this test. */
	self->cut = true;
	ASSERT_EQ(0, sxrc_sh("tc qdisc change dev " WS_IF_A
			   " root netem delay 1ms"));
	ah = ibv_create_ah(self->a.pd, &aa);
	ASSERT_NE(NULL, ah);
	mem = sxrc_map(blen, 0);
	ASSERT_NE(NULL, mem);
	mr = ibv_reg_mr(self->b.pd, mem, blen, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_ON_DEMAND);
	ASSERT_NE(NULL, mr);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)mem + i * stride,
			.length = len + 40, .lkey = mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		ASSERT_EQ(0, ibv_post_recv(ub, &wr, &bad));
	}
	ws_fill(self->a.mem, 0, n * len, 77);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)self->a.mem + i * len,
			.length = len, .lkey = self->a.mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = ub->qp_num,
				   .remote_qkey = qkey },
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(ua, &wr, &bad));
		ASSERT_EQ(1, sxrc_poll_n(self->a.cq, wc, 1, 10000));
		ASSERT_EQ(IBV_WC_SUCCESS, wc[0].status);
		ASSERT_EQ(1, sxrc_poll_n(self->b.cq, wc, 1, 20000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc[0].status);
		EXPECT_EQ(i, wc[0].wr_id);
		EXPECT_EQ(len + 40, wc[0].byte_len);
		EXPECT_EQ(-1, ws_check(mem + i * stride + 40, i * len, len,
				       77));
	}
	EXPECT_EQ(0, sxrc_poll_n(self->b.cq, wc, 1, 200));
	ibv_destroy_qp(ua);
	ibv_destroy_qp(ub);
	ibv_destroy_ah(ah);
	ibv_dereg_mr(mr);
	munmap(mem, blen);
}

/*
 * XRC across the wire: the peer host's processes share an XRC receive
 * QP by OFED 1.5's registration.
 */
#define WX_PROCS	3
#define WX_MSGS		150	/* per SRQ and round */
#define WX_LEN		256
#define WX_RQ		64

struct wx_shared {
	_Atomic int ready;	/* children with their SRQ up */
	_Atomic int round;	/* the round the parent has sent */
	_Atomic int done[WX_PROCS];	/* the last round each child took */
	_Atomic int quit[WX_PROCS];	/* the parent lets child k go */
	_Atomic uint32_t rcv_qpn;
	uint32_t srqn[WX_PROCS];
	uint32_t send_qpn;
	union ibv_gid a_gid, b_gid;
};

/* In a child: say what failed, and give up with status 1. */
#define CHK_W(cond) do {						\
	if (!(cond)) {							\
		SXRC_CHILD_SAYS(#cond);					\
		return 1;						\
	}								\
} while (0)

/* Receive buffer @slot back on @srq. */
static int wx_post(struct ibv_srq *srq, struct ibv_mr *mr, uint8_t *buf,
		   uint64_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + slot * WX_LEN, .length = WX_LEN,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Child k of the peer host: 0 when every message reached it intact. */
static int wx_child(struct wx_shared *sh, int k, const char *path)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = WX_RQ, .max_sge = 1 },
	};
	struct ibv_qp_init_attr_xrc qa = { .qp_type = IBV_QPT_XRC_RECV };
	struct ibv_xrc_domain *d;
	struct ibv_context *ctx;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	union ibv_gid gid;
	uint8_t *buf;
	int fd, gidx, seq = 0, round, i;
	uint32_t qpn;

	ctx = ws_open(WS_DEV_B);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	CHK_W(ctx && fd >= 0);
	gidx = ws_gid_index(ctx, WS_ADDR_B, &gid);
	d = ibv_open_xrc_domain(ctx, fd, O_CREAT);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, WX_RQ, NULL, NULL, 0);
	buf = sxrc_map(WX_RQ * WX_LEN, 0);
	CHK_W(gidx >= 0 && d && pd && cq && buf);
	mr = ibv_reg_mr(pd, buf, WX_RQ * WX_LEN, IBV_ACCESS_LOCAL_WRITE);
	srq = ibv_create_xrc_srq(pd, d, cq, &sa);
	CHK_W(mr && srq);
	for (i = 0; i < WX_RQ; i++)
		CHK_W(!wx_post(srq, mr, buf, i));
	if (!k) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
		};

		qa.xrc_domain = d;
		CHK_W(!ibv_create_xrc_rcv_qp(&qa, &qpn));
		CHK_W(!ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE |
					     IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = sh->send_qpn;
		a.rq_psn = 0x4242;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = sh->a_gid;
		a.ah_attr.grh.sgid_index = gidx;
		a.ah_attr.grh.hop_limit = 64;
		CHK_W(!ibv_modify_xrc_rcv_qp(d, qpn, &a, IBV_QP_STATE |
					     IBV_QP_AV | IBV_QP_PATH_MTU |
					     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					     IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER));
		sh->b_gid = gid;
		atomic_store(&sh->rcv_qpn, qpn);
	} else {
		while (!(qpn = atomic_load(&sh->rcv_qpn)))
			usleep(1000);
		CHK_W(!ibv_reg_xrc_rcv_qp(d, qpn));
	}
	sh->srqn[k] = ibv_xrc_srq_num(srq);
	atomic_fetch_add(&sh->ready, 1);

	/* Take each round's messages, in order, until the parent says go. */
	for (round = 1; !atomic_load(&sh->quit[k]); ) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cq, 1, &wc);
		uint32_t hdr[2];

		CHK_W(n >= 0);
		if (!n) {
			usleep(200);
			continue;
		}
		CHK_W(wc.status == IBV_WC_SUCCESS && wc.byte_len == WX_LEN);
		memcpy(hdr, buf + wc.wr_id * WX_LEN, sizeof(hdr));
		CHK_W(hdr[0] == (uint32_t)k && hdr[1] == (uint32_t)seq);
		for (i = 8; i < WX_LEN; i++)
			CHK_W(buf[wc.wr_id * WX_LEN + i] == (uint8_t)(seq + i));
		CHK_W(!wx_post(srq, mr, buf, wc.wr_id));
		if (++seq % WX_MSGS == 0)
			atomic_store(&sh->done[k], round++);
	}
	/* Child 1 lets go by the call, the others by exiting. */
	if (k == 1)
		CHK_W(!ibv_unreg_xrc_rcv_qp(d, qpn));
	return 0;
}

FIXTURE(xrc) {
	struct ws_end a;
	struct wx_shared *sh;
	pid_t pid[WX_PROCS];
	char path[64];
	uint32_t seq[WX_PROCS];	/* messages sent to each child */
	uint64_t posted, done;	/* this host's sends */
	bool gone;		/* the receive QP is expected gone */
};

FIXTURE_SETUP(xrc)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = WS_SQ, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};

	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	ASSERT_EQ(0, ws_net_up());
	ASSERT_EQ(0, ws_end_open(&self->a, WS_DEV_A, WS_ADDR_A, 1 << 20));
	/* This host's side is an XRC send QP instead of the RC one. */
	ASSERT_EQ(0, ibv_destroy_qp(self->a.qp));
	ia.send_cq = self->a.cq;
	ia.recv_cq = self->a.cq;
	ia.pd = self->a.pd;
	self->a.qp = ibv_create_qp_ex(self->a.ctx, &ia);
	ASSERT_NE(NULL, self->a.qp);
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	self->sh->send_qpn = self->a.qp->qp_num;
	self->sh->a_gid = self->a.gid;
	snprintf(self->path, sizeof(self->path), "/tmp/sxws-xrcd.%d",
		 getpid());
}

FIXTURE_TEARDOWN(xrc)
{
	int i;

	for (i = 0; i < WX_PROCS; i++) {
		if (self->pid[i] > 0) {
			kill(self->pid[i], SIGKILL);
			waitpid(self->pid[i], NULL, 0);
		}
	}
	unlink(self->path);
	ws_end_close(&self->a);
}

/* This host's XRC send QP towards the peer's shared receive QP. */
static int wx_connect(FIXTURE_DATA(xrc) *self)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};

	if (ibv_modify_qp(self->a.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = atomic_load(&self->sh->rcv_qpn);
	a.rq_psn = 0x4242;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = self->sh->b_gid;
	a.ah_attr.grh.sgid_index = self->a.gidx;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(self->a.qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x4242;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(self->a.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Reap this host's send completions: -1 on a failed one. */
static int wx_reap(struct __test_metadata *_metadata,
		   FIXTURE_DATA(xrc) *self, enum ibv_wc_status *status)
{
	struct ibv_wc wc[16];
	int i, n = ibv_poll_cq(self->a.cq, 16, wc);

	for (i = 0; i < n; i++, self->done++) {
		if (wc[i].status == IBV_WC_SUCCESS)
			continue;
		*status = wc[i].status;
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR && !self->gone)
			TH_LOG("XRC send %llu: %s",
			       (unsigned long long)wc[i].wr_id,
			       ibv_wc_status_str(wc[i].status));
		return -1;
	}
	return n < 0 ? -1 : n;
}

/*
 * WX_MSGS messages to each child from @from on, interleaved, each sent
 * successfully; then wait until those children took them all.
 */
static int wx_round(struct __test_metadata *_metadata,
		    FIXTURE_DATA(xrc) *self, int from, int round)
{
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	double end = sxrc_now_ms() + WS_SECS * 1000.0;
	int m, k, i, n;

	for (m = 0; m < WX_MSGS; m++) {
		for (k = from; k < WX_PROCS; k++) {
			uint8_t *p = self->a.mem +
				     (self->posted % WS_SQ) * WX_LEN;
			struct ibv_sge sge = {
				.addr = (uintptr_t)p, .length = WX_LEN,
				.lkey = self->a.mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = self->posted, .sg_list = &sge,
				.num_sge = 1, .opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
				.qp_type.xrc.remote_srqn = self->sh->srqn[k],
			}, *bad;
			uint32_t hdr[2] = { k, self->seq[k] };

			while (self->posted - self->done >= WS_SQ) {
				n = wx_reap(_metadata, self, &status);
				if (n < 0 || sxrc_now_ms() > end)
					return -1;
				if (!n)
					usleep(100);
			}
			memcpy(p, hdr, sizeof(hdr));
			for (i = 8; i < WX_LEN; i++)
				p[i] = self->seq[k] + i;
			if (ibv_post_send(self->a.qp, &wr, &bad))
				return -1;
			self->posted++;
			self->seq[k]++;
		}
	}
	while (self->done < self->posted) {
		n = wx_reap(_metadata, self, &status);
		if (n < 0 || sxrc_now_ms() > end)
			return -1;
		if (!n)
			usleep(100);
	}
	for (k = from; k < WX_PROCS; k++)
		while (atomic_load(&self->sh->done[k]) < round) {
			if (sxrc_now_ms() > end) {
				TH_LOG("child %d took %d rounds of %d", k,
				       atomic_load(&self->sh->done[k]), round);
				return -1;
			}
			usleep(1000);
		}
	return 0;
}

/* Let child @k go: 0 when it exits with status 0. */
static int wx_release(FIXTURE_DATA(xrc) *self, int k)
{
	int ret;

	atomic_store(&self->sh->quit[k], 1);
	ret = sxrc_wait_child(self->pid[k]);
	self->pid[k] = 0;
	return ret;
}

TEST_F_TIMEOUT(xrc, shared_rcv_qp, WS_SECS + 60)
{
	enum ibv_wc_status status = IBV_WC_SUCCESS;
	struct ibv_sge sge = {
		.addr = (uintptr_t)self->a.mem, .length = WX_LEN,
		.lkey = self->a.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	double end;
	int k, n;

	for (k = 0; k < WX_PROCS; k++) {
		self->pid[k] = fork();
		ASSERT_LE(0, self->pid[k]);
		if (!self->pid[k])
			_exit(wx_child(self->sh, k, self->path));
	}
	end = sxrc_now_ms() + 60000;
	while (atomic_load(&self->sh->ready) < WX_PROCS) {
		ASSERT_LT(sxrc_now_ms(), end);
		usleep(1000);
	}
	ASSERT_EQ(0, wx_connect(self));

	/* All three SRQs through the one receive QP. */
	ASSERT_EQ(0, wx_round(_metadata, self, 0, 1));
	/* Its creator exits: the QP serves the two still registered. */
	ASSERT_EQ(0, wx_release(self, 0));
	ASSERT_EQ(0, wx_round(_metadata, self, 1, 2));
	/* One unregisters: the last one is served. */
	ASSERT_EQ(0, wx_release(self, 1));
	ASSERT_EQ(0, wx_round(_metadata, self, 2, 3));
	/* The last exits: the QP is gone, nobody answers. */
	ASSERT_EQ(0, wx_release(self, 2));
	self->gone = true;
	wr.wr_id = self->posted;
	wr.qp_type.xrc.remote_srqn = self->sh->srqn[2];
	ASSERT_EQ(0, ibv_post_send(self->a.qp, &wr, &bad));
	self->posted++;
	end = sxrc_now_ms() + 60000;
	while (!(n = wx_reap(_metadata, self, &status))) {
		ASSERT_LT(sxrc_now_ms(), end);
		usleep(1000);
	}
	EXPECT_EQ(-1, n);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, status) {
		TH_LOG("%s", ibv_wc_status_str(status));
	}
}

TEST_HARNESS_MAIN
