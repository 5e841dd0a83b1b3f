// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the communication manager of a link: what each MAD from the
 * network does to its ids, and their timers.  The ids' life and the
 * methods are in cm_ops.c, the MADs' layout in cm_mad.c, the channels
 * in cm_chan.c.
 *
 * Everything a MAD from the network says is checked before it changes
 * anything: it must name one of this host's comm IDs, come from the GID
 * that id's peer has, name the peer's comm ID, and fit the id's state;
 * otherwise it is dropped and counted (wire_cm_dropped).  A MAD is
 * answered by one MAD at most, always to its sender; the receive worker
 * never waits on a process (a full channel or backlog leaves a REQ
 * unanswered, as a slow host does).
 *
 * One mutex per link (sxrc_cm_port.mutex) serialises the receive
 * worker, the methods, the timers and closing contexts: the CM is not
 * a data path.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "cm.h"
#include "sxrc_loc.h"

/* Milliseconds of "4.096 us << @exp", as the module waits them. */
u32 sxrc_cm_wait_ms(u8 exp)
{
	u64 ms = div_u64(4096ULL << min_t(u8, exp, 31), 1000000);

	return clamp_t(u64, ms, SXRC_CM_MIN_WAIT_MS, SXRC_CM_MAX_WAIT_MS);
}

/* Wait @ms for the answer to the message in @id->mad. */
static void sxrc_cm_arm(struct sxrc_cm_id *id, u32 ms)
{
	mod_delayed_work(sxrc_wq, &id->timer, msecs_to_jiffies(ms));
}

/* A new request in @id->mad: its resends start over. */
void sxrc_cm_start_timer(struct sxrc_cm_id *id)
{
	id->retries = id->max_retries;
	id->mra_seen = false;
	sxrc_cm_arm(id, id->timeout_ms);
}

/* The id whose comm ID is @cid; NULL for none or one in time wait. */
static struct sxrc_cm_id *sxrc_cm_find(struct sxrc_cm_port *cm, u32 cid,
				       bool *timewait)
{
	void *e = cid ? xa_load(&cm->ids, cid) : NULL;

	*timewait = e && xa_pointer_tag(e);
	return e && !xa_pointer_tag(e) ? e : NULL;
}

static u32 sxrc_cm_rhash(u32 rcid, const u8 *gid)
{
	return jhash(gid, 16, rcid);
}

/* A passive id made by the REQ (or SIDR_REQ) @rcid from @gid. */
static struct sxrc_cm_id *sxrc_cm_find_remote(struct sxrc_cm_port *cm,
					      u32 rcid, const u8 *gid,
					      bool sidr)
{
	struct sxrc_cm_id *id;

	hash_for_each_possible(cm->remote, id, node,
			       sxrc_cm_rhash(rcid, gid))
		if (id->remote_id == rcid && id->sidr == sidr &&
		    !memcmp(id->gid, gid, 16))
			return id;
	return NULL;
}

struct sxrc_cm_id *sxrc_cm_find_listener(struct sxrc_cm_port *cm, u64 sid)
{
	struct sxrc_cm_id *id;

	hash_for_each_possible(cm->listeners, id, node, sid)
		if (id->service_id == sid)
			return id;
	return NULL;
}

/* A listener's id is answered (or gone): its backlog has room again. */
void sxrc_cm_unpend(struct sxrc_cm_id *id)
{
	struct sxrc_cm_id *lis = id->listener;

	if (!lis)
		return;
	id->listener = NULL;
	lis->pending--;
	/* Never the last reference of the context: @id holds one too. */
	sxrc_obj_drop(&lis->obj);
}

/* Take @id off the tables it is on. */
void sxrc_cm_unhash(struct sxrc_cm_id *id)
{
	if (id->hashed)
		hash_del(&id->node);
	id->hashed = false;
}

