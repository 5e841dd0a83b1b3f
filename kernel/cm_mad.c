// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: QP1 of a link, the communication manager's MADs (IBA vol. 1,
 * chapter 12) as RoCEv2 hosts exchange them: UD SEND_ONLY packets from
 * and to QP 1, Q_Key 0x80010000, each one 256-byte MAD of class 0x07.
 *
 * This file is the codec: what a MAD of the CM must look like to be
 * taken at all, the REQ and REP laid out and read back (IBA tables 106
 * and 110: fields big-endian, bit fields from the most significant bit
 * of their byte), and the sending of a MAD.  What a message does is
 * cm.c's.
 *
 * Packets arrive in the link's receive worker only (UD packets are not
 * handled in softirq): one MAD at a time per link.
 */

#include "compat.h"
#include "cm.h"
#include "sxrc_loc.h"

/* Start @m as the CM sends a MAD: its header, the rest zero. */
u8 *sxrc_cm_mad_start(u8 *m, u16 attr, u64 tid)
{
	memset(m, 0, SXRC_MAD_LEN);
	m[0] = SXRC_MAD_BASE_VERSION;
	m[1] = SXRC_MAD_CLASS_CM;
	m[2] = SXRC_MAD_CM_VERSION;
	m[3] = SXRC_MAD_METHOD_SEND;
	put_unaligned_be64(tid, m + SXRC_MAD_TID);
	put_unaligned_be16(attr, m + SXRC_MAD_ATTR_ID);
	return m;
}

/* A MAD the CM of a RoCEv2 host would take: its attribute ID, or 0. */
u16 sxrc_cm_valid(const struct sxrc_pkt *p)
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
 * sxrc_cm_xmit - send a MAD from QP1
 * @dev: the link
 * @cm: its CM, whose mutex the caller holds
 * @sgid_index: the link's GID it goes from
 * @dgid: where it goes
 * @mad: the MAD (SXRC_MAD_LEN bytes)
 *
 * Return: 0 (counted in wire_cm_tx), or the error of the route or the
 * IP layer; -ENETDOWN once the link's wire is gone.
 */
int sxrc_cm_xmit(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
		 int sgid_index, const u8 *dgid, u8 *mad)
{
	struct sxrc_ah_attr ah = {
		.is_global = 1,
		.hop_limit = 64,
		.port_num = 1,
		.sgid_index = sgid_index,
	};
	int ret;

	lockdep_assert_held(&cm->mutex);
	if (cm->stopped)
		return -ENETDOWN;
	memcpy(ah.dgid, dgid, sizeof(ah.dgid));
	ret = sxrc_wire_xmit_route(dev, &ah, &cm->route, cm->sport, cm->hdr,
				   cm->hlen, mad, SXRC_MAD_LEN);
	if (!ret)
		sxrc_wire_count(dev, SXRC_WIRE_CM_TX);
	return ret;
}

/* The bits of byte @b from bit @bit (0: the most significant), @n wide. */
static u8 sxrc_cm_bits(u8 b, unsigned int bit, unsigned int n)
{
	return (b >> (8 - bit - n)) & ((1U << n) - 1);
}

/**
 * sxrc_cm_build_req - lay out a REQ in @m (its header already there)
 * @id: the active id (comm ID, QPN, GIDs, transport set)
 * @m: the MAD
 * @c: the application's parameters, checked
 * @guid: the link's node GUID
 */
