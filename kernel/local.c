// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the local delivery path: a message for a QP of this host.
 * The destination is found by device and number, the responder runs
 * right here in the requester's context, and the bytes are copied
 * between the two processes' pages.  What a wire would decide (lost,
 * out of sequence, RNR, NAK) is decided here too, so the send queue
 * loop sees the same outcomes.
 */
#include "engine.h"

/* The device an address vector of @from leads to, on this host; RCU. */
static struct sxrc_dev *sxrc_ah_dev(struct sxrc_dev *from,
				    const struct sxrc_ah_attr *ah)
{
	if (ah->is_global)
		return sxrc_dev_by_gid(ah->dgid, sxrc_dev_net(from));
	return sxrc_dev_by_lid(ah->dlid);
}

/* The QP @qpn of the device @qp's @ah leads to, with a reference, or NULL. */
static struct sxrc_qp *sxrc_ah_qp(struct sxrc_qp *qp,
				  const struct sxrc_ah_attr *ah, u32 qpn)
{
	struct sxrc_dev *dev;

	rcu_read_lock();
	dev = sxrc_ah_dev(qp->obj.ctx->dev, ah);
	qp = dev ? sxrc_qp_lookup(dev, qpn) : NULL;
	rcu_read_unlock();
	return qp;
}

/* A UD header as a receiver sees it in the first 40 bytes. */
static void sxrc_build_grh(struct sxrc_qp *qp, const struct sxrc_ah_attr *ah,
			   u64 len, u8 *grh)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	__be32 vtf = cpu_to_be32(6U << 28 | (u32)ah->traffic_class << 20 |
				 (ah->flow_label & 0xfffff));
	__be16 paylen = cpu_to_be16(len);

	memcpy(grh, &vtf, 4);
	memcpy(grh + 4, &paylen, 2);
	grh[6] = 0x1b;		/* next header: IBA transport */
	grh[7] = ah->hop_limit;
	memcpy(grh + 24, ah->dgid, 16);
	/* A link's source GID is the one the address vector chose. */
	if (rcu_access_pointer(dev->ndev) &&
	    !sxrc_link_gid(dev, ah->sgid_index, grh + 8))
		return;
	sxrc_local_gid(dev, grh + 8);
}

/* A datagram: to one QP, or to every member of a multicast group. */
static enum sxrc_outcome sxrc_local_ud(struct sxrc_qp *qp,
				       struct sxrc_msg *m,
				       struct sxrc_scratch *s,
				       struct sxrc_result *res)
{
	u8 *grh = m->ah.is_global ? s->grh : NULL;
	struct sxrc_qp *dest;

	if (grh)
		sxrc_build_grh(qp, &m->ah, m->len, grh);
	res->status = SXRC_WC_SUCCESS;
	res->byte_len = m->len;

	if ((m->dqpn & SXRC_MCAST_QPN) == SXRC_MCAST_QPN) {
		struct sxrc_dev *mdev = qp->obj.ctx->dev;
		struct sxrc_mcast *mc;

		mutex_lock(&mdev->mcast_lock);
		list_for_each_entry(mc, &mdev->mcast_list, entry)
			if (!memcmp(mc->gid, m->ah.dgid, sizeof(mc->gid)) ||
			    (!m->ah.is_global && mc->lid == m->ah.dlid))
				sxrc_resp_datagram(mc->qp, m, s, grh);
		mutex_unlock(&mdev->mcast_lock);
		return SXRC_DONE;
	}

	dest = sxrc_ah_qp(qp, &m->ah, m->dqpn & SXRC_QPN_MAX);
	if (dest) {
		sxrc_resp_datagram(dest, m, s, grh);
		sxrc_obj_drop(&dest->obj);
	}
	return SXRC_DONE;
}

/*
 * Does @dest take a message from @qp with PSN @psn?  Only from the QP it
 * is connected to, through a path that leads back to @qp's device, and
 * (RC, XRC) only the PSN it expects next; UC takes any PSN at the start
 * of a message and follows it.  Anything else is dropped, as on a wire.
 */
static bool sxrc_peer_accepts(struct sxrc_qp *dest, struct sxrc_qp *qp,
			      u32 psn)
{
	bool ok;

	rcu_read_lock();
	spin_lock_bh(&dest->lock);
	ok = sxrc_qp_can_receive(dest) && dest->attr.dest_qp_num == qp->qpn &&
	     sxrc_ah_dev(dest->obj.ctx->dev, &dest->attr.ah_attr) ==
	     qp->obj.ctx->dev &&
	     (dest->type == SXRC_QPT_UC || dest->attr.rq_psn == psn);
	spin_unlock_bh(&dest->lock);
	rcu_read_unlock();
	return ok;
}