/**
 * sxrc_cm_ev - an event about @id, its addresses filled in
 * @id: the id
 * @type: SXRC_CM_EVENT_*
 * @m: the MAD it reports, or NULL
 * @pd_off: where the message's private data starts
 * @pd_len: how long it is
 *
 * Return: the record, or NULL without memory (the event is lost).
 */
struct sxrc_cm_qev *sxrc_cm_ev(struct sxrc_cm_id *id, u32 type, const u8 *m,
			       u32 pd_off, u32 pd_len)
{
	struct sxrc_cm_qev *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (!e)
		return NULL;
	e->id = id;
	e->ev.user_cookie = id->obj.user_cookie;
	e->ev.event = type;
	e->ev.handle = id->obj.handle;
	memcpy(e->ev.conn.gid, id->gid, 16);
	memcpy(e->ev.conn.local_gid, id->local_gid, 16);
	if (m && pd_len) {
		memcpy(e->ev.pdata, m + SXRC_CM_MSG(pd_off), pd_len);
		e->ev.pdata_len = pd_len;
	}
	return e;
}

void sxrc_cm_report(struct sxrc_cm_id *id, struct sxrc_cm_qev *e)
{
	if (e)
		sxrc_cm_chan_queue(id->chan, e, false);
}

/*
 * A REQ's or a REP's event about @id: the connection @c it describes,
 * with @id's addresses as sxrc_cm_ev() fills them in.
 */
static void sxrc_cm_report_conn(struct sxrc_cm_id *id, u32 type,
				const u8 *m, u32 pd_off, u32 pd_len,
				const struct sxrc_cm_conn *c)
{
	struct sxrc_cm_qev *e = sxrc_cm_ev(id, type, m, pd_off, pd_len);

	if (e) {
		e->ev.conn = *c;
		memcpy(e->ev.conn.gid, id->gid, 16);
		memcpy(e->ev.conn.local_gid, id->local_gid, 16);
	}
	sxrc_cm_report(id, e);
}

/* The timer: resend the request in @id->mad, or give up on it. */
void sxrc_cm_timer_fn(struct work_struct *work)
{
	struct sxrc_cm_id *id = container_of(to_delayed_work(work),
					     struct sxrc_cm_id, timer);
	struct sxrc_dev *dev = id->obj.ctx->dev;
	struct sxrc_cm_port *cm = id->cm;
	struct sxrc_cm_qev *e;

	mutex_lock(&cm->mutex);
	switch (id->state) {
	case SXRC_CMS_REQ_SENT:
	case SXRC_CMS_REP_SENT:
	case SXRC_CMS_DREQ_SENT:
	case SXRC_CMS_SIDR_REQ_SENT:
		break;
	default:
		goto out;
	}
	if (id->retries) {
		id->retries--;
		sxrc_wire_count(dev, SXRC_WIRE_CM_RETRIES);
		sxrc_cm_xmit(dev, cm, id->sgid_index, id->gid, id->mad);
		sxrc_cm_arm(id, id->timeout_ms);
		goto out;
	}
	sxrc_wire_count(dev, SXRC_WIRE_CM_TIMEOUTS);
	id->state = SXRC_CMS_DONE;
	e = sxrc_cm_ev(id, SXRC_CM_EVENT_TIMEOUT, NULL, 0, 0);
	if (e)
		e->ev.msg = id->sent;
	sxrc_cm_report(id, e);
out:
	mutex_unlock(&cm->mutex);
}

/* Answer the MAD of @p with @mad, to its sender from its destination. */
static void sxrc_cm_answer(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			   const struct sxrc_pkt *p, u8 *mad)
{
	int idx;

	rcu_read_lock();
	idx = sxrc_link_gid_index(dev, p->dgid);
	rcu_read_unlock();
	if (idx >= 0)
		sxrc_cm_xmit(dev, cm, idx, p->sgid, mad);
}

/*
 * A REQ or SIDR_REQ for @lis: a new id in the listener's context,
 * published at once (its handle goes in the event).  NULL when the
 * backlog or the channel is full, the context closing, or no memory.
 */
