// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the CM's methods (SXRC_OBJ_CM): ids (their comm IDs, time
 * wait, destruction), listening, and the messages a process sends.
 * The module stamps every MAD itself (comm IDs, GUID, source GID and
 * QPN): a process chooses only the message,
 * its parameters and its private data, checked against the id's state
 * (IBA figure 138) and against what the caller owns.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cm.h"
#include "sxrc_loc.h"
#include "sxrc_methods.h"

/* Private data a message carries, where; 0: the process cannot send it. */
static const struct {
	u16 off;
	u16 len;
} sxrc_cm_pdata[] = {
	[SXRC_CM_MSG_REQ - 0x10] = { SXRC_CM_REQ_PD_OFF, SXRC_CM_REQ_PDATA },
	[SXRC_CM_MSG_MRA - 0x10] = { SXRC_CM_MRA_PD_OFF, SXRC_CM_MRA_PDATA },
	[SXRC_CM_MSG_REJ - 0x10] = { SXRC_CM_REJ_PD_OFF, SXRC_CM_REJ_PDATA },
	[SXRC_CM_MSG_REP - 0x10] = { SXRC_CM_REP_PD_OFF, SXRC_CM_REP_PDATA },
	[SXRC_CM_MSG_RTU - 0x10] = { SXRC_CM_RTU_PD_OFF, SXRC_CM_RTU_PDATA },
	[SXRC_CM_MSG_DREQ - 0x10] = { SXRC_CM_DREQ_PD_OFF, SXRC_CM_DREQ_PDATA },
	[SXRC_CM_MSG_SIDR_REQ - 0x10] = { SXRC_CM_SREQ_PD_OFF,
					  SXRC_CM_SIDR_REQ_PDATA },
	[SXRC_CM_MSG_SIDR_REP - 0x10] = { SXRC_CM_SREP_PD_OFF,
					  SXRC_CM_SIDR_REP_PDATA },
};

/* The link's CM, or NULL on a device without a link. */
static struct sxrc_cm_port *sxrc_cm_of(struct sxrc_call *call)
{
	return call->ctx->dev->wire_cm;
}

/* Comm IDs whose time wait is over may be used again. */
static void sxrc_cm_tw_purge(struct sxrc_cm_port *cm)
{
	struct sxrc_cm_tw *tw, *tmp;

	list_for_each_entry_safe(tw, tmp, &cm->timewait, entry) {
		if (time_before(jiffies, tw->expires))
			break;
		xa_erase(&cm->ids, tw->comm_id);
		list_del(&tw->entry);
		kfree(tw);
	}
}

/* Give @id a comm ID of its own: random, never 0, not in use. */
int sxrc_cm_alloc_comm_id(struct sxrc_cm_port *cm, struct sxrc_cm_id *id)
{
	int i, ret = -EBUSY;
	u32 cid;

	sxrc_cm_tw_purge(cm);
	for (i = 0; i < 8 && ret == -EBUSY; i++) {
		cid = get_random_u32();
		if (!cid)
			continue;
		ret = xa_insert(&cm->ids, cid, id, GFP_KERNEL);
	}
	if (ret)
		return ret == -EBUSY ? -EAGAIN : ret;
	id->local_id = cid;
	return 0;
}

/* @id no longer answers to its comm ID: time wait, then free. */
void sxrc_cm_free_comm_id(struct sxrc_cm_port *cm, struct sxrc_cm_id *id,
			  bool timewait)
{
	struct sxrc_cm_tw *tw;

	sxrc_cm_tw_purge(cm);
	if (!id->local_id)
		return;
	tw = timewait ? kmalloc(sizeof(*tw), GFP_KERNEL) : NULL;
	if (tw) {
		tw->comm_id = id->local_id;
		tw->expires = jiffies + msecs_to_jiffies(SXRC_CM_TIMEWAIT_MS);
		/* Replaces the id's entry: nothing to allocate. */
		xa_store(&cm->ids, id->local_id, xa_tag_pointer(tw, 1),
			 GFP_KERNEL);
		list_add_tail(&tw->entry, &cm->timewait);
	} else {
		xa_erase(&cm->ids, id->local_id);
	}
	id->local_id = 0;
}

