// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the wire fuzzer at QP1, the communication manager
 * (kernel/cm_mad.c, cm.c).  The link, its peer host and its QPs:
 * sxrc_wire_fx.h, as for sxrc_wire_fuzz_test and sxrc_wire_refuse_test
 * (whose cm_mads and cm_listen_fuzz check each answer and each kind of
 * drop one by one).
 *
 * - random MADs (mutations of every CM message: malformed, cut short,
 *   too long, unknown attributes, wrong class, version and method,
 *   bogus comm IDs, QPNs and service IDs, random private data) at a
 *   link that listens and holds a connection each way with the peer:
 *   each one taken or dropped and counted, none answered more than
 *   once, no live connection changed; SXRC_MAD_FUZZ_COUNT of them
 *   (default 5000), SXRC_MAD_FUZZ_SEED replays the fuzzer's choices.
 */
#include <sys/random.h>

#include "sxrc_wire_fx.h"

FIXTURE_SETUP(wire)
{
	wf_setup(_metadata, self);
}

FIXTURE_TEARDOWN(wire)
{
	wf_teardown(self);
}

/* What the MAD fuzzer knows: the live connections, comm IDs it met. */
struct wf_mz {
	struct sxrc_rng rng;
	struct wf_cm_conn *live[2];
	uint64_t sid;		/* the link listens on it */
	uint32_t pool[40];	/* the peer's own (8), then the link's heard */
	unsigned int npool, next;
	uint8_t mad[1024];	/* what is sent: 256 bytes, or fewer, or more */
};
/* A comm ID: 0, any, a live connection's (either side), one met. */
static uint32_t wf_mz_cid(struct wf_mz *z)
{
	struct wf_cm_conn *c = z->live[sxrc_rnd(&z->rng, 2)];

	switch (sxrc_rnd(&z->rng, 6)) {
	case 0:
		return 0;
	case 1:
		return sxrc_rnd64(&z->rng);
	case 2:
		return sxrc_rnd(&z->rng, 2) ? c->ours : c->theirs;
	default:
		return z->pool[sxrc_rnd(&z->rng, z->npool)];
	}
}
static void wf_mz_learn(struct wf_mz *z, uint32_t cid)
{
	unsigned int i, n = ARRAY_SIZE(z->pool);

	for (i = 0; i < z->npool; i++)
		if (!cid || z->pool[i] == cid)
			return;
	if (z->npool < n)
		z->pool[z->npool++] = cid;
	else
		z->pool[8 + z->next++ % (n - 8)] = cid;
}
/*
 * The one valid message that would change a live connection: its DREQ,
 * named whole (both comm IDs and the link's QPN), from the peer.
 */
static bool wf_mz_ends(const struct wf_mz *z, const struct wf_pkt *p)
{
	const uint8_t *m = z->mad;
	unsigned int i;

	if (p->opcode != (TP_UD | SEND_ONLY) || p->qkey != CM_QKEY ||
	    p->sqpn != 1 || p->len != 256 || p->saddr ||
	    get32(m) != 0x01070203 || get32(m + 16) >> 16 != 0x15)
		return false;
	for (i = 0; i < 2; i++)
		if (get32(m + 24) == z->live[i]->theirs &&
		    get32(m + 28) == z->live[i]->ours &&
		    get32(m + 32) >> 8 == z->live[i]->qpn)
			return true;
	return false;
}
/*
 * One random MAD for QP1: a message of the CM (REQ to SIDR_REP) about a
 * live connection, with one of its comm IDs wrong, or with comm IDs met
 * or made up; its fields and private data random; then, one time in
 * two, one to three of: a header byte, the method, an attribute ID of
 * no message, cut short, too long, another Q_Key, source QP, opcode or
 * source address, a byte of the message.  Never the DREQ that ends a
 * live connection.
 */