static struct sxrc_cm_id *sxrc_cm_passive(struct sxrc_dev *dev,
					  struct sxrc_cm_port *cm,
					  struct sxrc_cm_id *lis,
					  const struct sxrc_pkt *p, u32 rcid,
					  bool sidr)
{
	struct sxrc_ctx *ctx = lis->obj.ctx;
	struct sxrc_cm_id *id;
	int idx;

	if (ctx->cm_closed || lis->pending >= lis->backlog ||
	    sxrc_cm_chan_full(lis->chan))
		return NULL;
	rcu_read_lock();
	idx = sxrc_link_gid_index(dev, p->dgid);
	rcu_read_unlock();
	if (idx < 0)
		return NULL;
	kref_get(&lis->chan->evf.ref);
	id = sxrc_cm_id_alloc(cm, lis->chan);
	if (!id) {
		sxrc_cm_chan_put(lis->chan);
		return NULL;
	}
	if (sxrc_obj_init_shared(ctx, &id->obj, SXRC_TYPE_CM_ID,
				 &sxrc_cm_id_ops)) {
		sxrc_cm_chan_put(lis->chan);
		kfree(id);
		return NULL;
	}
	id->obj.user_cookie = lis->obj.user_cookie;
	/* Reserved: nobody sees it before it is whole. */
	if (xa_alloc(&ctx->objects, &id->obj.handle, NULL, xa_limit_31b,
		     GFP_KERNEL))
		goto err_obj;
	if (sxrc_cm_alloc_comm_id(cm, id))
		goto err_handle;
	id->sidr = sidr;
	id->remote_id = rcid;
	id->service_id = lis->service_id;
	id->sgid_index = idx;
	memcpy(id->gid, p->sgid, 16);
	memcpy(id->local_gid, p->dgid, 16);
	id->tid = get_unaligned_be64((const u8 *)p->payload + SXRC_MAD_TID);
	hash_add(cm->remote, &id->node, sxrc_cm_rhash(rcid, id->gid));
	id->hashed = true;
	id->listener = lis;
	lis->pending++;
	kref_get(&lis->obj.ref);
	xa_store(&ctx->objects, id->obj.handle, &id->obj, GFP_KERNEL);
	return id;

err_handle:
	xa_erase(&ctx->objects, id->obj.handle);
err_obj:
	/* Still IDLE, on no table: its destroy only frees it. */
	mutex_unlock(&cm->mutex);
	sxrc_obj_release_shared(&id->obj);
	mutex_lock(&cm->mutex);
	return NULL;
}

/*
 * A REQ repeated: the REP again, or an MRA while the application thinks,
 * or the application's REJ again (the first may have been lost).
 */
static bool sxrc_cm_dup_req(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			    const struct sxrc_pkt *p, struct sxrc_cm_id *id)
{
	u8 *m;

	switch (id->state) {
	case SXRC_CMS_REQ_RCVD:
		m = sxrc_cm_mad_start(cm->mad, SXRC_CM_MSG_MRA, id->tid);
		put_unaligned_be32(id->local_id, m + SXRC_CM_MSG(0));
		put_unaligned_be32(id->remote_id, m + SXRC_CM_MSG(4));
		m[SXRC_CM_MSG(8)] = SXRC_CM_MSGD_REQ << 6;
		m[SXRC_CM_MSG(9)] = (id->mra_sent ? id->mra_timeout :
				     SXRC_CM_AUTO_MRA) << 3;
		sxrc_cm_answer(dev, cm, p, m);
		return true;
	case SXRC_CMS_REP_SENT:
		sxrc_cm_answer(dev, cm, p, id->mad);
		return true;
	case SXRC_CMS_DONE:
		if (id->sent != SXRC_CM_MSG_REJ)
			return false;
		sxrc_cm_answer(dev, cm, p, id->mad);
		return true;
	default:
		return false;
	}
}