void sxrc_cm_build_req(struct sxrc_cm_id *id, u8 *m,
		       const struct sxrc_cm_conn *c, __be64 guid)
{
	u8 *r = m + SXRC_MAD_HDR_LEN;
	u8 tt = id->transport == SXRC_CM_TRANSPORT_XRC ? 3 : id->transport;

	put_unaligned_be32(id->local_id, r + 0);
	put_unaligned_be64(c->service_id, r + 8);
	memcpy(r + 16, &guid, 8);
	sxrc_cm_put24(id->local_qpn, r + 32);
	r[35] = c->responder_resources;
	r[39] = c->initiator_depth;
	r[43] = c->cm_response_timeout << 3 | tt << 1 | (c->flow_control & 1);
	sxrc_cm_put24(c->psn, r + 44);
	r[47] = c->cm_response_timeout << 3 | c->retry_count;
	put_unaligned_be16(0xffff, r + 48);
	r[50] = c->path_mtu << 4 | c->rnr_retry_count;
	r[51] = c->max_cm_retries << 4 | !!c->srq << 3 |
		(id->transport == SXRC_CM_TRANSPORT_XRC ? 1 : 0);
	/* Primary path: "local" is the sender. */
	memcpy(r + 56, id->local_gid, 16);
	memcpy(r + 72, id->gid, 16);
	put_unaligned_be32(c->flow_label << 12, r + 88);
	r[92] = c->traffic_class;
	r[93] = c->hop_limit;
	r[95] = c->local_ack_timeout << 3;
}

/*
 * Can a REQ be taken at all: a comm ID, a transport this host has
 * (RC, UC, XRC), a path MTU of IBA's and the one partition RoCE has.
 */
bool sxrc_cm_req_ok(const u8 *m)
{
	const u8 *r = m + SXRC_MAD_HDR_LEN;
	u8 tt = sxrc_cm_bits(r[43], 5, 2), ext = sxrc_cm_bits(r[51], 5, 3);
	u8 mtu = sxrc_cm_bits(r[50], 0, 4);

	if (!get_unaligned_be32(r) || mtu < 1 || mtu > 5)
		return false;
	if ((get_unaligned_be16(r + 48) & 0x7fff) != 0x7fff)
		return false;
	if (tt == 3)
		return ext == 1;
	return tt <= 1 && !ext;
}

/* What a REQ (accepted by sxrc_cm_req_ok()) says, for its event. */
void sxrc_cm_parse_req(const u8 *m, struct sxrc_cm_conn *c)
{
	const u8 *r = m + SXRC_MAD_HDR_LEN;
	u8 tt = sxrc_cm_bits(r[43], 5, 2);

	c->service_id = get_unaligned_be64(r + 8);
	c->qpn = sxrc_cm_get24(r + 32);
	c->responder_resources = r[35];
	c->initiator_depth = r[39];
	c->transport = tt == 3 ? SXRC_CM_TRANSPORT_XRC : tt;
	c->flow_control = sxrc_cm_bits(r[43], 7, 1);
	c->psn = sxrc_cm_get24(r + 44);
	c->cm_response_timeout = sxrc_cm_bits(r[47], 0, 5);
	c->retry_count = sxrc_cm_bits(r[47], 5, 3);
	c->path_mtu = sxrc_cm_bits(r[50], 0, 4);
	c->rnr_retry_count = sxrc_cm_bits(r[50], 5, 3);
	c->max_cm_retries = sxrc_cm_bits(r[51], 0, 4);
	c->srq = sxrc_cm_bits(r[51], 4, 1);
	c->flow_label = get_unaligned_be32(r + 88) >> 12;
	c->traffic_class = r[92];
	c->hop_limit = r[93];
	c->local_ack_timeout = sxrc_cm_bits(r[95], 0, 5);
}

/**
 * sxrc_cm_build_rep - lay out a REP in @m (its header already there)
 * @id: the passive id (comm IDs, QPN, transport set)
 * @m: the MAD
 * @c: the application's parameters, checked
 * @guid: the link's node GUID
 *
 * An XRC REP names its target QP in the EE context field, as Linux's.
 */