static void wf_mz_one(struct wf_mz *z, struct wf_pkt *p, uint64_t tid)
{
	static const uint16_t attrs[] = { 0x0001, 0x000f, 0x0019, 0x001a,
					  0x001b, 0x0110, 0x1010, 0xffff };
	static const uint8_t methods[] = { 0x01, 0x02, 0x05, 0x06, 0x07,
					   0x81, 0x83, 0x86 };
	struct sxrc_rng *r = &z->rng;
	struct wf_cm_conn *c = z->live[sxrc_rnd(r, 2)];
	uint16_t attr = 0x10 + sxrc_rnd(r, 9);
	uint8_t *m = z->mad, *msg = m + 24;
	uint32_t a, b, i, k;

	switch (sxrc_rnd(r, 4)) {
	case 0:
		a = c->theirs, b = c->ours;
		break;
	case 1:
		a = wf_mz_cid(z), b = c->ours;
		break;
	case 2:
		a = c->theirs, b = wf_mz_cid(z);
		break;
	default:
		a = wf_mz_cid(z), b = wf_mz_cid(z);
		break;
	}
	if (attr == 0x10 || attr == 0x17) {
		*p = wf_cm_req(m, a, sxrc_rnd(r, 4) ? z->sid : sxrc_rnd64(r));
		put16(m + 16, attr);
	} else {
		*p = wf_mad(m, attr, a, b);
	}
	for (i = 256; i < sizeof(z->mad); i++)
		m[i] = sxrc_rnd(r, 256);
	switch (attr) {
	case 0x10:	/* REQ: QPN, timeouts, transport, MTU, P_Key */
		put32(msg + 32, sxrc_rnd64(r));
		msg[47] = sxrc_rnd(r, 256);
		if (!sxrc_rnd(r, 4))
			msg[43] = sxrc_rnd(r, 256);
		if (!sxrc_rnd(r, 4))
			msg[50] = sxrc_rnd(r, 256);
		if (!sxrc_rnd(r, 4))
			msg[51] = sxrc_rnd(r, 256);
		if (!sxrc_rnd(r, 8))
			put16(msg + 48, sxrc_rnd(r, 0x10000));
		break;
	case 0x11:	/* MRA: the message it names, the wait it asks */
	case 0x12:	/* REJ: the message it rejects, its reason */
		msg[8] = sxrc_rnd(r, 4) << 6;
		msg[9] = sxrc_rnd(r, 256);
		put16(msg + 10, sxrc_rnd(r, 40));
		if (attr == 0x12 && !sxrc_rnd(r, 4))
			put32(msg + 4, 0);	/* only the sender's, as REJ 1 */
		break;
	case 0x13:	/* REP: its QPN (0 now and then), PSN */
		put32(msg + 12, sxrc_rnd(r, 4) ? sxrc_rnd64(r) : 0);
		put32(msg + 20, sxrc_rnd64(r));
		break;
	case 0x15:	/* DREQ: the live connection's QPN, or another */
		put32(msg + 8, (sxrc_rnd(r, 2) ? c->qpn :
				sxrc_rnd(r, 1U << 24)) << 8);
		break;
	case 0x18:	/* SIDR_REP: status, QPN, the service ID */
		msg[4] = sxrc_rnd(r, 4);
		put32(msg + 8, sxrc_rnd64(r));
		put64(msg + 12, sxrc_rnd(r, 2) ? z->sid : sxrc_rnd64(r));
		break;
	}
	/* Private data, or random bytes anywhere past the comm IDs. */
	if (sxrc_rnd(r, 2)) {
		k = 8 + sxrc_rnd(r, 224);
		for (i = k + sxrc_rnd(r, 233 - k); i-- > k;)
			msg[i] = sxrc_rnd(r, 256);
	}
	for (k = sxrc_rnd(r, 2) ? 0 : 1 + sxrc_rnd(r, 3); k; k--) {
		switch (sxrc_rnd(r, 10)) {
		case 0:		/* base version, class, class version, method */
			m[sxrc_rnd(r, 4)] ^= 1 << sxrc_rnd(r, 8);
			break;
		case 1:
			m[3] = methods[sxrc_rnd(r, ARRAY_SIZE(methods))];
			break;
		case 2:
			put16(m + 16, sxrc_rnd(r, 2) ? sxrc_rnd(r, 0x10000) :
			      attrs[sxrc_rnd(r, ARRAY_SIZE(attrs))]);
			break;
		case 3:
			p->len = sxrc_rnd(r, 256);
			break;
		case 4:
			p->len = 257 + sxrc_rnd(r, sizeof(z->mad) - 256);
			break;
		case 5:
			p->qkey ^= 1U << sxrc_rnd(r, 32);
			break;
		case 6:
			p->sqpn = 2 + sxrc_rnd(r, (1U << 24) - 2);
			break;
		case 7:
			p->opcode = sxrc_rnd(r, 2) ? TP_UD | SEND_ONLY_IMM :
						     TP_RC | SEND_ONLY;
			break;
		case 8:
			p->saddr = WF_SPOOF + sxrc_rnd(r, 250);
			break;
		default:
			msg[sxrc_rnd(r, 232)] = sxrc_rnd(r, 256);
			break;
		}
	}
	put64(m + 8, tid);
	if (wf_mz_ends(z, p))
		msg[10] ^= 1 + sxrc_rnd(r, 255);	/* another QPN */
}
/* Answers the link sent QP1 since capture @from: counted, comm IDs learnt. */
static unsigned int wf_mz_heard(struct wf_mz *z, WF_SELF *self,
				unsigned int from)
{
	unsigned int k = 0;

	for (; from < self->net.ncap; from++) {
		const struct wf_cap *c = &self->net.caps[from % WF_NCAPS];

		if (c->dqpn != 1)
			continue;
		k++;
		if (c->paylen == 8 + 256)
			wf_mz_learn(z, get32(c->data + 8 + 24));
	}
	return k;
}
/*
 * The events the MADs made: new ids for the listener (REQ, SIDR_REQ,
 * their handles kept in @made) and their REJ; none about @live (on
 * @lch) or on @ach.
 */