static bool sxrc_cm_rcv_req(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			    const struct sxrc_pkt *p)
{
	const u8 *req = p->payload;
	u32 rcid = get_unaligned_be32(req + SXRC_CM_MSG(0));
	struct sxrc_cm_conn c = {};
	struct sxrc_cm_id *id, *lis;
	u8 *m;

	id = sxrc_cm_find_remote(cm, rcid, p->sgid, false);
	if (id)
		return sxrc_cm_dup_req(dev, cm, p, id);
	lis = sxrc_cm_find_listener(cm, get_unaligned_be64(req +
							   SXRC_CM_MSG(8)));
	if (!lis) {
		/* Nobody listens: REJ "invalid service ID", at once. */
		m = sxrc_cm_mad_start(cm->mad, SXRC_CM_MSG_REJ,
				      get_unaligned_be64(req + SXRC_MAD_TID));
		put_unaligned_be32(rcid, m + SXRC_CM_MSG(4));
		m[SXRC_CM_MSG(8)] = SXRC_CM_MSGD_REQ << 6;
		put_unaligned_be16(SXRC_CM_REJ_INVALID_SERVICE_ID,
				   m + SXRC_CM_MSG(10));
		sxrc_cm_answer(dev, cm, p, m);
		sxrc_wire_count(dev, SXRC_WIRE_CM_UNLISTENED);
		return true;
	}
	if (lis->sidr || !sxrc_cm_req_ok(req))
		return false;
	id = sxrc_cm_passive(dev, cm, lis, p, rcid, false);
	if (!id)
		return false;
	sxrc_cm_parse_req(req, &c);
	id->transport = c.transport;
	id->remote_qpn = c.qpn;
	id->max_retries = c.max_cm_retries;
	id->timeout_ms = sxrc_cm_wait_ms(c.cm_response_timeout);
	id->state = SXRC_CMS_REQ_RCVD;
	sxrc_cm_report_conn(id, SXRC_CM_EVENT_REQ, req, SXRC_CM_REQ_PD_OFF,
			    SXRC_CM_REQ_PDATA, &c);
	return true;
}

static bool sxrc_cm_rcv_sidr_req(struct sxrc_dev *dev,
				 struct sxrc_cm_port *cm,
				 const struct sxrc_pkt *p)
{
	const u8 *req = p->payload;
	u32 rcid = get_unaligned_be32(req + SXRC_CM_MSG(0));
	u64 sid = get_unaligned_be64(req + SXRC_CM_MSG(8));
	struct sxrc_cm_id *id, *lis;
	struct sxrc_cm_qev *e;
	u8 *m;

	id = sxrc_cm_find_remote(cm, rcid, p->sgid, true);
	if (id) {
		/* Answered: the answer again; else the application's. */
		if (id->state != SXRC_CMS_DONE)
			return false;
		sxrc_cm_answer(dev, cm, p, id->mad);
		return true;
	}
	lis = sxrc_cm_find_listener(cm, sid);
	if (!lis) {
		/* The request ID and the service ID come back. */
		m = sxrc_cm_mad_start(cm->mad, SXRC_CM_MSG_SIDR_REP,
				      get_unaligned_be64(req + SXRC_MAD_TID));
		put_unaligned_be32(rcid, m + SXRC_CM_MSG(0));
		m[SXRC_CM_MSG(4)] = SXRC_CM_SIDR_UNSUPPORTED;
		put_unaligned_be64(sid, m + SXRC_CM_MSG(12));
		sxrc_cm_answer(dev, cm, p, m);
		sxrc_wire_count(dev, SXRC_WIRE_CM_UNLISTENED);
		return true;
	}
	id = sxrc_cm_passive(dev, cm, lis, p, rcid, true);
	if (!id)
		return false;
	e = sxrc_cm_ev(id, SXRC_CM_EVENT_SIDR_REQ, req, SXRC_CM_SREQ_PD_OFF,
		       SXRC_CM_SIDR_REQ_PDATA);
	if (e)
		e->ev.conn.service_id = sid;
	id->state = SXRC_CMS_SIDR_REQ_RCVD;
	sxrc_cm_report(id, e);
	return true;
}

