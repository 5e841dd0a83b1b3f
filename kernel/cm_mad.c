// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: QP1 of a link, the communication manager's MADs (IBA vol. 1,
 * chapter 12) as RoCEv2 hosts exchange them: UD SEND_ONLY packets from
 * and to QP 1, Q_Key 0x80010000, each one 256-byte MAD of class 0x07.
 *
 * Nothing on a softxrc host listens on the wire yet, so a link answers
 * what asks for an answer as a host with no listener does, at once
 * rather than after the asker's timeouts: a REQ gets a REJ "invalid
 * service ID" (the reason rdma_cm reports as no listener), a SIDR_REQ a
 * SIDR_REP "unsupported", a DREQ for a connection nobody here knows a
 * DREP.  Every other CM message names a connection this host does not
 * have and is dropped.  Each answer is one MAD for one MAD, sent back to
 * the address the request came from, so no packet amplifies traffic.
 *
 * Runs in the link's receive worker only (UD packets are not handled in
 * softirq): one MAD at a time per link, never waiting on anyone.
 */

#include "compat.h"
#include "sxrc.h"
#include "sxrc_loc.h"
#include "wire.h"

/* The MAD header (IBA 13.4.3), as the CM fills it. */
#define SXRC_MAD_BASE_VERSION	1
#define SXRC_MAD_CLASS_CM	0x07
#define SXRC_MAD_CM_VERSION	2
#define SXRC_MAD_METHOD_SEND	0x03
#define SXRC_MAD_HDR_LEN	24

/* Offsets in a MAD: the header's fields, then the CM message's. */
#define SXRC_MAD_TID		8
#define SXRC_MAD_ATTR_ID	16
#define SXRC_CM_MSG(off)	(SXRC_MAD_HDR_LEN + (off))

/* CM attribute IDs (IBA table 104). */
enum {
	SXRC_CM_REQ		= 0x10,
	SXRC_CM_MRA		= 0x11,
	SXRC_CM_REJ		= 0x12,
	SXRC_CM_REP		= 0x13,
	SXRC_CM_RTU		= 0x14,
	SXRC_CM_DREQ		= 0x15,
	SXRC_CM_DREP		= 0x16,
	SXRC_CM_SIDR_REQ	= 0x17,
	SXRC_CM_SIDR_REP	= 0x18,
};

/* REJ: the message it rejects (top two bits), and the reasons sent. */
#define SXRC_CM_REJ_MSG_REQ		0
#define SXRC_CM_REJ_INVALID_SERVICE_ID	8
/* SIDR_REP status: the service ID is not supported. */
#define SXRC_CM_SIDR_UNSUPPORTED	1

/**
 * struct sxrc_cm_port - QP1 of a link
 * @route: the route its answers took last (the receive worker's alone)
 * @sport: the UDP source port of its packets
 * @hdr: the BTH and DETH of every answer (QP1 to QP1), made once
 * @hlen: their length
 * @mad: the answer being built (the receive worker's alone)
 */
struct sxrc_cm_port {
	struct sxrc_wire_route route;
	u16 sport;
	u8 hdr[SXRC_BTH_LEN + SXRC_DETH_LEN];
	u32 hlen;
	u8 mad[SXRC_MAD_LEN];
};

/* Send @cm->mad back to the sender of @p. */
static void sxrc_cm_answer(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			   const struct sxrc_pkt *p)
{
	struct sxrc_ah_attr ah = {
		.is_global = 1,
		.hop_limit = 64,
		.port_num = 1,
	};
	int idx;

	rcu_read_lock();
	idx = sxrc_link_gid_index(dev, p->dgid);
	rcu_read_unlock();
	if (idx < 0) {
		sxrc_wire_count(dev, SXRC_WIRE_CM_DROPPED);
		return;
	}
	ah.sgid_index = idx;
	memcpy(ah.dgid, p->sgid, sizeof(ah.dgid));
	if (!sxrc_wire_xmit_route(dev, &ah, &cm->route, cm->sport, cm->hdr,
				  cm->hlen, cm->mad, SXRC_MAD_LEN))
		sxrc_wire_count(dev, SXRC_WIRE_CM_TX);
}

/* Start the answer to @req in @cm->mad: its header, as the CM sends it. */
static u8 *sxrc_cm_reply(struct sxrc_cm_port *cm, const u8 *req, u16 attr)
{
	u8 *m = cm->mad;

	memset(m, 0, SXRC_MAD_LEN);
	m[0] = SXRC_MAD_BASE_VERSION;
	m[1] = SXRC_MAD_CLASS_CM;
	m[2] = SXRC_MAD_CM_VERSION;
	m[3] = SXRC_MAD_METHOD_SEND;
	/* The transaction ID of the request: the asker matches on it. */
	memcpy(m + SXRC_MAD_TID, req + SXRC_MAD_TID, 8);
	put_unaligned_be16(attr, m + SXRC_MAD_ATTR_ID);
	return m;
}