static void sxrc_cm_release(struct sxrc_obj *obj)
{
	struct sxrc_cm_id *id = to_sxrc_cm_id(obj);

	if (id->chan)
		sxrc_cm_chan_put(id->chan);
	kfree(id);
}

/* An id made but never published goes through here too. */
static void sxrc_cm_destroy(struct sxrc_obj *obj)
{
	struct sxrc_cm_id *id = to_sxrc_cm_id(obj);
	struct sxrc_cm_port *cm = id->cm;

	mutex_lock(&cm->mutex);
	sxrc_cm_goodbye(obj->ctx->dev, id);
	sxrc_cm_unhash(id);
	sxrc_cm_unpend(id);
	sxrc_cm_free_comm_id(cm, id, true);
	id->state = SXRC_CMS_DEAD;
	mutex_unlock(&cm->mutex);
	/* Its state is dead: the timer, if it runs now, does nothing. */
	cancel_delayed_work_sync(&id->timer);
	if (id->chan)
		sxrc_cm_chan_purge(id->chan, id);
}

const struct sxrc_obj_ops sxrc_cm_id_ops = {
	.destroy = sxrc_cm_destroy,
	.release = sxrc_cm_release,
};

/* A new id of @cm on @chan (a reference that passes to it). */
struct sxrc_cm_id *sxrc_cm_id_alloc(struct sxrc_cm_port *cm,
				    struct sxrc_cm_chan *chan)
{
	struct sxrc_cm_id *id = kzalloc(sizeof(*id), GFP_KERNEL_ACCOUNT);

	if (!id)
		return NULL;
	id->cm = cm;
	id->chan = chan;
	id->state = SXRC_CMS_IDLE;
	INIT_DELAYED_WORK(&id->timer, sxrc_cm_timer_fn);
	return id;
}

int sxrc_cm_create_id(struct sxrc_call *call)
{
	const struct sxrc_cm_create_id_in *in = call->in;
	struct sxrc_handle_out *out = call->out;
	struct sxrc_cm_port *cm = sxrc_cm_of(call);
	struct sxrc_cm_chan *chan;
	struct sxrc_cm_id *id;
	int ret;

	if (!cm)
		return -EOPNOTSUPP;
	if (in->reserved)
		return -EINVAL;
	chan = sxrc_cm_chan_get(call->ctx->dev, in->channel_fd);
	if (IS_ERR(chan))
		return PTR_ERR(chan) == -EBADF ? -EINVAL : PTR_ERR(chan);
	id = sxrc_cm_id_alloc(cm, chan);
	if (!id) {
		sxrc_cm_chan_put(chan);
		return -ENOMEM;
	}
	ret = sxrc_obj_init(call, &id->obj, SXRC_TYPE_CM_ID, &sxrc_cm_id_ops,
			    in->user_cookie);
	if (ret) {
		sxrc_cm_chan_put(chan);
		kfree(id);
		return ret;
	}
	out->handle = id->obj.handle;
	return 0;
}

int sxrc_cm_destroy_id(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;

	if (!sxrc_cm_of(call))
		return -EOPNOTSUPP;
	if (in->reserved)
		return -EINVAL;
	return sxrc_obj_destroy(call->ctx, in->handle, SXRC_TYPE_CM_ID, NULL);
}

