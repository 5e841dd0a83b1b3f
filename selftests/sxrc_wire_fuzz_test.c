// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the wire transport under a packet fuzzer: what the
 * link must deliver, and what it must drop.  The link, its peer host and
 * its QPs: sxrc_wire_fx.h.
 *
 * - well-formed packets from the peer complete what they should, with
 *   the right bytes (the positive control);
 * - malformed ones (cut short, wrong ICRC, TVer, P_Key, opcodes the
 *   target does not take, unknown QPNs, another source address, wrong
 *   Q_Key...) are dropped and counted in counters/wire_rx_dropped,
 *   exactly one each, and change nothing; SXRC_WIRE_FUZZ_N random ones
 *   (default 50000);
 * - a spoofed packet in the middle of a message changes nothing;
 * - one header the link writes: an IPv6 packet's traffic class and flow
 *   label are the address vector's.
 */
#include "sxrc_wire_fx.h"

FIXTURE_SETUP(wire)
{
	wf_setup(_metadata, self);
}

FIXTURE_TEARDOWN(wire)
{
	wf_teardown(self);
}

/* ------------------------------------------------------------------
 * The tests
 */

/*
 * The positive control: well-formed packets from the peer complete what
 * they should, with the right bytes, and are answered; so the packets
 * the other tests refuse were refused for what was wrong with them.
 */