void sxrc_cm_build_rep(struct sxrc_cm_id *id, u8 *m,
		       const struct sxrc_cm_conn *c, __be64 guid)
{
	u8 *r = m + SXRC_MAD_HDR_LEN;
	bool xrc = id->transport == SXRC_CM_TRANSPORT_XRC;

	put_unaligned_be32(id->local_id, r + 0);
	put_unaligned_be32(id->remote_id, r + 4);
	sxrc_cm_put24(xrc ? 0 : id->local_qpn, r + 12);
	sxrc_cm_put24(xrc ? id->local_qpn : 0, r + 16);
	sxrc_cm_put24(c->psn, r + 20);
	r[24] = c->responder_resources;
	r[25] = xrc ? 0 : c->initiator_depth;
	r[26] = xrc ? 0 : !!c->flow_control;
	r[27] = c->rnr_retry_count << 5 | (xrc || c->srq) << 4;
	memcpy(r + 28, &guid, 8);
}

/* What a REP says, for its event; @transport: the REQ's. */
void sxrc_cm_parse_rep(const u8 *m, u8 transport, struct sxrc_cm_conn *c)
{
	const u8 *r = m + SXRC_MAD_HDR_LEN;

	c->transport = transport;
	c->qpn = sxrc_cm_get24(r + (transport == SXRC_CM_TRANSPORT_XRC ?
				    16 : 12));
	c->psn = sxrc_cm_get24(r + 20);
	c->responder_resources = r[24];
	c->initiator_depth = r[25];
	c->flow_control = sxrc_cm_bits(r[26], 7, 1);
	c->rnr_retry_count = sxrc_cm_bits(r[27], 0, 3);
	c->srq = sxrc_cm_bits(r[27], 3, 1);
}

/**
 * sxrc_cm_mad_rcv - a packet for QP1 of a link
 * @dev: the link
 * @p: the packet, parsed; its payload is the caller's
 *
 * Hands a MAD of the CM to the state machine (cm.c); drops and counts
 * everything else.  The receive worker's only.
 */
void sxrc_cm_mad_rcv(struct sxrc_dev *dev, const struct sxrc_pkt *p)
{
	struct sxrc_cm_port *cm = dev->wire_cm;
	u16 attr = cm ? sxrc_cm_valid(p) : 0;

	if (attr && sxrc_cm_recv(dev, cm, p, attr)) {
		sxrc_wire_count(dev, SXRC_WIRE_CM_RX);
		return;
	}
	/*
	 * Malformed, not the CM's, or about a connection this host does
	 * not have, in a state that does not take it: nothing changed.
	 */
	sxrc_wire_count(dev, SXRC_WIRE_CM_DROPPED);
	sxrc_wire_drop(dev);
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
	sxrc_cm_port_init(cm);
	cm->sport = sxrc_wire_sport(SXRC_CM_QPN);
	cm->hlen = sxrc_wire_build(cm->hdr, &out);
	dev->wire_cm = cm;
	return 0;
}

/*
 * ... and stops sending with it, after its receive worker stopped.  Its
 * ids stay (their contexts destroy them), with the CM itself, until the
 * device is freed (sxrc_cm_free()).
 */
void sxrc_cm_stop(struct sxrc_dev *dev)
{
	struct sxrc_cm_port *cm = dev->wire_cm;

	if (!cm)
		return;
	mutex_lock(&cm->mutex);
	if (!cm->stopped) {
		cm->stopped = true;
		sxrc_wire_route_destroy(&cm->route);
	}
	mutex_unlock(&cm->mutex);
}

/* The device goes: no context, hence no id, is left. */
void sxrc_cm_free(struct sxrc_dev *dev)
{
	struct sxrc_cm_port *cm = dev->wire_cm;
	struct sxrc_cm_tw *tw, *tmp;

	if (!cm)
		return;
	dev->wire_cm = NULL;
	if (!cm->stopped)
		sxrc_wire_route_destroy(&cm->route);
	list_for_each_entry_safe(tw, tmp, &cm->timewait, entry)
		kfree(tw);
	WARN_ON_ONCE(!hash_empty(cm->listeners) || !hash_empty(cm->remote));
	xa_destroy(&cm->ids);
	mutex_destroy(&cm->mutex);
	kfree(cm);
}