int sxrc_cm_listen(struct sxrc_call *call)
{
	const struct sxrc_cm_listen_in *in = call->in;
	struct sxrc_cm_port *cm = sxrc_cm_of(call);
	struct sxrc_cm_id *id;
	struct sxrc_obj *obj;
	int ret = 0;

	if (!cm)
		return -EOPNOTSUPP;
	if (!in->backlog || in->backlog > SXRC_CM_MAX_BACKLOG)
		return -EINVAL;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_CM_ID);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	id = to_sxrc_cm_id(obj);
	mutex_lock(&cm->mutex);
	if (id->state != SXRC_CMS_IDLE) {
		ret = -EINVAL;
	} else if (sxrc_cm_find_listener(cm, in->service_id)) {
		ret = -EADDRINUSE;
	} else {
		id->state = SXRC_CMS_LISTEN;
		id->service_id = in->service_id;
		id->backlog = in->backlog;
		hash_add(cm->listeners, &id->node, in->service_id);
		id->hashed = true;
	}
	mutex_unlock(&cm->mutex);
	sxrc_obj_put(obj);
	return ret;
}

/*
 * The destroyed id's last word (sxrc_cm_destroy()): a REJ for what is
 * not answered or acknowledged yet, a DREQ for a connection, a SIDR_REP
 * "rejected" for a SIDR_REQ.  One MAD, not resent.
 */
void sxrc_cm_goodbye(struct sxrc_dev *dev, struct sxrc_cm_id *id)
{
	struct sxrc_cm_port *cm = id->cm;
	u16 reason = SXRC_CM_REJ_CONSUMER_DEFINED;
	u8 what = SXRC_CM_MSGD_REQ, *m = cm->mad;

	switch (id->state) {
	case SXRC_CMS_REQ_SENT:
		reason = SXRC_CM_REJ_TIMEOUT;
		what = SXRC_CM_MSGD_OTHER;
		break;
	case SXRC_CMS_REQ_RCVD:
	case SXRC_CMS_REP_SENT:
		break;
	case SXRC_CMS_REP_RCVD:
		what = SXRC_CM_MSGD_REP;
		break;
	case SXRC_CMS_ESTABLISHED:
		sxrc_cm_mad_start(m, SXRC_CM_MSG_DREQ,
				  (u64)SXRC_CM_MSG_DREQ << 32 | id->local_id);
		put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
		sxrc_cm_put24(id->remote_qpn, m + SXRC_CM_MSG(8));
		sxrc_cm_xmit(dev, cm, id->sgid_index, id->gid, m);
		return;
	case SXRC_CMS_SIDR_REQ_RCVD:
		sxrc_cm_mad_start(m, SXRC_CM_MSG_SIDR_REP, id->tid);
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(0));
		m[SXRC_CM_MSG(4)] = SXRC_CM_SIDR_REJECT;
		put_unaligned_be64(id->service_id, m + SXRC_CM_MSG(12));
		sxrc_cm_xmit(dev, cm, id->sgid_index, id->gid, m);
		return;
	default:
		return;
	}
	sxrc_cm_mad_start(m, SXRC_CM_MSG_REJ, id->tid);
	put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
	put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
	m[SXRC_CM_MSG(8)] = what << 6;
	put_unaligned_be16(reason, m + SXRC_CM_MSG(10));
	if (reason == SXRC_CM_REJ_TIMEOUT) {
		/* Our GUID, as IBA's REJ 1 says whose timeout it was. */
		m[SXRC_CM_MSG(9)] = 8 << 1;
		memcpy(m + SXRC_CM_MSG(12), &dev->node_guid, 8);
	}
	sxrc_cm_xmit(dev, cm, id->sgid_index, id->gid, m);
}

