// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: RC over a lossy wire, every byte exactly once and in
 * order, and an XRC receive QP shared across it.  The two links and the
 * wire between them: sxrc_wire_pair.h.
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
 *   xrc.shared_rcv_qp  three processes of the peer host share one XRC
 *                    receive QP through OFED's calls (one creates it, two
 *                    register), each with its XRC SRQ; this host's XRC
 *                    send QP reaches all three SRQs through it.  The
 *                    creator exits and the QP keeps serving the other
 *                    two; one unregisters, the last exits, and the QP is
 *                    gone: the next send fails with RETRY_EXC_ERR
 * The stream tests also require that netem did its work: retransmissions
 * and dropped duplicates are counted in the links' counters.
 */
#include "sxrc_wire_pair.h"

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

			sxrc_stream_fill(src, offs[sent], lens[sent], 1);
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
			bad = sxrc_stream_check(p, offs[recvd], lens[recvd], 1);
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

	sxrc_stream_fill(src, 0, len, 2);
	memset(self->b.mem, 0, len);
	memset(back, 0, len);
	ASSERT_EQ(0, ws_rdma_all(_metadata, self, IBV_WR_RDMA_WRITE, src, len,
				 7));
	bad = sxrc_stream_check(self->b.mem, 0, len, 2);
	ASSERT_EQ(-1, bad) TH_LOG("the peer's byte %ld differs", bad);
	ASSERT_EQ(0, ws_rdma_all(_metadata, self, IBV_WR_RDMA_READ, back, len,
				 11));
	bad = sxrc_stream_check(back, 0, len, 2);
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