/*
 * The id a MAD about an existing connection names: its "remote comm
 * ID" (at @off) is ours; it comes from the peer's GID and names the
 * peer's comm ID where we know it.
 */
static struct sxrc_cm_id *sxrc_cm_conn_id(struct sxrc_cm_port *cm,
					  const struct sxrc_pkt *p, u32 off,
					  bool *timewait)
{
	const u8 *m = p->payload;
	struct sxrc_cm_id *id;
	u32 theirs = get_unaligned_be32(m + SXRC_CM_MSG(0));

	id = sxrc_cm_find(cm, get_unaligned_be32(m + SXRC_CM_MSG(off)),
			  timewait);
	if (!id || id->sidr || memcmp(id->gid, p->sgid, 16))
		return NULL;
	if (id->remote_id && id->remote_id != theirs)
		return NULL;
	return id;
}

static bool sxrc_cm_rcv_rep(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			    const struct sxrc_pkt *p)
{
	const u8 *rep = p->payload;
	struct sxrc_cm_id *id;
	struct sxrc_cm_conn c = {};
	bool tw;

	id = sxrc_cm_conn_id(cm, p, 4, &tw);
	if (!id)
		return false;
	if (id->state == SXRC_CMS_ESTABLISHED &&
	    id->sent == SXRC_CM_MSG_RTU) {
		/* Our RTU was lost: it again. */
		sxrc_cm_answer(dev, cm, p, id->mad);
		return true;
	}
	if (id->state != SXRC_CMS_REQ_SENT)
		return false;
	sxrc_cm_parse_rep(rep, id->transport, &c);
	if (!get_unaligned_be32(rep + SXRC_CM_MSG(0)) || !c.qpn)
		return false;
	id->remote_id = get_unaligned_be32(rep + SXRC_CM_MSG(0));
	id->remote_qpn = c.qpn;
	id->tid = get_unaligned_be64(rep + SXRC_MAD_TID);
	id->state = SXRC_CMS_REP_RCVD;
	cancel_delayed_work(&id->timer);
	sxrc_cm_report_conn(id, SXRC_CM_EVENT_REP, rep, SXRC_CM_REP_PD_OFF,
			    SXRC_CM_REP_PDATA, &c);
	return true;
}

/* RTU, DREP: the answer an id waits for in @state; its event. */
static bool sxrc_cm_rcv_final(struct sxrc_cm_port *cm,
			      const struct sxrc_pkt *p, u8 state, u32 type,
			      u8 next, u32 pd_off, u32 pd_len)
{
	struct sxrc_cm_id *id;
	bool tw;

	id = sxrc_cm_conn_id(cm, p, 4, &tw);
	if (!id || id->state != state || !id->remote_id)
		return false;
	id->state = next;
	cancel_delayed_work(&id->timer);
	sxrc_cm_report(id, sxrc_cm_ev(id, type, p->payload, pd_off, pd_len));
	return true;
}

static bool sxrc_cm_rcv_rej(struct sxrc_cm_port *cm, const struct sxrc_pkt *p)
{
	const u8 *m = p->payload;
	struct sxrc_cm_id *id;
	struct sxrc_cm_qev *e;
	bool tw;

	id = sxrc_cm_conn_id(cm, p, 4, &tw);
	/*
	 * The active side gives up before it heard of our comm ID (REJ 1,
	 * timeout): it names only its own, as in its REQ.
	 */
	if (!id && !get_unaligned_be32(m + SXRC_CM_MSG(4)))
		id = sxrc_cm_find_remote(cm, get_unaligned_be32(m +
							       SXRC_CM_MSG(0)),
					 p->sgid, false);
	if (!id)
		return false;
	switch (id->state) {
	case SXRC_CMS_REQ_SENT:
	case SXRC_CMS_REQ_RCVD:
	case SXRC_CMS_REP_SENT:
	case SXRC_CMS_REP_RCVD:
		break;
	default:
		return false;
	}
	id->state = SXRC_CMS_DONE;
	cancel_delayed_work(&id->timer);
	sxrc_cm_unpend(id);
	e = sxrc_cm_ev(id, SXRC_CM_EVENT_REJ, p->payload, SXRC_CM_REJ_PD_OFF,
		       SXRC_CM_REJ_PDATA);
	if (e)
		e->ev.reason = get_unaligned_be16(m + SXRC_CM_MSG(10));
	sxrc_cm_report(id, e);
	return true;
}