/* Fields of a REQ or SIDR_REQ the process chose: in range, GIDs ours. */
static int sxrc_cm_check_path(struct sxrc_dev *dev, struct sxrc_cm_id *id,
			      const struct sxrc_cm_conn *c)
{
	static const u8 zero[16];
	int idx;

	if (c->max_cm_retries > 15 || c->cm_response_timeout > 31)
		return -EINVAL;
	if (!memcmp(c->gid, zero, 16) ||
	    ipv6_addr_v4mapped((const struct in6_addr *)c->gid) !=
	    ipv6_addr_v4mapped((const struct in6_addr *)c->local_gid))
		return -EINVAL;
	rcu_read_lock();
	idx = sxrc_link_gid_index(dev, c->local_gid);
	rcu_read_unlock();
	if (idx < 0)
		return -EINVAL;
	id->sgid_index = idx;
	memcpy(id->gid, c->gid, 16);
	memcpy(id->local_gid, c->local_gid, 16);
	id->max_retries = c->max_cm_retries;
	id->timeout_ms = sxrc_cm_wait_ms(c->cm_response_timeout);
	return 0;
}

/*
 * The QP of @qpo, what sxrc_cm_qp_get() gave: a QP, or the caller's
 * registration of an XRC receive QP (which belongs to its domain, and
 * which the caller's handle names only through the registration).
 */
static struct sxrc_qp *sxrc_cm_qp(struct sxrc_obj *qpo)
{
	if (qpo->type == SXRC_TYPE_XRC_REG)
		return to_sxrc_xrc_reg(qpo)->qp;
	return to_sxrc_qp(qpo);
}

/* The QP a REQ or REP names must be the caller's, of @type. */
static int sxrc_cm_check_qp(struct sxrc_obj *qpo, u32 type)
{
	if (!qpo || sxrc_cm_qp(qpo)->type != type)
		return -EINVAL;
	return 0;
}

/*
 * The QP a REQ (@recv false) or REP names for @transport.  XRC: the send
 * QP, or the receive QP the caller is registered with, which the module
 * rests its checks on.  RC and UC: any QP of the caller's but an XRC
 * receive QP, as ib_cm carries the number only: UCX's rdmacm transport
 * names a UD QP it made for its number alone (its own QPs are wired up
 * through the private data).
 */
static int sxrc_cm_check_conn_qp(struct sxrc_obj *qpo, u8 transport,
				 bool recv)
{
	if (transport == SXRC_CM_TRANSPORT_XRC)
		return sxrc_cm_check_qp(qpo, recv ? SXRC_QPT_XRC_RECV :
					SXRC_QPT_XRC_SEND);
	if (!qpo || sxrc_cm_qp(qpo)->type == SXRC_QPT_XRC_RECV)
		return -EINVAL;
	return 0;
}

static int sxrc_cm_send_req(struct sxrc_dev *dev, struct sxrc_cm_id *id,
			    const struct sxrc_cm_send_in *in,
			    struct sxrc_obj *qpo)
{
	const struct sxrc_cm_conn *c = &in->conn;
	struct sxrc_cm_port *cm = id->cm;
	int ret;

	if (id->state != SXRC_CMS_IDLE ||
	    (c->transport != SXRC_CM_TRANSPORT_RC &&
	     c->transport != SXRC_CM_TRANSPORT_UC &&
	     c->transport != SXRC_CM_TRANSPORT_XRC) ||
	    c->psn >> 24 || c->flow_label >> 20 || c->retry_count > 7 ||
	    c->rnr_retry_count > 7 || c->path_mtu < 1 || c->path_mtu > 5 ||
	    c->local_ack_timeout > 31 || c->srq > 1 || c->flow_control > 1)
		return -EINVAL;
	ret = sxrc_cm_check_conn_qp(qpo, c->transport, false);
	if (!ret)
		ret = sxrc_cm_check_path(dev, id, c);
	if (!ret)
		ret = sxrc_cm_alloc_comm_id(cm, id);
	if (ret)
		return ret;
	id->transport = c->transport;
	id->local_qpn = sxrc_cm_qp(qpo)->qpn;
	id->service_id = c->service_id;
	id->tid = (u64)SXRC_CM_MSG_REQ << 32 | id->local_id;
	sxrc_cm_mad_start(id->mad, SXRC_CM_MSG_REQ, id->tid);
	sxrc_cm_build_req(id, id->mad, c, dev->node_guid);
	return 0;
}