TEST_F_TIMEOUT(wire, delivers, 300)
{
	uint64_t *rw = (uint64_t *)(self->mem + OFF_RW);
	struct wf_mark m;
	struct ibv_wc wc;
	struct wf_pkt p;
	struct wf_cap *c;
	uint8_t *buf;

	wf_mark(self, &m);

	/* SEND_ONLY to the RC QP: one receive, an ACK for its PSN. */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 100));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ACK);
	ASSERT_NE(NULL, c);
	EXPECT_EQ((self->rc.epsn - 1) & 0xffffff, c->psn);
	EXPECT_EQ(SYN_ACK, c->syndrome);
	EXPECT_EQ(1, c->msn);

	/* Fields the ICRC masks may change on the way. */
	wf_fill_payload(self, 64);
	p = wf_req(self, &self->rc, SEND_ONLY, 64);
	p.tos = 0x2e;
	p.ttl = 3;
	p.bth_rsvd = 0x5a;
	p.pkey = 0x7fff;	/* the default partition, limited member */
	buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
				 IBV_WC_SUCCESS, 64, NULL));
	EXPECT_EQ(0, memcmp(buf, wf_payload, 64));
	memcpy(self->shadow + (buf - self->mem), buf, 64);

	/*
	 * An IPv4 payload longer than its UDP datagram (the ICRC covers the
	 * IP length, and sits at the end of the datagram): UDP trims it.
	 */
	{
		struct wf_frame f;

		wf_fill_payload(self, 32);
		p = wf_req(self, &self->rc, SEND_ONLY, 32);
		wf_build(&p, &f);
		memset(f.b + f.len, 0xee, 8);
		f.len += 8;
		put16(f.b + 2, f.len);
		wf_fix_icrc(&f);
		buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
		self->rc.epsn = (self->rc.epsn + 1) & 0xffffff;
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
					 IBV_WC_SUCCESS, 32, NULL));
		EXPECT_EQ(0, memcmp(buf, wf_payload, 32));
		memcpy(self->shadow + (buf - self->mem), buf, 32);
		ASSERT_EQ(0, wf_post_len(self, &self->rq_rc, RQ_SZ));
	}

	/* A SEND of three packets with immediate data. */
	wf_fill_payload(self, 2 * WF_MTU + 40);
	buf = wf_rbuf(self, &self->rq_rc, self->rq_rc.head);
	p = wf_req(self, &self->rc, SEND_FIRST, WF_MTU);
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, SEND_MIDDLE, WF_MTU);
	p.data = wf_payload + WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, SEND_LAST_IMM, 40);
	p.data = wf_payload + 2 * WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_rc,
				 IBV_WC_SUCCESS, 2 * WF_MTU + 40, &wc));
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(htonl(0x11223344), wc.imm_data);
	EXPECT_EQ(0, memcmp(buf, wf_payload, 2 * WF_MTU + 40));
	memcpy(self->shadow + (buf - self->mem), buf, 2 * WF_MTU + 40);

	/* RDMA WRITE into the MR. */
	wf_fill_payload(self, 300);
	p = wf_req(self, &self->rc, WRITE_ONLY, 300);
	p.va += 100;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_EQ(0, wf_sync(self));
	EXPECT_EQ(0, memcmp(self->mem + OFF_RW + 100, wf_payload, 300));
	memcpy(self->shadow + OFF_RW + 100, wf_payload, 300);

	/* RDMA READ: the responses carry the MR's bytes. */
	wf_mark(self, &m);
	p = wf_req(self, &self->rc, READ_REQ, 0);
	p.dmalen = WF_MTU + 8;
	p.va += 8;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 2));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_FIRST);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(WF_MTU, c->paylen);
	EXPECT_EQ(0, memcmp(c->data, self->mem + OFF_RW + 8, WF_MTU));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | READ_RESP_LAST);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(8, c->paylen);
	EXPECT_EQ(0, memcmp(c->data, self->mem + OFF_RW + 8 + WF_MTU, 8));

	/* Fetch-and-add: the original value back, the sum in place. */
	wf_mark(self, &m);
	rw[4] = 7;
	memcpy(self->shadow + OFF_RW + 32, &rw[4], 8);
	p = wf_req(self, &self->rc, FETCH_ADD, 0);
	p.va += 32;
	p.swap = 5;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	ASSERT_EQ(0, wf_sync(self));
	c = wf_cap_find(&self->net, m.cap, RC_PEER, TP_RC | ATOMIC_ACK);
	ASSERT_NE(NULL, c);
	EXPECT_EQ(7, c->orig);
	EXPECT_EQ(12, rw[4]);
	memcpy(self->shadow + OFF_RW + 32, &rw[4], 8);

	/* UC, XRC (into SRQ a), UD (the IPv4 header in the GRH's place). */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 500));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 77));
	wf_fill_payload(self, 123);
	p = wf_dgram(self, 123);
	buf = wf_rbuf(self, &self->rq_ud, self->rq_ud.head);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	ASSERT_TRUE(wf_recv_done(_metadata, self, &self->rq_ud,
				 IBV_WC_SUCCESS, 40 + 123, &wc));
	EXPECT_EQ(UD_PEER, wc.src_qp);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
	EXPECT_EQ(0x45, buf[20]);
	EXPECT_EQ(WF_PEER, get32(buf + 20 + 12));
	EXPECT_EQ(WF_ADDR, get32(buf + 20 + 16));
	EXPECT_EQ(0, memcmp(buf + 40, wf_payload, 123));
	memcpy(self->shadow + (buf - self->mem), buf, 40 + 123);

	EXPECT_EQ(0, wf_dropped() - m.dropped);
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	wf_finish(_metadata, self);
}
/* A QP number no QP of the device has: sometimes 0, 1 or 0xffffff. */
static uint32_t wf_no_qpn(WF_SELF *self)
{
	static const uint32_t special[] = { 0, 1, 2, 0xffffff, 0xfffffe,
					    0x800000 };
	uint32_t qpn;

	do {
		if (!sxrc_rnd(&self->rng, 4))
			qpn = special[sxrc_rnd(&self->rng, 6)];
		else
			qpn = sxrc_rnd(&self->rng, 1U << 24);
	} while (wf_is_ours(self, qpn));
	return qpn;
}
/* Cut @f's UDP payload to @n bytes (the ICRC not redone). */
static void wf_cut(struct wf_frame *f, uint32_t n)
{
	wf_set_len(f, f->udpo + 8 + n);
}
/* The ICRC is wrong for sure (a cut may land on a right one by chance). */
static void wf_break_icrc(struct wf_frame *f)
{
	if (wf_icrc_ok(f))
		f->b[f->len - 1] ^= 0x80;
}
/* IPv4 options: four NOPs, the header 24 bytes. */
static void wf_ip_options(struct wf_frame *f)
{
	memmove(f->b + 24, f->b + 20, f->len - 20);
	memset(f->b + 20, 1, 4);
	f->b[0] = 0x46;
	f->udpo = 24;
	wf_set_len(f, f->len + 4);
}
/*
 * Malformed packets, each once: cut short at every length, cut inside
 * their headers with a right ICRC, every bit of the ICRC and of what it
 * covers flipped, TVer, P_Key, a pad count with nothing to pad, payload
 * on an opcode without, IPv4 options, and every opcode byte a QP does
 * not take.  Each is dropped and counted, none has an effect; UDP's own
 * drops never reach the link.  The templates would complete a receive,
 * write memory, add to it: proven by the valid packet that follows.
 */