static bool sxrc_cm_rcv_mra(struct sxrc_cm_port *cm, const struct sxrc_pkt *p)
{
	const u8 *m = p->payload;
	u8 what = m[SXRC_CM_MSG(8)] >> 6;
	struct sxrc_cm_id *id;
	bool tw;

	id = sxrc_cm_conn_id(cm, p, 4, &tw);
	if (!id)
		return false;
	if (!(what == SXRC_CM_MSGD_REQ && id->state == SXRC_CMS_REQ_SENT) &&
	    !(what == SXRC_CM_MSGD_REP && id->state == SXRC_CMS_REP_SENT))
		return false;
	/* Wait what the peer asks, and the usual wait, before resending. */
	sxrc_cm_arm(id, min_t(u32, SXRC_CM_MAX_WAIT_MS,
			      sxrc_cm_wait_ms(m[SXRC_CM_MSG(9)] >> 3) +
			      id->timeout_ms));
	if (!id->mra_seen) {
		id->mra_seen = true;
		sxrc_cm_report(id, sxrc_cm_ev(id, SXRC_CM_EVENT_MRA, m,
					      SXRC_CM_MRA_PD_OFF,
					      SXRC_CM_MRA_PDATA));
	}
	return true;
}

static bool sxrc_cm_rcv_dreq(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
			     const struct sxrc_pkt *p)
{
	const u8 *dreq = p->payload;
	struct sxrc_cm_id *id;
	bool tw, report = true;
	u8 *m;

	id = sxrc_cm_conn_id(cm, p, 4, &tw);
	if (!id && tw)
		return false;
	if (id) {
		if (sxrc_cm_get24(dreq + SXRC_CM_MSG(8)) != id->local_qpn ||
		    !id->remote_id)
			return false;
		switch (id->state) {
		case SXRC_CMS_ESTABLISHED:
		case SXRC_CMS_REP_SENT:
		case SXRC_CMS_DREQ_SENT:
			break;
		case SXRC_CMS_DONE:
			/* Our DREP was lost: it again. */
			report = false;
			break;
		default:
			return false;
		}
	}
	/* The DREQ's comm IDs, each in the other's place. */
	m = sxrc_cm_mad_start(cm->mad, SXRC_CM_MSG_DREP,
			      get_unaligned_be64(dreq + SXRC_MAD_TID));
	memcpy(m + SXRC_CM_MSG(0), dreq + SXRC_CM_MSG(4), 4);
	memcpy(m + SXRC_CM_MSG(4), dreq + SXRC_CM_MSG(0), 4);
	sxrc_cm_answer(dev, cm, p, m);
	if (id && report) {
		id->state = SXRC_CMS_DONE;
		cancel_delayed_work(&id->timer);
		sxrc_cm_report(id, sxrc_cm_ev(id, SXRC_CM_EVENT_DREQ, dreq,
					      SXRC_CM_DREQ_PD_OFF,
					      SXRC_CM_DREQ_PDATA));
	}
	return true;
}