static int sxrc_cm_send_sidr_req(struct sxrc_dev *dev, struct sxrc_cm_id *id,
				 const struct sxrc_cm_send_in *in)
{
	const struct sxrc_cm_conn *c = &in->conn;
	int ret;

	if (id->state != SXRC_CMS_IDLE)
		return -EINVAL;
	ret = sxrc_cm_check_path(dev, id, c);
	if (!ret)
		ret = sxrc_cm_alloc_comm_id(id->cm, id);
	if (ret)
		return ret;
	id->sidr = true;
	id->service_id = c->service_id;
	id->tid = (u64)SXRC_CM_MSG_SIDR_REQ << 32 | id->local_id;
	sxrc_cm_mad_start(id->mad, SXRC_CM_MSG_SIDR_REQ, id->tid);
	put_unaligned_be32(id->local_id, id->mad + SXRC_CM_MSG(0));
	put_unaligned_be16(0xffff, id->mad + SXRC_CM_MSG(4));
	put_unaligned_be64(c->service_id, id->mad + SXRC_CM_MSG(8));
	return 0;
}

/*
 * Lay out message @in->msg of @id in @id->mad (what is kept, for resends
 * and repeats) or in the CM's scratch MAD, and move @id on.  Returns the
 * MAD to send and whether a timer waits for its answer.
 */
static int sxrc_cm_do_send(struct sxrc_dev *dev, struct sxrc_cm_id *id,
			   const struct sxrc_cm_send_in *in,
			   struct sxrc_obj *qpo, u8 **mp, bool *timed)
{
	const struct sxrc_cm_conn *c = &in->conn;
	struct sxrc_cm_port *cm = id->cm;
	u8 *m = id->mad, next, what = SXRC_CM_MSGD_REQ;
	int ret;