TEST_F_TIMEOUT(wire, malformed, 600)
{
	struct wf_conn *conns[] = { &self->rc, &self->uc, &self->xrc };
	unsigned int ti, i, bit, n = 0;
	struct wf_frame f, t;
	struct wf_mark m;
	struct wf_pkt tpl[6];
	uint32_t full;

	wf_fill_payload(self, 256);
	tpl[0] = wf_req(self, &self->rc, SEND_ONLY_IMM, 61);
	tpl[1] = wf_req(self, &self->rc, WRITE_ONLY, 64);
	tpl[2] = wf_req(self, &self->rc, FETCH_ADD, 0);
	tpl[3] = wf_dgram(self, 64);
	tpl[4] = wf_req(self, &self->xrc, SEND_ONLY, 64);
	tpl[5] = wf_req(self, &self->uc, WRITE_ONLY_IMM, 64);
	wf_mark(self, &m);
	for (ti = 0; ti < 6; ti++) {
		wf_build(&tpl[ti], &t);
		full = t.len - UDPO - 8;

		/* Cut at every length, the ICRC left as it was. */
		for (i = 0; i < full; i++, n++) {
			f = t;
			wf_cut(&f, i);
			wf_break_icrc(&f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* Cut inside the headers, with the ICRC that fits. */
		for (i = 0; i < t.hlen; i++, n++) {
			f = t;
			wf_cut(&f, i + 4);
			if (i >= 12)
				wf_fix_icrc(&f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* Every bit of the ICRC; a bit of every byte it covers. */
		for (bit = 0; bit < 32; bit++, n++) {
			f = t;
			f.b[f.len - 4 + bit / 8] ^= 1 << (bit % 8);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		for (i = BTHO; i < t.len - 4; i++) {
			if (i == BTHO + 4)
				continue;	/* masked */
			f = t;
			f.b[i] ^= 1 << sxrc_rnd(&self->rng, 8);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
			n++;
		}
		for (i = 0; i < 4; i++, n++) {	/* IP id, UDP source port */
			f = t;
			f.b[(i < 2 ? 4 : UDPO - 2) + i] ^= 0x10;
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* TVer, P_Key. */
		for (i = 1; i < 16; i++, n++) {
			struct wf_pkt p = tpl[ti];

			p.tver = i;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		for (i = 0; i < 8; i++, n++) {
			static const uint16_t keys[] = {
				0x0000, 0x0001, 0x7ffe, 0x8000, 0xfffe,
				0x1234, 0xbfff, 0x7f7f,
			};
			struct wf_pkt p = tpl[ti];

			p.pkey = keys[i];
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* A pad count with no bytes to pad. */
		for (i = 1; i < 4; i++, n++) {
			struct wf_pkt p = tpl[ti];

			p.len = 0;
			p.pad = i;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		}
		/* IPv4 options. */
		f = t;
		wf_ip_options(&f);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
		n++;
	}
	/* Payload where the opcode has none. */
	for (i = 0; i < 4; i++, n++) {
		static const uint8_t ops[] = { READ_REQ, CMP_SWAP, FETCH_ADD,
					       ACK };
		struct wf_pkt p = wf_req(self, &self->rc, ops[i], 0);

		p.data = wf_payload;
		p.len = 4 << i;
		wf_build(&p, &f);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
	}
	/* Every opcode byte a target does not take, its headers as it asks. */
	for (ti = 0; ti < 4; ti++) {
		enum ibv_qp_type type = ti < 3 ? conns[ti]->type : IBV_QPT_UD;

		for (i = 0; i < 256; i++) {
			struct wf_pkt p;

			if (wf_takes(type, i))
				continue;
			p = ti < 3 ? wf_req(self, conns[ti], i & 0x1f, 64) :
				     wf_dgram(self, 64);
			p.opcode = i;
			p.qkey = WF_QKEY;
			p.sqpn = UD_PEER;
			p.len = op_attr(i) & A_PAY ? 64 : 0;
			wf_build(&p, &f);
			ASSERT_EQ(0, wf_inject(&self->net, &f, true));
			n++;
		}
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%u malformed packets dropped", n);

	/* UDP drops these itself: a wrong port, a UDP length past the end. */
	wf_mark(self, &m);
	f = t;
	put16(f.b + UDPO + 2, WF_PORT + 1);
	ASSERT_EQ(0, wf_inject(&self->net, &f, false));
	f = t;
	put16(f.b + UDPO + 4, f.len - UDPO + 1);
	ASSERT_EQ(0, wf_inject(&self->net, &f, false));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 0));

	/* Nothing answered, nothing completed, nothing moved. */
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, 0, XRC_PEER));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->uc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
	/* The PSNs the templates had are still the ones expected. */
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 61));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 64));
	wf_finish(_metadata, self);
}
/*
 * Well-formed packets for no QP of the link, or for one that must not
 * take them: unknown QPNs, another source address, a QP in RESET, INIT
 * or ERR, a Q_Key that is not the UD QP's, a transport that is not the
 * QP's.  Dropped and counted, no effect.
 */
TEST_F_TIMEOUT(wire, misdirected, 300)
{
	struct ibv_qp *err_qp = wf_qp(self, self->cq_idle, IBV_QPT_RC);
	struct wf_rq rq_err = { .off = OFF_RQ_NEW, .id0 = 0x60000 };
	struct wf_conn c_err = { 0 };
	struct wf_pkt tpl[5], p;
	struct wf_mark m;
	unsigned int ti, i, n = 0;

	/* A QP that was connected and went to the error state. */
	ASSERT_EQ(0, wf_conn_init(self, &c_err, err_qp, 0x000888, 0x777,
				  &rq_err));
	ASSERT_EQ(0, wf_post_len(self, &rq_err, 256));
	ASSERT_EQ(0, sxrc_qp_to(err_qp, IBV_QPS_ERR));
	ASSERT_TRUE(wf_recv_flushed(_metadata, self, &rq_err));

	wf_fill_payload(self, 64);
	tpl[0] = wf_req(self, &self->rc, SEND_ONLY, 64);
	tpl[1] = wf_req(self, &self->uc, SEND_ONLY, 64);
	tpl[2] = wf_req(self, &self->xrc, SEND_ONLY, 64);
	tpl[3] = wf_dgram(self, 64);
	tpl[4] = wf_req(self, &self->rc, WRITE_ONLY, 64);
	wf_mark(self, &m);
	for (ti = 0; ti < 5; ti++) {
		for (i = 0; i < 24; i++, n++) {
			p = tpl[ti];
			p.dqpn = wf_no_qpn(self);
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
		if (ti == 3)
			continue;
		for (i = 0; i < 6; i++, n++) {
			p = tpl[ti];
			p.saddr = WF_SPOOF + sxrc_rnd(&self->rng, 250);
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	/* RESET, INIT, ERR. */
	p = tpl[0];
	p.dqpn = self->idle->qp_num;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p.dqpn = err_qp->qp_num;
	p.psn = 0x777;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	n += 2;
	/* Q_Keys; datagrams to QPs that are not UD; to the multicast QPN. */
	for (i = 0; i < 8; i++, n++) {
		p = tpl[3];
		p.qkey = i < 4 ? WF_QKEY ^ (1U << (i * 9)) :
				 (uint32_t)sxrc_rnd64(&self->rng);
		if (p.qkey == WF_QKEY)
			p.qkey ^= 1;
		ASSERT_EQ(0, wf_send(&self->net, &p));
	}
	{
		uint32_t qpns[] = { self->rc.qpn, self->uc.qpn, self->xrc.qpn,
				    self->idle->qp_num, self->req.qpn,
				    0xffffff };

		for (i = 0; i < 6; i++, n++) {
			p = tpl[3];
			p.dqpn = qpns[i];
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	/* Transports the QP does not have. */
	{
		static const struct {
			int conn;
			uint8_t opcode;
		} mis[] = {
			{ 0, TP_UC | SEND_ONLY }, { 0, TP_XRC | SEND_ONLY },
			{ 0, TP_XRC | ACK }, { 1, TP_RC | SEND_ONLY },
			{ 1, TP_RC | ACK }, { 1, TP_XRC | SEND_ONLY },
			{ 2, TP_RC | SEND_ONLY }, { 2, TP_UC | SEND_ONLY },
			{ 2, TP_XRC | ACK }, { 2, TP_XRC | READ_RESP_ONLY },
			{ 3, TP_RC | SEND_ONLY }, { 3, TP_UC | SEND_ONLY },
			{ 3, TP_XRC | SEND_ONLY },
		};

		for (i = 0; i < sizeof(mis) / sizeof(mis[0]); i++, n++) {
			p = tpl[mis[i].conn];
			p.opcode = mis[i].opcode;
			p.len = op_attr(p.opcode) & A_PAY ? 64 : 0;
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%u misdirected packets dropped", n);
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, XRC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, 0x000888));
	EXPECT_EQ(IBV_QPS_RESET, wf_state(self->idle));
	EXPECT_EQ(IBV_QPS_ERR, wf_state(err_qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 64));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 64));
	wf_finish(_metadata, self);
}
/* ------------------------------------------------------------------
 * Random malformed packets
 */

/* Each of these alone is enough for a packet to be dropped unseen. */
enum wf_mut {
	M_TVER,		/* transport header version not 0 */
	M_PKEY,		/* not the default partition */
	M_OPCODE,	/* an opcode the target does not take */
	M_QPN,		/* a QP that does not exist */
	M_SPOOF,	/* another source address (connected QPs) */
	M_QKEY,		/* another Q_Key (UD) */
	M_EXTRA,	/* payload on an opcode without */
	M_PAD,		/* a pad count with nothing to pad */
	M_CUTHDR,	/* cut inside the headers, a right ICRC after */
	M_CUT,		/* cut short */
	M_BIT,		/* a bit the ICRC covers flipped */
	M_ICRC,		/* a bit of the ICRC flipped */
	M_IHL,		/* IPv4 options */
	M_NUM,
};
static const uint8_t wf_rc_reqs[] = {
	SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM, SEND_ONLY,
	SEND_ONLY_IMM, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, WRITE_LAST_IMM,
	WRITE_ONLY, WRITE_ONLY_IMM, READ_REQ, CMP_SWAP, FETCH_ADD,
	SEND_LAST_INV, SEND_ONLY_INV,
};
static const uint8_t wf_resps[] = {
	READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY,
	ACK, ATOMIC_ACK,
};
/* A byte that is no opcode @type takes (RC: no RC opcode at all). */
static uint8_t wf_bad_opcode(WF_SELF *self, enum ibv_qp_type type)
{
	uint8_t op;

	do
		op = sxrc_rnd(&self->rng, 256);
	while (wf_takes(type, op) ||
	       (type == IBV_QPT_RC && (op & 0xe0) == TP_RC &&
		(op_attr(op) & A_VALID)));
	return op;
}
/* Random bytes, to no QP of the device, the ICRC right or not. */
static void wf_junk(WF_SELF *self, struct wf_frame *f)
{
	struct wf_pkt p = { .opcode = TP_RC | ACK };
	uint32_t n = sxrc_rnd(&self->rng, 1200), i;

	wf_build(&p, f);
	for (i = 0; i < n; i++)
		f->b[BTHO + i] = sxrc_rnd64(&self->rng) >> 56;
	wf_set_len(f, BTHO + n);
	if (n >= 8)
		put32(f->b + BTHO + 4, wf_no_qpn(self) |
		      (uint32_t)f->b[BTHO + 4] << 24);
	if (n >= 16 && sxrc_rnd(&self->rng, 2))
		wf_fix_icrc(f);
}
/*
 * A random packet for a random target (RC, UC, UD, XRC QP, the
 * requester with WQEs in flight), as it could come, then made
 * malformed by one to three of enum wf_mut.
 */
static void wf_fuzz_one(WF_SELF *self, struct wf_frame *f, uint32_t S,
			uint32_t R)
{
	unsigned int muts = 0, i, k, target = sxrc_rnd(&self->rng, 5);
	struct wf_conn *conns[] = { &self->rc, &self->uc, NULL, &self->xrc };
	uint32_t len = sxrc_rnd(&self->rng, 1300);
	enum ibv_qp_type type;
	struct wf_pkt p;
	bool icrc = false;
	uint8_t op;

	if (!sxrc_rnd(&self->rng, 10)) {
		wf_junk(self, f);
		return;
	}
	switch (target) {
	case 0:
	case 1:
	case 3:
		op = wf_rc_reqs[sxrc_rnd(&self->rng, target == 1 ? 12 : 17)];
		p = wf_req(self, conns[target], op, len);
		type = conns[target]->type;
		break;
	case 2:
		p = wf_dgram(self, len);
		p.opcode |= sxrc_rnd(&self->rng, 2);	/* with immediate */
		p.sqpn = sxrc_rnd(&self->rng, 1U << 24);
		type = IBV_QPT_UD;
		break;
	default:
		op = wf_resps[sxrc_rnd(&self->rng, 6)];
		p = wf_resp(self, op, sxrc_rnd(&self->rng, 2) ? S : R,
			    sxrc_rnd64(&self->rng) >> 56, len);
		type = IBV_QPT_RC;
		break;
	}
	p.data = wf_payload + sxrc_rnd(&self->rng, 512);
	if (p.len > 1300)
		p.len = 1300;
	if (!sxrc_rnd(&self->rng, 4))
		p.psn = sxrc_rnd(&self->rng, 1U << 24);
	if (!sxrc_rnd(&self->rng, 4))
		p.rkey = sxrc_rnd64(&self->rng);
	p.se = sxrc_rnd(&self->rng, 2);

	for (i = 1 + sxrc_rnd(&self->rng, 3); i; i--)
		muts |= 1U << sxrc_rnd(&self->rng, M_NUM);
	if (type == IBV_QPT_UD && (muts & (1U << M_SPOOF)))
		muts = (muts & ~(1U << M_SPOOF)) | 1U << M_QPN;
	if (type != IBV_QPT_UD && (muts & (1U << M_QKEY)))
		muts = (muts & ~(1U << M_QKEY)) | 1U << M_TVER;
	for (k = 0; k < M_NUM; k++) {
		if (!(muts & (1U << k)))
			continue;
		switch (k) {
		case M_TVER:
			p.tver = 1 + sxrc_rnd(&self->rng, 15);
			break;
		case M_PKEY:
			do
				p.pkey = sxrc_rnd(&self->rng, 0x10000);
			while ((p.pkey & 0x7fff) == 0x7fff);
			break;
		case M_OPCODE:
			p.opcode = wf_bad_opcode(self, type);
			break;
		case M_QPN:
			p.dqpn = wf_no_qpn(self);
			break;
		case M_SPOOF:
			p.saddr = WF_SPOOF + sxrc_rnd(&self->rng, 250);
			break;
		case M_QKEY:
			p.qkey ^= 1 + sxrc_rnd(&self->rng, 0xffffffffU);
			break;
		case M_EXTRA:
			if (op_attr(p.opcode) & A_PAY) {
				p.tver = 1 + sxrc_rnd(&self->rng, 15);
				break;
			}
			p.len = 4 * (1 + sxrc_rnd(&self->rng, 16));
			break;
		case M_PAD:
			p.len = 0;
			p.pad = 1 + sxrc_rnd(&self->rng, 3);
			break;
		default:
			break;
		}
	}
	wf_build(&p, f);
	if (muts & (1U << M_CUTHDR)) {
		k = sxrc_rnd(&self->rng, f->hlen);
		wf_cut(f, k + 4);
		if (k >= 12)
			wf_fix_icrc(f);
		else
			icrc = true;
	}
	if (muts & (1U << M_CUT)) {
		wf_cut(f, sxrc_rnd(&self->rng, f->len - f->udpo - 8));
		icrc = true;
	}
	if ((muts & (1U << M_BIT)) && f->len >= BTHO + 16) {
		do
			k = BTHO + sxrc_rnd(&self->rng, f->len - 4 - BTHO);
		while (k == BTHO + 4);
		f->b[k] ^= 1 << sxrc_rnd(&self->rng, 8);
		icrc = true;
	}
	if ((muts & (1U << M_ICRC)) && f->len >= BTHO + 4) {
		f->b[f->len - 1 - sxrc_rnd(&self->rng, 4)] ^=
			1 << sxrc_rnd(&self->rng, 8);
		icrc = true;
	}
	if (icrc)
		wf_break_icrc(f);
	if (muts & (1U << M_IHL))
		wf_ip_options(f);
}
/*
 * SXRC_WIRE_FUZZ_N (default 50000) random malformed packets for the
 * QPs of the link and for none, with a SEND and a READ in flight: every
 * one dropped and counted, nothing answered but by the requester's own
 * retransmissions, nothing completed, nothing written; then the SEND and
 * the READ complete when their responses come.
 */
TEST_F_TIMEOUT(wire, random_malformed, 900)
{
	uint64_t n = wf_env("SXRC_WIRE_FUZZ_N", 50000), i;
	double t0;
	struct wf_frame f;
	struct wf_mark m;
	struct wf_cap *k;
	struct wf_pkt p;
	unsigned int from = self->net.ncap;
	uint32_t S, R;

	ASSERT_EQ(0, wf_post_send(self, IBV_WR_SEND, OFF_REQ_SEND, 64, 1, 0,
				  0, 0));
	ASSERT_EQ(0, wf_post_send(self, IBV_WR_RDMA_READ, OFF_REQ_READ,
				  WF_MTU, 2, 0x10000000, 0x1234, 0));
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | SEND_ONLY);
	ASSERT_NE(NULL, k);
	S = k->psn;
	k = wf_wait_cap(&self->net, from, REQ_PEER, TP_RC | READ_REQ);
	ASSERT_NE(NULL, k);
	R = k->psn;
	for (i = 0; i < sizeof(wf_payload); i++)
		wf_payload[i] = sxrc_rnd64(&self->rng) >> 56;

	t0 = sxrc_now_ms();
	wf_mark(self, &m);
	for (i = 0; i < n; i++) {
		wf_fuzz_one(self, &f, S, R);
		ASSERT_EQ(0, wf_inject(&self->net, &f, true));
	}
	EXPECT_TRUE(wf_expect(_metadata, self, &m, n));
	TH_LOG("%llu packets in %.1f s, %ld dropped",
	       (unsigned long long)n, (sxrc_now_ms() - t0) / 1000,
	       wf_dropped() - m.dropped);
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, RC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, UC_PEER));
	EXPECT_EQ(0, wf_caps_to(&self->net, m.cap, XRC_PEER));
	for (i = m.cap; i < self->net.ncap; i++) {
		struct wf_cap *c = &self->net.caps[i % WF_NCAPS];

		if (c->dqpn == REQ_PEER && c->opcode != (TP_RC | SEND_ONLY) &&
		    c->opcode != (TP_RC | READ_REQ))
			TH_LOG("the requester sent %#x", c->opcode);
		EXPECT_FALSE(c->dqpn == REQ_PEER &&
			     c->opcode != (TP_RC | SEND_ONLY) &&
			     c->opcode != (TP_RC | READ_REQ));
	}
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->uc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->xrc.qp));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->ud));
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->req.qp));
	EXPECT_TRUE(wf_cqs_quiet(_metadata, self));
	EXPECT_TRUE(wf_mem_ok(_metadata, self));

	wf_fill_payload(self, WF_MTU);
	p = wf_resp(self, ACK, S, SYN_ACK, 0);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_send_done(_metadata, self, 1, IBV_WC_SUCCESS,
				 IBV_WC_SEND, 64));
	p = wf_resp(self, READ_RESP_ONLY, R, SYN_ACK, WF_MTU);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	EXPECT_TRUE(wf_send_done(_metadata, self, 2, IBV_WC_SUCCESS,
				 IBV_WC_RDMA_READ, WF_MTU));
	EXPECT_EQ(0, memcmp(self->mem + OFF_REQ_READ, wf_payload, WF_MTU));
	memcpy(self->shadow + OFF_REQ_READ, wf_payload, WF_MTU);
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 100));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->uc, 100));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->xrc, 100));
	wf_finish(_metadata, self);
}
/* ------------------------------------------------------------------
 * A message half in
 */