static bool wf_mz_events(struct __test_metadata *_metadata, int lch,
			 int ach, uint32_t live, uint32_t *made,
			 unsigned int *nmade)
{
	struct sxrc_cm_event ev;
	bool ok = true;

	while (!wf_cm_event(ach, &ev, 0)) {
		TH_LOG("event %u on the active connection", ev.event);
		ok = false;
	}
	while (!wf_cm_event(lch, &ev, 0)) {
		if (ev.handle == live || (ev.event != SXRC_CM_EVENT_REQ &&
					  ev.event != SXRC_CM_EVENT_SIDR_REQ &&
					  ev.event != SXRC_CM_EVENT_REJ)) {
			TH_LOG("event %u for id %u (the live one is %u)",
			       ev.event, ev.handle, live);
			ok = false;
		} else if (ev.event != SXRC_CM_EVENT_REJ && *nmade < 1024) {
			made[(*nmade)++] = ev.handle;
		}
	}
	return ok;
}
/*
 * SXRC_MAD_FUZZ_COUNT (default 5000) random MADs for QP1 (wf_mz_one()),
 * the link listening, two connections established with the peer, one
 * each way: each MAD is taken or dropped and counted, answered at most
 * once, and nothing but the ids the MADs made hears of them; then each
 * connection ends as its DREQ asks, a new one is made, data still moves.
 * SXRC_MAD_FUZZ_SEED replays the fuzzer's choices (the link draws its
 * own comm IDs each run); unset, each run draws a seed.
 */