	*timed = false;
	switch (in->msg) {
	case SXRC_CM_MSG_REQ:
		ret = sxrc_cm_send_req(dev, id, in, qpo);
		if (ret)
			return ret;
		next = SXRC_CMS_REQ_SENT;
		*timed = true;
		break;
	case SXRC_CM_MSG_SIDR_REQ:
		ret = sxrc_cm_send_sidr_req(dev, id, in);
		if (ret)
			return ret;
		next = SXRC_CMS_SIDR_REQ_SENT;
		*timed = true;
		break;
	case SXRC_CM_MSG_REP:
		if (id->state != SXRC_CMS_REQ_RCVD || c->psn >> 24 ||
		    c->rnr_retry_count > 7 || c->srq > 1 ||
		    c->flow_control > 1 ||
		    sxrc_cm_check_conn_qp(qpo, id->transport, true))
			return -EINVAL;
		id->local_qpn = sxrc_cm_qp(qpo)->qpn;
		sxrc_cm_mad_start(m, SXRC_CM_MSG_REP, id->tid);
		sxrc_cm_build_rep(id, m, c, dev->node_guid);
		next = SXRC_CMS_REP_SENT;
		*timed = true;
		break;
	case SXRC_CM_MSG_RTU:
		if (id->state != SXRC_CMS_REP_RCVD)
			return -EINVAL;
		sxrc_cm_mad_start(m, SXRC_CM_MSG_RTU, id->tid);
		put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
		next = SXRC_CMS_ESTABLISHED;
		break;
	case SXRC_CM_MSG_DREQ:
		if (id->state != SXRC_CMS_ESTABLISHED)
			return -EINVAL;
		sxrc_cm_mad_start(m, SXRC_CM_MSG_DREQ,
				  (u64)SXRC_CM_MSG_DREQ << 32 | id->local_id);
		put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
		sxrc_cm_put24(id->remote_qpn, m + SXRC_CM_MSG(8));
		next = SXRC_CMS_DREQ_SENT;
		*timed = true;
		break;
	case SXRC_CM_MSG_SIDR_REP:
		/*
		 * Any QP of the caller's (sxrc_cm_qp_get()), as ib_cm
		 * carries the number only: a UD QP, or the XRC receive QP
		 * through which libfabric's verbs provider shares an XRC
		 * connection.
		 */
		if (id->state != SXRC_CMS_SIDR_REQ_RCVD || (!qpo && !c->status))
			return -EINVAL;
		sxrc_cm_mad_start(m, SXRC_CM_MSG_SIDR_REP, id->tid);
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(0));
		m[SXRC_CM_MSG(4)] = c->status;
		sxrc_cm_put24(qpo ? sxrc_cm_qp(qpo)->qpn : 0,
			      m + SXRC_CM_MSG(8));
		put_unaligned_be64(id->service_id, m + SXRC_CM_MSG(12));
		put_unaligned_be32(c->qkey, m + SXRC_CM_MSG(20));
		next = SXRC_CMS_DONE;
		break;
	case SXRC_CM_MSG_REJ:
	case SXRC_CM_MSG_MRA:
		if (id->state == SXRC_CMS_REP_RCVD)
			what = SXRC_CM_MSGD_REP;
		else if (id->state != SXRC_CMS_REQ_RCVD &&
			 (in->msg == SXRC_CM_MSG_MRA ||
			  (id->state != SXRC_CMS_REQ_SENT &&
			   id->state != SXRC_CMS_REP_SENT)))
			return -EINVAL;
		if (id->state == SXRC_CMS_REQ_SENT)
			what = SXRC_CM_MSGD_OTHER;
		/*
		 * A REJ is kept, for a REQ repeated after it (the REJ may
		 * have been lost); an MRA is not: the scratch MAD.
		 */
		m = sxrc_cm_mad_start(in->msg == SXRC_CM_MSG_REJ ? id->mad :
				      cm->mad, in->msg, id->tid);
		put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
		m[SXRC_CM_MSG(8)] = what << 6;
		if (in->msg == SXRC_CM_MSG_MRA) {
			if (in->mra_timeout > 31)
				return -EINVAL;
			m[SXRC_CM_MSG(9)] = in->mra_timeout << 3;
			id->mra_sent = true;
			id->mra_timeout = in->mra_timeout;
			next = id->state;
		} else {
			put_unaligned_be16(in->reason, m + SXRC_CM_MSG(10));
			next = SXRC_CMS_DONE;
			cancel_delayed_work(&id->timer);
		}
		break;
	default:
		return -EINVAL;
	}
	if (next != id->state && id->state == SXRC_CMS_REQ_RCVD)
		sxrc_cm_unpend(id);
	if (next != id->state && id->state == SXRC_CMS_SIDR_REQ_RCVD)
		sxrc_cm_unpend(id);
	id->state = next;
	if (m == id->mad)
		id->sent = in->msg;
	*mp = m;
	return 0;
}

/*
 * The QP a REQ, REP or SIDR_REP names: @in->qp_handle (a QP's, or an XRC
 * receive QP registration's: see sxrc_cm_qp()), or with no handle
 * the QP numbered @in->conn.qpn, which must be the caller's, or an XRC
 * receive QP it is registered with (rdma_cm lets an application name
 * its QP by number only: conn_param.qp_num).
 * A reference and a call count, as sxrc_obj_get() gives; EINVAL when it
 * names no QP of the caller's context.
 */