static bool sxrc_cm_rcv_sidr_rep(struct sxrc_cm_port *cm,
				 const struct sxrc_pkt *p)
{
	const u8 *rep = p->payload;
	struct sxrc_cm_id *id;
	struct sxrc_cm_qev *e;
	bool tw;

	id = sxrc_cm_find(cm, get_unaligned_be32(rep + SXRC_CM_MSG(0)), &tw);
	if (!id || !id->sidr || id->state != SXRC_CMS_SIDR_REQ_SENT ||
	    memcmp(id->gid, p->sgid, 16) ||
	    get_unaligned_be64(rep + SXRC_CM_MSG(12)) != id->service_id)
		return false;
	id->state = SXRC_CMS_DONE;
	cancel_delayed_work(&id->timer);
	e = sxrc_cm_ev(id, SXRC_CM_EVENT_SIDR_REP, rep, SXRC_CM_SREP_PD_OFF,
		       SXRC_CM_SIDR_REP_PDATA);
	if (e) {
		e->ev.conn.service_id = id->service_id;
		e->ev.conn.status = rep[SXRC_CM_MSG(4)];
		e->ev.conn.qpn = sxrc_cm_get24(rep + SXRC_CM_MSG(8));
		e->ev.conn.qkey = get_unaligned_be32(rep + SXRC_CM_MSG(20));
	}
	sxrc_cm_report(id, e);
	return true;
}

/**
 * sxrc_cm_recv - a MAD of the CM (sxrc_cm_valid()) arrived
 * @dev: the link
 * @cm: its CM
 * @p: the packet
 * @attr: the MAD's attribute ID
 *
 * Return: true when it was taken (answered, or it moved an id); false
 * when it was dropped without any effect.  The receive worker's.
 */
bool sxrc_cm_recv(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
		  const struct sxrc_pkt *p, u16 attr)
{
	bool taken;

	mutex_lock(&cm->mutex);
	switch (attr) {
	case SXRC_CM_MSG_REQ:
		taken = sxrc_cm_rcv_req(dev, cm, p);
		break;
	case SXRC_CM_MSG_MRA:
		taken = sxrc_cm_rcv_mra(cm, p);
		break;
	case SXRC_CM_MSG_REJ:
		taken = sxrc_cm_rcv_rej(cm, p);
		break;
	case SXRC_CM_MSG_REP:
		taken = sxrc_cm_rcv_rep(dev, cm, p);
		break;
	case SXRC_CM_MSG_RTU:
		taken = sxrc_cm_rcv_final(cm, p, SXRC_CMS_REP_SENT,
					  SXRC_CM_EVENT_RTU,
					  SXRC_CMS_ESTABLISHED,
					  SXRC_CM_RTU_PD_OFF,
					  SXRC_CM_RTU_PDATA);
		break;
	case SXRC_CM_MSG_DREQ:
		taken = sxrc_cm_rcv_dreq(dev, cm, p);
		break;
	case SXRC_CM_MSG_DREP:
		taken = sxrc_cm_rcv_final(cm, p, SXRC_CMS_DREQ_SENT,
					  SXRC_CM_EVENT_DREP, SXRC_CMS_DONE,
					  SXRC_CM_DREP_PD_OFF,
					  SXRC_CM_DREP_PDATA);
		break;
	case SXRC_CM_MSG_SIDR_REQ:
		taken = sxrc_cm_rcv_sidr_req(dev, cm, p);
		break;
	case SXRC_CM_MSG_SIDR_REP:
		taken = sxrc_cm_rcv_sidr_rep(cm, p);
		break;
	default:
		/* LAP, APR, ClassPortInfo...: not kept here. */
		taken = false;
		break;
	}
	mutex_unlock(&cm->mutex);
	return taken;
}

void sxrc_cm_port_init(struct sxrc_cm_port *cm)
{
	mutex_init(&cm->mutex);
	xa_init(&cm->ids);
	INIT_LIST_HEAD(&cm->timewait);
	hash_init(cm->remote);
	hash_init(cm->listeners);
}

/* @ctx closes: no REQ makes a new id in it from now on. */
void sxrc_cm_ctx_close(struct sxrc_ctx *ctx)
{
	struct sxrc_cm_port *cm = ctx->dev->wire_cm;

	if (!cm)
		return;
	mutex_lock(&cm->mutex);
	ctx->cm_closed = true;
	mutex_unlock(&cm->mutex);
}