/* A MAD the CM of a RoCEv2 host would take: its attribute ID, or 0. */
static u16 sxrc_cm_valid(const struct sxrc_pkt *p)
{
	const u8 *m = p->payload;

	if (p->opcode != (SXRC_TP_UD | SXRC_OP_SEND_ONLY) ||
	    p->qkey != SXRC_CM_QKEY || p->sqpn != SXRC_CM_QPN ||
	    p->paylen != SXRC_MAD_LEN)
		return 0;
	if (m[0] != SXRC_MAD_BASE_VERSION || m[1] != SXRC_MAD_CLASS_CM ||
	    m[2] != SXRC_MAD_CM_VERSION || m[3] != SXRC_MAD_METHOD_SEND)
		return 0;
	return get_unaligned_be16(m + SXRC_MAD_ATTR_ID);
}

/**
 * sxrc_cm_mad_rcv - a packet for QP1 of a link
 * @dev: the link
 * @p: the packet, parsed; its payload is the caller's
 *
 * Answers a REQ, SIDR_REQ or DREQ as a host with no listener and no such
 * connection does; drops and counts everything else.  The receive
 * worker's only.
 */
void sxrc_cm_mad_rcv(struct sxrc_dev *dev, const struct sxrc_pkt *p)
{
	struct sxrc_cm_port *cm = dev->wire_cm;
	const u8 *req = p->payload;
	u16 attr = cm ? sxrc_cm_valid(p) : 0;
	u8 *m;

	switch (attr) {
	case SXRC_CM_REQ:
		m = sxrc_cm_reply(cm, req, SXRC_CM_REJ);
		/* Remote comm ID: the REQ's local one; ours is none. */
		memcpy(m + SXRC_CM_MSG(4), req + SXRC_CM_MSG(0), 4);
		m[SXRC_CM_MSG(8)] = SXRC_CM_REJ_MSG_REQ << 6;
		put_unaligned_be16(SXRC_CM_REJ_INVALID_SERVICE_ID,
				   m + SXRC_CM_MSG(10));
		break;
	case SXRC_CM_SIDR_REQ:
		m = sxrc_cm_reply(cm, req, SXRC_CM_SIDR_REP);
		/* The request ID and the service ID come back. */
		memcpy(m + SXRC_CM_MSG(0), req + SXRC_CM_MSG(0), 4);
		m[SXRC_CM_MSG(4)] = SXRC_CM_SIDR_UNSUPPORTED;
		memcpy(m + SXRC_CM_MSG(12), req + SXRC_CM_MSG(8), 8);
		break;
	case SXRC_CM_DREQ:
		m = sxrc_cm_reply(cm, req, SXRC_CM_DREP);
		/* The DREQ's comm IDs, each in the other's place. */
		memcpy(m + SXRC_CM_MSG(0), req + SXRC_CM_MSG(4), 4);
		memcpy(m + SXRC_CM_MSG(4), req + SXRC_CM_MSG(0), 4);
		break;
	default:
		/*
		 * Malformed, not the CM's, or a message about a connection
		 * this host does not have (MRA, REJ, REP, RTU, DREP,
		 * SIDR_REP, LAP, APR): nothing to answer.
		 */
		sxrc_wire_count(dev, SXRC_WIRE_CM_DROPPED);
		sxrc_wire_drop(dev);
		return;
	}
	sxrc_wire_count(dev, SXRC_WIRE_CM_RX);
	sxrc_cm_answer(dev, cm, p);
}

/* A link's QP1 comes with its wire (sxrc_wire_start()): 0 or -ENOMEM. */
int sxrc_cm_start(struct sxrc_dev *dev)
{
	const struct sxrc_pkt out = {
		.opcode = SXRC_TP_UD | SXRC_OP_SEND_ONLY,
		.dqpn = SXRC_CM_QPN,
		.sqpn = SXRC_CM_QPN,
		.qkey = SXRC_CM_QKEY,
	};
	struct sxrc_cm_port *cm;

	cm = kzalloc(sizeof(*cm), GFP_KERNEL);
	if (!cm)
		return -ENOMEM;
	if (sxrc_wire_route_init(&cm->route)) {
		kfree(cm);
		return -ENOMEM;
	}
	cm->sport = sxrc_wire_sport(SXRC_CM_QPN);
	cm->hlen = sxrc_wire_build(cm->hdr, &out);
	dev->wire_cm = cm;
	return 0;
}

/* ... and goes with it, after its receive worker stopped. */
void sxrc_cm_stop(struct sxrc_dev *dev)
{
	struct sxrc_cm_port *cm = dev->wire_cm;

	if (!cm)
		return;
	dev->wire_cm = NULL;
	sxrc_wire_route_destroy(&cm->route);
	kfree(cm);
}