static struct sxrc_obj *sxrc_cm_qp_get(struct sxrc_ctx *ctx,
				       const struct sxrc_cm_send_in *in)
{
	enum sxrc_obj_type type = SXRC_TYPE_QP;
	struct sxrc_obj *obj;
	struct sxrc_qp *qp;
	u32 handle;

	if (in->qp_handle) {
		obj = sxrc_obj_get(ctx, in->qp_handle, SXRC_TYPE_QP);
		/* An XRC receive QP: the handle is the caller's registration. */
		if (IS_ERR(obj))
			obj = sxrc_obj_get(ctx, in->qp_handle,
					   SXRC_TYPE_XRC_REG);
		return obj;
	}
	qp = sxrc_qp_lookup(ctx->dev, in->conn.qpn);
	if (!qp)
		return ERR_PTR(-EINVAL);
	/*
	 * Another context's QP is not even looked at; an XRC receive QP
	 * (its domain's) is the caller's through a registration with it.
	 */
	if (qp->type == SXRC_QPT_XRC_RECV) {
		handle = sxrc_xrc_ctx_reg_handle(qp, ctx);
		type = SXRC_TYPE_XRC_REG;
	} else {
		handle = qp->obj.ctx == ctx ? qp->obj.handle : 0;
	}
	sxrc_obj_drop(&qp->obj);
	if (!handle)
		return ERR_PTR(-EINVAL);
	return sxrc_obj_get(ctx, handle, type);
}

int sxrc_cm_send(struct sxrc_call *call)
{
	const struct sxrc_cm_send_in *in = call->in;
	struct sxrc_cm_port *cm = sxrc_cm_of(call);
	struct sxrc_dev *dev = call->ctx->dev;
	struct sxrc_obj *obj, *qpo = NULL;
	u32 idx = in->msg - SXRC_CM_MSG_REQ;
	struct sxrc_cm_id *id;
	u8 *pdata = NULL, *m;
	bool timed, qp_used;
	int ret;

	if (!cm)
		return -EOPNOTSUPP;
	if (in->reserved || in->conn.reserved ||
	    idx >= ARRAY_SIZE(sxrc_cm_pdata) || !sxrc_cm_pdata[idx].len ||
	    in->pdata_len > sxrc_cm_pdata[idx].len ||
	    (!in->pdata_len && in->pdata))
		return -EINVAL;
	qp_used = in->msg == SXRC_CM_MSG_REQ || in->msg == SXRC_CM_MSG_REP ||
		  in->msg == SXRC_CM_MSG_SIDR_REP;
	if (!qp_used && in->qp_handle)
		return -EINVAL;
	if (in->pdata_len) {
		pdata = memdup_user(u64_to_user_ptr(in->pdata), in->pdata_len);
		if (IS_ERR(pdata))
			return PTR_ERR(pdata);
	}
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_CM_ID);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto out_free;
	}
	id = to_sxrc_cm_id(obj);
	if (qp_used && (in->qp_handle || in->conn.qpn)) {
		qpo = sxrc_cm_qp_get(call->ctx, in);
		if (IS_ERR(qpo)) {
			ret = PTR_ERR(qpo);
			goto out_put;
		}
	}

	mutex_lock(&cm->mutex);
	if (cm->stopped) {
		ret = -ENETDOWN;
		goto out_unlock;
	}
	ret = sxrc_cm_do_send(dev, id, in, qpo, &m, &timed);
	if (ret)
		goto out_unlock;
	if (pdata)
		memcpy(m + SXRC_CM_MSG(sxrc_cm_pdata[idx].off), pdata,
		       in->pdata_len);
	ret = sxrc_cm_xmit(dev, cm, id->sgid_index, id->gid, m);
	if (ret && in->msg != SXRC_CM_MSG_REQ &&
	    in->msg != SXRC_CM_MSG_SIDR_REQ)
		ret = 0;	/* as lost: resent, or repeated on demand */
	if (ret && ret != -ENOBUFS) {
		/* Nothing left: the request is as if never made. */
		sxrc_cm_free_comm_id(cm, id, false);
		id->state = SXRC_CMS_IDLE;
		id->sidr = false;
		goto out_unlock;
	}
	ret = 0;
	if (timed)
		sxrc_cm_start_timer(id);
out_unlock:
	mutex_unlock(&cm->mutex);
	if (qpo)
		sxrc_obj_put(qpo);
out_put:
	sxrc_obj_put(obj);
out_free:
	kfree(pdata);
	return ret;
}