/*
 * A packet from another address in the middle of a message is not the
 * connection's: it is dropped, and the message goes on and completes
 * whole (a SEND to the RC QP, a WRITE, a SEND to the XRC QP).
 */
TEST_F_TIMEOUT(wire, spoofed_mid_message, 300)
{
	struct wf_conn *conns[] = { &self->rc, &self->xrc };
	struct wf_mark m;
	struct wf_pkt p;
	unsigned int i;
	uint8_t *buf;

	for (i = 0; i < 2; i++) {
		struct wf_conn *c = conns[i];
		struct wf_rq *q = c->rq ? c->rq : &self->rq_a;

		wf_fill_payload(self, 4 * WF_MTU);
		buf = wf_rbuf(self, q, q->head);
		wf_mark(self, &m);
		p = wf_req(self, c, SEND_FIRST, WF_MTU);
		p.ackreq = false;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		p = wf_req(self, c, SEND_MIDDLE, WF_MTU);
		p.saddr = WF_SPOOF;
		p.data = wf_payload + 3 * WF_MTU;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		p = wf_req(self, c, SEND_MIDDLE, WF_MTU);
		p.ackreq = false;
		p.data = wf_payload + WF_MTU;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		p = wf_req(self, c, SEND_LAST, 100);
		p.saddr = WF_SPOOF;
		p.data = wf_payload + 3 * WF_MTU;
		ASSERT_EQ(0, wf_send(&self->net, &p));
		p = wf_req(self, c, SEND_LAST, 100);
		p.data = wf_payload + 2 * WF_MTU;
		ASSERT_EQ(0, wf_send_ok(self, c, &p, 1));
		EXPECT_TRUE(wf_expect(_metadata, self, &m, 2));
		ASSERT_TRUE(wf_recv_done(_metadata, self, q, IBV_WC_SUCCESS,
					 2 * WF_MTU + 100, NULL));
		EXPECT_EQ(0, memcmp(buf, wf_payload, 2 * WF_MTU + 100));
		memcpy(self->shadow + (buf - self->mem), buf, 2 * WF_MTU + 100);
		ASSERT_EQ(0, wf_post_len(self, q, RQ_SZ));
		EXPECT_EQ(IBV_QPS_RTS, wf_state(c->qp));
	}

	/* A WRITE of two packets, a spoofed last one between. */
	wf_fill_payload(self, 3 * WF_MTU);
	wf_mark(self, &m);
	p = wf_req(self, &self->rc, WRITE_FIRST, WF_MTU);
	p.dmalen = 2 * WF_MTU;
	p.ackreq = false;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	p = wf_req(self, &self->rc, WRITE_LAST, WF_MTU);
	p.saddr = WF_SPOOF + 1;
	p.data = wf_payload + 2 * WF_MTU;
	ASSERT_EQ(0, wf_send(&self->net, &p));
	p = wf_req(self, &self->rc, WRITE_LAST, WF_MTU);
	p.data = wf_payload + WF_MTU;
	ASSERT_EQ(0, wf_send_ok(self, &self->rc, &p, 1));
	EXPECT_TRUE(wf_expect(_metadata, self, &m, 1));
	EXPECT_EQ(0, memcmp(self->mem + OFF_RW, wf_payload, 2 * WF_MTU));
	memcpy(self->shadow + OFF_RW, wf_payload, 2 * WF_MTU);
	EXPECT_EQ(IBV_QPS_RTS, wf_state(self->rc.qp));
	wf_finish(_metadata, self);
}
/*
 * The IPv6 header of a packet the link sends carries the address
 * vector's traffic class and flow label (IBTA A17.4.5.2): a UD datagram
 * to an IPv6 address of the peer, read there with its flow information
 * (IPV6_FLOWINFO).
 */