TEST_F_TIMEOUT(wire, random_mads, 600)
{
	const uint64_t sid = 0x0000000001060bcdULL;
	uint64_t n = wf_env("SXRC_MAD_FUZZ_COUNT", 5000), i;
	struct sxrc_cm_listen_in lin = { .service_id = sid, .backlog = 16 };
	struct sxrc_cm_send_in dreq = { .msg = SXRC_CM_MSG_DREQ };
	static const char *const names[] = {
		"wire_cm_rx", "wire_cm_tx", "wire_cm_dropped",
		"wire_cm_unlistened",
	};
	static struct wf_mz z;
	static uint32_t made[1024];
	struct wf_cm_conn pas = {}, act = {};
	unsigned int nmade = 0, heard = 0, from, k;
	struct sxrc_cm_event ev;
	long c0[4], d[4];
	struct wf_mark mk;
	const uint8_t *m;
	struct wf_pkt p;
	int lch, ach;
	double t0;

	z.rng.s = wf_env("SXRC_MAD_FUZZ_SEED", 0);
	if (!z.rng.s)
		ASSERT_EQ(sizeof(z.rng.s),
			  getrandom(&z.rng.s, sizeof(z.rng.s), 0));
	z.rng.s |= 1;
	TH_LOG("%llu MADs, SXRC_MAD_FUZZ_SEED=%#llx", (unsigned long long)n,
	       (unsigned long long)z.rng.s);
	lch = wf_cm_chan(self);
	ach = wf_cm_chan(self);
	ASSERT_LE(0, lch);
	ASSERT_LE(0, ach);
	lin.handle = wf_cm_id(self, lch);
	ASSERT_NE(0, lin.handle);
	ASSERT_EQ(0, wf_cm_call(self, SXRC_CM_LISTEN, &lin, sizeof(lin), NULL,
				0));
	ASSERT_EQ(0, wf_cm_accept(self, lch, sid, 0x0a110001, &pas));
	ASSERT_EQ(0, wf_cm_connect(self, ach, sid + 1, 0x0a110002, &act));
	z.live[0] = &pas;
	z.live[1] = &act;
	z.sid = sid;
	for (k = 0; k < 8; k++)		/* the peer's comm IDs */
		z.pool[z.npool++] = k < 2 ? z.live[k]->theirs :
					    0x0a110000 + sxrc_rnd(&z.rng, 64);

	wf_mark(self, &mk);
	for (k = 0; k < 4; k++)
		c0[k] = wf_counter(names[k]);
	t0 = sxrc_now_ms();
	for (i = 0; i < n;) {
		from = self->net.ncap;
		for (k = 0; k < 100 && i < n; k++, i++) {
			wf_mz_one(&z, &p, 0x6d7a000000000000ULL | i);
			ASSERT_EQ(0, wf_send(&self->net, &p));
		}
		/* Everything handled; what it made, and no more. */
		ASSERT_EQ(0, wf_sync(self));
		heard += wf_mz_heard(&z, self, from);
		ASSERT_TRUE(wf_mz_events(_metadata, lch, ach, pas.handle, made,
					 &nmade));
	}
	for (k = 0; k < 4; k++)
		d[k] = wf_counter(names[k]) - c0[k];
	TH_LOG("%llu MADs in %.1f s: %ld taken, %ld dropped, %ld unlistened; %ld sent, %u heard; %u ids made",
	       (unsigned long long)n, (sxrc_now_ms() - t0) / 1000, d[0], d[2],
	       d[3], d[1], heard, nmade);
	/* Each MAD counted once, the link's only drops QP1's. */
	EXPECT_EQ((long)n, d[0] + d[2]);
	EXPECT_TRUE(wf_expect(_metadata, self, &mk, d[2]));
	/* Never more than one answer to a MAD, and only to one taken. */
	EXPECT_LE(d[1], d[0]);
	EXPECT_LE((long)heard, d[1]);
	if (n >= 1000) {	/* enough for each outcome to come */
		EXPECT_LT(0, d[0]);
		EXPECT_LT((long)n / 4, d[2]);
		EXPECT_LT(0, d[3]);
	}

	/* The ids the MADs made go, and their backlog with them. */
	for (k = 0; k < nmade; k++)
		EXPECT_EQ(0, wf_cm_destroy(self, made[k]));
	/* The link's DREQ still names the active connection whole. */
	from = self->net.ncap;
	dreq.handle = act.handle;
	ASSERT_EQ(0, wf_cm_call(self, SXRC_CM_SEND, &dreq, sizeof(dreq), NULL,
				0));
	m = wf_cm_wait(self, from, 0x15);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(act.ours, get32(m + 24));
	EXPECT_EQ(act.theirs, get32(m + 28));
	EXPECT_EQ(WF_CM_PEER_QPN, get32(m + 32) >> 8);
	p = wf_mad(z.mad, 0x16, act.theirs, act.ours);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	ASSERT_EQ(0, wf_cm_event(ach, &ev, 5000));
	EXPECT_EQ(SXRC_CM_EVENT_DREP, ev.event);
	EXPECT_EQ(act.handle, ev.handle);
	/* The peer's ends the passive one: the DREP, the id's event. */
	from = self->net.ncap;
	p = wf_mad(z.mad, 0x15, pas.theirs, pas.ours);
	put32(z.mad + 24 + 8, pas.qpn << 8);
	ASSERT_EQ(0, wf_send(&self->net, &p));
	m = wf_cm_wait(self, from, 0x16);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(pas.ours, get32(m + 24));
	EXPECT_EQ(pas.theirs, get32(m + 28));
	ASSERT_EQ(0, wf_cm_event(lch, &ev, 5000));
	EXPECT_EQ(SXRC_CM_EVENT_DREQ, ev.event);
	EXPECT_EQ(pas.handle, ev.handle);
	/* A new connection is made as the first was; data moves. */
	EXPECT_EQ(0, wf_cm_accept(self, lch, sid, 0x0a220003, &pas));
	EXPECT_TRUE(wf_deliver(_metadata, self, &self->rc, 100));
	close(lch);
	close(ach);
	wf_finish(_metadata, self);
}

TEST_HARNESS_MAIN