/* The message took its packets: both ends move on. */
static void sxrc_psn_advance(struct sxrc_qp *qp, struct sxrc_qp *dest,
			     const struct sxrc_msg *m)
{
	u32 next = (m->psn + m->npkts) & SXRC_PSN_MASK;

	spin_lock_bh(&dest->lock);
	dest->attr.rq_psn = next;
	spin_unlock_bh(&dest->lock);
	spin_lock_bh(&qp->lock);
	qp->attr.sq_psn = next;
	spin_unlock_bh(&qp->lock);
}

/*
 * The reply of a READ (the range the responder left in s->remote) or an
 * atomic (s->orig) lands in the requester's list: 0, a completion
 * status, or -EINTR when the copy stopped.
 */
static int sxrc_local_reply(struct sxrc_msg *m, struct sxrc_scratch *s)
{
	struct sxrc_sgl orig = { .n = 0 };
	int ret;

	if (m->op == SXRC_MSG_READ) {
		ret = sxrc_copy_sgl(m->data, 0, &s->remote, s->qp);
		sxrc_sgl_release(&s->remote);
		if (ret == -EFAULT)
			return m->data->fault ? SXRC_WC_LOC_PROT_ERR :
						SXRC_WC_REM_ACCESS_ERR;
		return ret;
	}
	if (m->op == SXRC_MSG_SEND || m->op == SXRC_MSG_WRITE)
		return 0;
	sxrc_sgl_add_kbuf(&orig, &s->orig, sizeof(s->orig));
	ret = sxrc_copy_sgl(m->data, 0, &orig, s->qp);
	return ret == -EFAULT ? SXRC_WC_LOC_PROT_ERR : ret;
}

/* RC, UC and XRC: through the QP this one is connected to. */
static enum sxrc_outcome sxrc_local_connected(struct sxrc_qp *qp,
					      struct sxrc_msg *m,
					      struct sxrc_scratch *s,
					      struct sxrc_result *res)
{
	bool rc = sxrc_reliable(qp->type), stopped = false;
	u32 peer_type = qp->type == SXRC_QPT_XRC_SEND ? SXRC_QPT_XRC_RECV :
			qp->type;
	enum sxrc_outcome out = SXRC_DONE;
	struct sxrc_qp *dest;
	enum sxrc_resp resp;
	u32 status = 0;
	int ret;

	dest = sxrc_ah_qp(qp, &m->ah, m->dqpn);
	if (!dest || dest->type != peer_type ||
	    !sxrc_peer_accepts(dest, qp, m->psn)) {
		if (dest)
			sxrc_obj_drop(&dest->obj);
		if (!rc) {
			res->status = SXRC_WC_SUCCESS;	/* UC: lost, done */
			return SXRC_DONE;
		}
		return SXRC_WAIT_LOST;
	}

	res->status = SXRC_WC_SUCCESS;
	res->byte_len = m->len;
	resp = sxrc_resp_execute(dest, m, s, &status, &stopped);
	if (resp == SXRC_RESP_OK && !stopped) {
		ret = sxrc_local_reply(m, s);
		if (ret > 0) {
			resp = SXRC_RESP_ERR;
			status = ret;
		} else if (ret) {
			stopped = true;
		}
	}
	if (stopped) {
		sxrc_obj_drop(&dest->obj);
		return SXRC_STOPPED;
	}
	switch (resp) {
	case SXRC_RESP_OK:
	case SXRC_RESP_DROPPED:
		/* UC follows the sender's PSN whatever became of a message. */
		if (resp == SXRC_RESP_OK || !rc)
			sxrc_psn_advance(qp, dest, m);
		break;
	case SXRC_RESP_DEFER:	/* in softirq only, never here */
	case SXRC_RESP_RNR:
		res->rnr_timer = READ_ONCE(dest->attr.min_rnr_timer);
		out = SXRC_WAIT_RNR;
		break;
	case SXRC_RESP_ERR:
		if (!rc) {
			/* UC: the responder drops, the sender is done. */
			sxrc_psn_advance(qp, dest, m);
			break;
		}
		res->status = status;
		sxrc_resp_nak(dest, status);
		break;
	}
	sxrc_obj_drop(&dest->obj);
	return out;
}

static enum sxrc_outcome sxrc_local_deliver(struct sxrc_qp *qp,
					    struct sxrc_msg *m,
					    struct sxrc_scratch *s,
					    struct sxrc_result *res)
{
	if (qp->type == SXRC_QPT_UD)
		return sxrc_local_ud(qp, m, s, res);
	return sxrc_local_connected(qp, m, s, res);
}

const struct sxrc_path sxrc_local_path = {
	.deliver = sxrc_local_deliver,
};