TEST_F_TIMEOUT(wire, ipv6_flow_label, 120)
{
	struct sockaddr_in6 peer6 = {
		.sin6_family = AF_INET6, .sin6_port = htons(WF_PORT),
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .flow_label = 0x12345, .traffic_class = 0x28,
			 .hop_limit = 64 },
	};
	struct ibv_sge sge = {
		.addr = (uintptr_t)(self->mem + OFF_LOCAL), .length = 8,
		.lkey = self->mr_local->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 0x6f1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint8_t cbuf[CMSG_SPACE(sizeof(uint32_t))], b[256];
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd pfd = { .events = POLLIN };
	uint32_t flowinfo = 0;
	struct cmsghdr *cm;
	union ibv_gid gid;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int one = 1, fd, i, sgid = -1;
	bool got = false;

	ASSERT_EQ(0, sxrc_sh("ip addr replace fd77::1/64 dev " WF_IF
			     " nodad && ip -n " WF_NS " addr replace fd77::2/64"
			     " dev " WF_PEER_IF " nodad"));
	inet_pton(AF_INET6, "fd77::2", &peer6.sin6_addr);
	ASSERT_EQ(0, setns(self->net.peer_ns, CLONE_NEWNET));
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ASSERT_EQ(0, setns(self->net.orig_ns, CLONE_NEWNET));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWINFO, &one,
				sizeof(one)));
	/* RoCEv2 sends UDP checksum 0, which IPv6 sockets refuse by default. */
	ASSERT_EQ(0, setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one,
				sizeof(one)));
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&peer6, sizeof(peer6)));

	/* The link's GID of fd77::1 (the table follows the address). */
	for (i = 0; i < 100 && sgid < 0; i++) {
		int k;

		for (k = 0; k < 16 && sgid < 0; k++)
			if (!ibv_query_gid(self->ctx, 1, k, &gid) &&
			    gid.raw[0] == 0xfd && gid.raw[1] == 0x77 &&
			    gid.raw[15] == 1)
				sgid = k;
		if (sgid < 0)
			usleep(50000);
	}
	ASSERT_LE(0, sgid);
	aa.grh.sgid_index = sgid;
	memcpy(aa.grh.dgid.raw, &peer6.sin6_addr, 16);
	ah = ibv_create_ah(self->pd, &aa);
	ASSERT_NE(NULL, ah);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = 0x000123;
	wr.wr.ud.remote_qkey = WF_QKEY;
	ASSERT_EQ(0, ibv_post_send(self->ud, &wr, &bad));
	ASSERT_EQ(1, sxrc_poll_n(self->cq_ud, &wc, 1, 5000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0x6f1, wc.wr_id);

	pfd.fd = fd;
	ASSERT_EQ(1, poll(&pfd, 1, 10000));
	ASSERT_LT(0, recvmsg(fd, &mh, 0));
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    cm->cmsg_type == IPV6_FLOWINFO) {
			memcpy(&flowinfo, CMSG_DATA(cm), sizeof(flowinfo));
			got = true;
		}
	}
	ASSERT_TRUE(got);
	EXPECT_EQ(0x12345, ntohl(flowinfo) & 0xfffff);
	EXPECT_EQ(0x28, (ntohl(flowinfo) >> 20) & 0xff);
	EXPECT_EQ(TP_UD | SEND_ONLY, b[0]);
	ibv_destroy_ah(ah);
	close(fd);
	sxrc_sh("ip addr del fd77::1/64 dev " WF_IF " 2>/dev/null; true");
}

TEST_HARNESS_MAIN
