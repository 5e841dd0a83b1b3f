// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the resource view, SXRC_NL_CMD_RES_GET of the generic netlink
 * family (netlink.c).
 *
 * The command dumps one message per object.  The dump resumes from a
 * cursor kept in cb->ctx: the class, the device, the id of the next
 * context (contexts are listed in increasing id order) and the next
 * handle or QP number.  Objects that come or go between two parts of a
 * dump are shown or not, the others exactly once.
 *
 * No lock is held while a message is built from more than scalars: a
 * context is pinned with a reference taken under dev->lock, an object
 * with a reference taken under its context's xarray lock, and its fields
 * are then read under the object's own lock.  An open of an XRC domain
 * pins the domain too: the open's own reference on it goes as soon as
 * the open is destroyed, which may happen right after the xarray lock is
 * dropped.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <rdma/softxrc-netlink.h>

#include "cm.h"
#include "compat.h"
#include "sxrc.h"

/**
 * struct sxrc_nl_dump - state of one dump, kept in cb->ctx
 * @ctx_next: next context id to look at on device @dev
 * @obj_next: next handle (QP number for SXRC_NL_RES_XRCQP) to look at
 * @class: class being dumped (enum sxrc_nl_res_class)
 * @dev: device being dumped
 * @filter_class: the requested class, SXRC_NL_RES_ALL for all
 * @pid: the requested pid, 0 for all
 * @euid: effective uid of the requester
 * @admin: the requester has CAP_SYS_ADMIN: no uid filtering
 */
struct sxrc_nl_dump {
	u64 ctx_next;
	u32 obj_next;
	u32 class;
	u32 dev;
	u32 filter_class;
	u32 pid;
	kuid_t euid;
	bool admin;
};

static_assert(sizeof(struct sxrc_nl_dump) <=
	      sizeof_field(struct netlink_callback, ctx));

/**
 * struct sxrc_nl_obj - scalars of one object, copied for a message
 * @length: MR: bytes
 * @pages: MR: pinned pages
 * @inode: XRCD: inode number
 * @key: MR: lkey
 * @cqe: CQ: entries
 * @qpn: QP: number
 * @qp_type: QP: SXRC_QPT_*
 * @qp_state: QP: state
 * @srqn: SRQ: number
 * @opens: XRCD: opens of the domain
 * @cm_state: CM id: enum sxrc_nl_cm_state
 * @local_id: CM id: its comm ID
 * @remote_id: CM id: the peer's comm ID
 * @remote_qpn: CM id: the peer's QP
 * @service_id: CM id: its service ID
 * @stats: QP: counters
 */
struct sxrc_nl_obj {
	u64 length;
	u64 pages;
	u64 inode;
	u32 key;
	u32 cqe;
	u32 qpn;
	u32 qp_type;
	u32 qp_state;
	u32 srqn;
	u32 opens;
	u32 cm_state;
	u32 local_id;
	u32 remote_id;
	u32 remote_qpn;
	u64 service_id;
	u64 stats[SXRC_NUM_STATS];
};

/* enum sxrc_cm_state to the view's (a destroyed id is over). */
static const u8 sxrc_nl_cm_state[] = {
	[SXRC_CMS_IDLE] = SXRC_NL_CM_IDLE,
	[SXRC_CMS_LISTEN] = SXRC_NL_CM_LISTEN,
	[SXRC_CMS_REQ_SENT] = SXRC_NL_CM_REQ_SENT,
	[SXRC_CMS_REQ_RCVD] = SXRC_NL_CM_REQ_RCVD,
	[SXRC_CMS_REP_SENT] = SXRC_NL_CM_REP_SENT,
	[SXRC_CMS_REP_RCVD] = SXRC_NL_CM_REP_RCVD,
	[SXRC_CMS_ESTABLISHED] = SXRC_NL_CM_ESTABLISHED,
	[SXRC_CMS_DREQ_SENT] = SXRC_NL_CM_DREQ_SENT,
	[SXRC_CMS_SIDR_REQ_SENT] = SXRC_NL_CM_SIDR_REQ_SENT,
	[SXRC_CMS_SIDR_REQ_RCVD] = SXRC_NL_CM_SIDR_REQ_RCVD,
	[SXRC_CMS_DONE] = SXRC_NL_CM_DONE,
	[SXRC_CMS_DEAD] = SXRC_NL_CM_DONE,
};

static struct sxrc_nl_dump *sxrc_nl_state(struct netlink_callback *cb)
{
	return (struct sxrc_nl_dump *)cb->ctx;
}

static bool sxrc_nl_visible(const struct sxrc_nl_dump *st,
			    const struct sxrc_ctx *ctx)
{
	return st->admin || uid_eq(ctx->uid, st->euid);
}

static bool sxrc_nl_pid_ok(const struct sxrc_nl_dump *st,
			   const struct sxrc_ctx *ctx)
{
	return !st->pid || ctx->pid == st->pid;
}

static void *sxrc_nl_put_hdr(struct sk_buff *skb, struct netlink_callback *cb,
			     struct sxrc_dev *dev, u32 class)
{
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &sxrc_nl_family, NLM_F_MULTI, SXRC_NL_CMD_RES_GET);
	if (!hdr)
		return NULL;
	if (nla_put_u32(skb, SXRC_NL_ATTR_RES_CLASS, class) ||
	    nla_put_u32(skb, SXRC_NL_ATTR_DEV_INDEX, dev->index) ||
	    nla_put_string(skb, SXRC_NL_ATTR_DEV_NAME, dev->name)) {
		genlmsg_cancel(skb, hdr);
		return NULL;
	}
	return hdr;
}

/*
 * A record's end: kept, or taken back out of @skb when @ret (non-zero)
 * says one of its attributes did not fit.
 */
static int sxrc_nl_end(struct sk_buff *skb, void *hdr, int ret)
{
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* enum sxrc_stat to its netlink attribute (SXRC_NL_STAT_PAD is in between). */
static const u16 sxrc_nl_stat_type[SXRC_NUM_STATS] = {
	[SXRC_STAT_SEND_WQES] = SXRC_NL_STAT_SEND_WQES,
	[SXRC_STAT_SEND_BYTES] = SXRC_NL_STAT_SEND_BYTES,
	[SXRC_STAT_RECV_WQES] = SXRC_NL_STAT_RECV_WQES,
	[SXRC_STAT_RECV_BYTES] = SXRC_NL_STAT_RECV_BYTES,
	[SXRC_STAT_RNR_RETRIES] = SXRC_NL_STAT_RNR_RETRIES,
	[SXRC_STAT_RETRIES] = SXRC_NL_STAT_RETRIES,
	[SXRC_STAT_ERRORS] = SXRC_NL_STAT_ERRORS,
	[SXRC_STAT_RECV_SHARED] = SXRC_NL_STAT_RECV_SHARED,
};

static int sxrc_nl_put_stats(struct sk_buff *skb, const u64 *stats)
{
	struct nlattr *nest;
	int i;

	nest = nla_nest_start(skb, SXRC_NL_ATTR_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < SXRC_NUM_STATS; i++)
		if (nla_put_u64_64bit(skb, sxrc_nl_stat_type[i], stats[i],
				      SXRC_NL_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	nla_nest_end(skb, nest);
	return 0;
}

static void sxrc_nl_read_stats(const struct sxrc_stats *s, u64 *stats)
{
	int i;

	for (i = 0; i < SXRC_NUM_STATS; i++)
		stats[i] = atomic64_read(&s->c[i]);
}

/* A link's interface, by name and index. */
static int sxrc_nl_put_netdev(struct sk_buff *skb, struct sxrc_dev *dev)
{
	struct net_device *ndev;
	int ret = 0;

	rcu_read_lock();
	ndev = rcu_dereference(dev->ndev);
	if (ndev)
		ret = nla_put_string(skb, SXRC_NL_ATTR_NETDEV, ndev->name) ?:
		      nla_put_u32(skb, SXRC_NL_ATTR_NETDEV_INDEX,
				  ndev->ifindex);
	rcu_read_unlock();
	return ret;
}

static int sxrc_nl_fill_dev(struct sk_buff *skb, struct netlink_callback *cb,
			    struct sxrc_dev *dev)
{
	u64 stats[SXRC_NUM_STATS];
	void *hdr;
	u32 nxrcd;
	int ret;

	mutex_lock(&dev->xrcd_mutex);
	nxrcd = dev->nxrcd;
	mutex_unlock(&dev->xrcd_mutex);
	sxrc_nl_read_stats(&dev->stats, stats);

	hdr = sxrc_nl_put_hdr(skb, cb, dev, SXRC_NL_RES_DEV);
	if (!hdr)
		return -EMSGSIZE;
	ret = nla_put_u32(skb, SXRC_NL_ATTR_NUM_CTX, atomic_read(&dev->nctx)) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_PD,
			  atomic_read(&dev->nobj[SXRC_TYPE_PD])) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_MR,
			  atomic_read(&dev->nobj[SXRC_TYPE_MR])) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_CQ,
			  atomic_read(&dev->nobj[SXRC_TYPE_CQ])) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_QP,
			  atomic_read(&dev->nobj[SXRC_TYPE_QP])) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_SRQ,
			  atomic_read(&dev->nobj[SXRC_TYPE_SRQ])) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_XRCD, nxrcd) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_NUM_CM_ID,
			  atomic_read(&dev->nobj[SXRC_TYPE_CM_ID])) ||
	      nla_put_u64_64bit(skb, SXRC_NL_ATTR_PINNED_PAGES,
				atomic64_read(&dev->mr_pages),
				SXRC_NL_ATTR_PAD) ||
	      sxrc_nl_put_stats(skb, stats) || sxrc_nl_put_netdev(skb, dev);
	return sxrc_nl_end(skb, hdr, ret);
}

/* The owner's attributes, common to every object of a context. */
static int sxrc_nl_put_owner(struct sk_buff *skb, struct sxrc_ctx *ctx)
{
	if (nla_put_u32(skb, SXRC_NL_ATTR_PID, ctx->pid) ||
	    nla_put_u64_64bit(skb, SXRC_NL_ATTR_CTX_ID, ctx->id,
			      SXRC_NL_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

static int sxrc_nl_fill_ctx(struct sk_buff *skb, struct netlink_callback *cb,
			    struct sxrc_ctx *ctx)
{
	void *hdr;
	int ret;

	hdr = sxrc_nl_put_hdr(skb, cb, ctx->dev, SXRC_NL_RES_CTX);
	if (!hdr)
		return -EMSGSIZE;
	ret = sxrc_nl_put_owner(skb, ctx) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_UID,
			  from_kuid_munged(current_user_ns(), ctx->uid)) ||
	      nla_put_string(skb, SXRC_NL_ATTR_COMM, ctx->comm);
	return sxrc_nl_end(skb, hdr, ret);
}

static enum sxrc_obj_type sxrc_nl_obj_type(u32 class)
{
	switch (class) {
	case SXRC_NL_RES_PD:
		return SXRC_TYPE_PD;
	case SXRC_NL_RES_MR:
		return SXRC_TYPE_MR;
	case SXRC_NL_RES_CQ:
		return SXRC_TYPE_CQ;
	case SXRC_NL_RES_QP:
		return SXRC_TYPE_QP;
	case SXRC_NL_RES_SRQ:
		return SXRC_TYPE_SRQ;
	case SXRC_NL_RES_CM_ID:
		return SXRC_TYPE_CM_ID;
	default:
		return SXRC_TYPE_XRCD;
	}
}

/*
 * Copy what a message shows of @obj (a reference held, no lock); @xrcd is
 * the domain of an XRCD open, pinned by the caller.
 */
static void sxrc_nl_read_obj(struct sxrc_obj *obj, struct sxrc_xrcd *xrcd,
			     struct sxrc_nl_obj *o)
{
	struct sxrc_cm_id *id;
	struct sxrc_umem *umem;
	struct sxrc_qp *qp;
	struct sxrc_mr *mr;
	struct sxrc_cq *cq;

	memset(o, 0, sizeof(*o));
	switch (obj->type) {
	case SXRC_TYPE_MR:
		mr = to_sxrc_mr(obj);
		spin_lock_bh(&mr->lock);
		umem = mr->umem;
		if (umem) {
			o->length = umem->length;
			o->pages = umem->npages;
		}
		o->key = mr->key;
		spin_unlock_bh(&mr->lock);
		break;
	case SXRC_TYPE_CQ:
		cq = to_sxrc_cq(obj);
		spin_lock_bh(&cq->lock);
		o->cqe = cq->ring ? cq->ring->entries : 0;
		spin_unlock_bh(&cq->lock);
		break;
	case SXRC_TYPE_QP:
		qp = to_sxrc_qp(obj);
		spin_lock_bh(&qp->lock);
		o->qp_state = qp->attr.qp_state;
		spin_unlock_bh(&qp->lock);
		o->qpn = qp->qpn;
		o->qp_type = qp->type;
		o->srqn = qp->srq ? qp->srq->srqn : 0;
		sxrc_nl_read_stats(&qp->stats, o->stats);
		break;
	case SXRC_TYPE_SRQ:
		o->srqn = to_sxrc_srq(obj)->srqn;
		sxrc_nl_read_stats(&to_sxrc_srq(obj)->stats, o->stats);
		break;
	case SXRC_TYPE_XRCD:
		o->inode = xrcd->inode ? xrcd->inode->i_ino : 0;
		o->opens = atomic_read(&xrcd->nopen);
		break;
	case SXRC_TYPE_CM_ID:
		id = to_sxrc_cm_id(obj);
		/* The link's CM mutex: every field of its ids. */
		mutex_lock(&id->cm->mutex);
		o->cm_state = sxrc_nl_cm_state[id->state];
		o->service_id = id->service_id;
		o->local_id = id->local_id;
		o->remote_id = id->remote_id;
		o->qpn = id->local_qpn;
		o->remote_qpn = id->remote_qpn;
		mutex_unlock(&id->cm->mutex);
		break;
	default:
		break;
	}
}

static int sxrc_nl_fill_obj(struct sk_buff *skb, struct netlink_callback *cb,
			    struct sxrc_obj *obj, struct sxrc_xrcd *xrcd,
			    u32 class)
{
	struct sxrc_nl_obj o;
	void *hdr;
	int ret = 0;

	sxrc_nl_read_obj(obj, xrcd, &o);
	hdr = sxrc_nl_put_hdr(skb, cb, obj->ctx->dev, class);
	if (!hdr)
		return -EMSGSIZE;
	if (sxrc_nl_put_owner(skb, obj->ctx) ||
	    nla_put_u32(skb, SXRC_NL_ATTR_HANDLE, obj->handle))
		return sxrc_nl_end(skb, hdr, -EMSGSIZE);
	switch (class) {
	case SXRC_NL_RES_MR:
		ret = nla_put_u64_64bit(skb, SXRC_NL_ATTR_LENGTH, o.length,
					SXRC_NL_ATTR_PAD) ||
		      nla_put_u64_64bit(skb, SXRC_NL_ATTR_PINNED_PAGES, o.pages,
					SXRC_NL_ATTR_PAD) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_KEY, o.key);
		break;
	case SXRC_NL_RES_CQ:
		ret = nla_put_u32(skb, SXRC_NL_ATTR_CQE, o.cqe);
		break;
	case SXRC_NL_RES_QP:
		ret = nla_put_u32(skb, SXRC_NL_ATTR_QPN, o.qpn) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_QP_TYPE, o.qp_type) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_QP_STATE, o.qp_state) ||
		      (o.srqn && nla_put_u32(skb, SXRC_NL_ATTR_SRQN, o.srqn)) ||
		      sxrc_nl_put_stats(skb, o.stats);
		break;
	case SXRC_NL_RES_SRQ:
		ret = nla_put_u32(skb, SXRC_NL_ATTR_SRQN, o.srqn) ||
		      sxrc_nl_put_stats(skb, o.stats);
		break;
	case SXRC_NL_RES_XRCD:
		ret = nla_put_u64_64bit(skb, SXRC_NL_ATTR_INODE, o.inode,
					SXRC_NL_ATTR_PAD) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_OPENS, o.opens);
		break;
	case SXRC_NL_RES_CM_ID:
		ret = nla_put_u32(skb, SXRC_NL_ATTR_CM_STATE, o.cm_state) ||
		      nla_put_u64_64bit(skb, SXRC_NL_ATTR_SERVICE_ID,
					o.service_id, SXRC_NL_ATTR_PAD) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_CM_LOCAL_ID, o.local_id) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_CM_REMOTE_ID, o.remote_id) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_QPN, o.qpn) ||
		      nla_put_u32(skb, SXRC_NL_ATTR_REMOTE_QPN, o.remote_qpn);
		break;
	default:
		break;
	}
	return sxrc_nl_end(skb, hdr, ret);
}

/*
 * The next context of @dev with an id >= *next, with a reference; NULL
 * when there is none.
 */
static struct sxrc_ctx *sxrc_nl_next_ctx(struct sxrc_dev *dev, u64 next)
{
	struct sxrc_ctx *ctx, *found = NULL;

	/* dev->lock: ctx_list; only the reference is taken under it. */
	spin_lock_bh(&dev->lock);
	list_for_each_entry(ctx, &dev->ctx_list, dev_entry) {
		if (ctx->id >= next) {
			kref_get(&ctx->ref);
			found = ctx;
			break;
		}
	}
	spin_unlock_bh(&dev->lock);
	return found;
}

/*
 * The next object of @type with a handle >= *index, with a reference;
 * for an open of an XRC domain, *@xrcd is its domain, with a reference
 * too (put it with sxrc_xrcd_put()).
 */
static struct sxrc_obj *sxrc_nl_next_obj(struct sxrc_ctx *ctx,
					 enum sxrc_obj_type type,
					 unsigned long *index,
					 struct sxrc_xrcd **xrcd)
{
	struct sxrc_obj *obj;

	*xrcd = NULL;
	/*
	 * The xarray lock: an object in the table holds the table's
	 * reference until it is erased under this lock, and it is torn
	 * down (an open drops its domain) only after that.
	 */
	xa_lock(&ctx->objects);
	xa_for_each_start(&ctx->objects, *index, obj, *index) {
		if (obj->type == type) {
			kref_get(&obj->ref);
			if (type == SXRC_TYPE_XRCD) {
				*xrcd = to_sxrc_xrcd_open(obj)->xrcd;
				kref_get(&(*xrcd)->ref);
			}
			xa_unlock(&ctx->objects);
			return obj;
		}
	}
	xa_unlock(&ctx->objects);
	return NULL;
}

/* Dump the objects of one class kept in contexts' handle tables. */
static int sxrc_nl_dump_ctxs(struct sk_buff *skb, struct netlink_callback *cb,
			     struct sxrc_dev *dev)
{
	struct sxrc_nl_dump *st = sxrc_nl_state(cb);
	struct sxrc_xrcd *xrcd;
	unsigned long index;
	struct sxrc_ctx *ctx;
	struct sxrc_obj *obj;
	int ret = 0;

	while ((ctx = sxrc_nl_next_ctx(dev, st->ctx_next))) {
		/* The context a part ended in may have gone meanwhile. */
		if (ctx->id != st->ctx_next) {
			st->ctx_next = ctx->id;
			st->obj_next = 0;
		}
		if (!sxrc_nl_visible(st, ctx) || !sxrc_nl_pid_ok(st, ctx))
			goto next_ctx;
		if (st->class == SXRC_NL_RES_CTX) {
			ret = sxrc_nl_fill_ctx(skb, cb, ctx);
			if (ret)
				goto out_put;
			goto next_ctx;
		}
		index = st->obj_next;
		while ((obj = sxrc_nl_next_obj(ctx,
					       sxrc_nl_obj_type(st->class),
					       &index, &xrcd))) {
			ret = sxrc_nl_fill_obj(skb, cb, obj, xrcd, st->class);
			if (xrcd)
				sxrc_xrcd_put(xrcd);
			sxrc_obj_drop(obj);
			if (ret)
				goto out_put;
			st->obj_next = ++index;
		}
next_ctx:
		st->ctx_next = ctx->id + 1;
		st->obj_next = 0;
		sxrc_ctx_put(ctx);
	}
	return 0;

out_put:
	sxrc_ctx_put(ctx);
	return ret;
}

/*
 * Registrations of @qp, one nest per registrant process that @st may see,
 * with its count, and how many registrations the others hold.  Called
 * with xrcd->lock held (the list of @qp).
 */
static int sxrc_nl_put_regs(struct sk_buff *skb, struct sxrc_nl_dump *st,
			    struct sxrc_qp *qp)
{
	struct sxrc_xrc_reg *reg, *prev;
	struct nlattr *nest;
	u32 count, others = 0;
	bool seen;

	list_for_each_entry(reg, &qp->regs, entry) {
		if (!sxrc_nl_visible(st, reg->obj.ctx)) {
			others++;
			continue;
		}
		/* Processes are few: count each on its first registration. */
		seen = false;
		count = 0;
		list_for_each_entry(prev, &qp->regs, entry) {
			if (prev->obj.ctx->pid != reg->obj.ctx->pid ||
			    !sxrc_nl_visible(st, prev->obj.ctx))
				continue;
			if (prev == reg && count)
				seen = true;
			count++;
		}
		if (seen)
			continue;
		nest = nla_nest_start(skb, SXRC_NL_ATTR_REG);
		if (!nest ||
		    nla_put_u32(skb, SXRC_NL_ATTR_PID, reg->obj.ctx->pid) ||
		    nla_put_u32(skb, SXRC_NL_ATTR_REG_COUNT, count))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return nla_put_u32(skb, SXRC_NL_ATTR_REG_OTHERS, others);
}

/* Whether @st shows @qp at all (xrcd->lock held). */
static bool sxrc_nl_xrcqp_shown(struct sxrc_nl_dump *st, struct sxrc_qp *qp)
{
	struct sxrc_xrc_reg *reg;

	if (sxrc_nl_visible(st, qp->obj.ctx) && sxrc_nl_pid_ok(st, qp->obj.ctx))
		return true;
	list_for_each_entry(reg, &qp->regs, entry)
		if (sxrc_nl_visible(st, reg->obj.ctx) &&
		    sxrc_nl_pid_ok(st, reg->obj.ctx))
			return true;
	return false;
}

static int sxrc_nl_fill_xrcqp(struct sk_buff *skb, struct netlink_callback *cb,
			      struct sxrc_qp *qp)
{
	struct sxrc_nl_dump *st = sxrc_nl_state(cb);
	struct sxrc_xrcd *xrcd = qp->xrcd;
	struct sxrc_nl_obj o;
	void *hdr = NULL;
	int ret = 0;

	sxrc_nl_read_obj(&qp->obj, NULL, &o);
	/* xrcd->lock: the registrations; a mutex, the skb does not sleep. */
	mutex_lock(&xrcd->lock);
	if (list_empty(&qp->xrcd_entry) || !sxrc_nl_xrcqp_shown(st, qp))
		goto out;
	hdr = sxrc_nl_put_hdr(skb, cb, qp->obj.ctx->dev, SXRC_NL_RES_XRCQP);
	if (!hdr) {
		ret = -EMSGSIZE;
		goto out;
	}
	/* A registrant of another uid is not told who created the QP. */
	ret = (sxrc_nl_visible(st, qp->obj.ctx) &&
	       sxrc_nl_put_owner(skb, qp->obj.ctx)) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_QPN, o.qpn) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_QP_TYPE, o.qp_type) ||
	      nla_put_u32(skb, SXRC_NL_ATTR_QP_STATE, o.qp_state) ||
	      nla_put_u64_64bit(skb, SXRC_NL_ATTR_INODE,
				xrcd->inode ? xrcd->inode->i_ino : 0,
				SXRC_NL_ATTR_PAD) ||
	      sxrc_nl_put_stats(skb, o.stats) ||
	      sxrc_nl_put_regs(skb, st, qp);
	ret = sxrc_nl_end(skb, hdr, ret);
out:
	mutex_unlock(&xrcd->lock);
	return ret;
}

/* XRC receive QPs: in no handle table, found by number on the device. */
static int sxrc_nl_dump_xrcqps(struct sk_buff *skb,
			       struct netlink_callback *cb,
			       struct sxrc_dev *dev)
{
	struct sxrc_nl_dump *st = sxrc_nl_state(cb);
	unsigned long index = st->obj_next;
	struct sxrc_qp *qp;
	int ret;

	for (;;) {
		/* RCU: QPs are freed after a grace period. */
		rcu_read_lock();
		xa_for_each_start(&dev->qps, index, qp, index) {
			if (qp->type == SXRC_QPT_XRC_RECV &&
			    kref_get_unless_zero(&qp->obj.ref))
				break;
		}
		rcu_read_unlock();
		if (!qp)
			return 0;
		ret = sxrc_nl_fill_xrcqp(skb, cb, qp);
		sxrc_obj_drop(&qp->obj);
		if (ret)
			return ret;
		st->obj_next = ++index;
	}
}

int sxrc_nl_start(struct netlink_callback *cb)
{
	struct sxrc_nl_dump *st = sxrc_nl_state(cb);
	struct nlattr **attrs = sxrc_genl_dump_attrs(cb);

	memset(st, 0, sizeof(*st));
	st->admin = netlink_capable(cb->skb, CAP_SYS_ADMIN);
	st->euid = current_euid();
	if (attrs[SXRC_NL_ATTR_RES_CLASS])
		st->filter_class = nla_get_u32(attrs[SXRC_NL_ATTR_RES_CLASS]);
	if (attrs[SXRC_NL_ATTR_PID])
		st->pid = nla_get_u32(attrs[SXRC_NL_ATTR_PID]);
	st->class = st->filter_class ? st->filter_class : SXRC_NL_RES_DEV;
	return 0;
}

int sxrc_nl_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct sxrc_nl_dump *st = sxrc_nl_state(cb);
	struct sxrc_dev *dev;
	int ret = 0;

	while (st->class < __SXRC_NL_RES_MAX) {
		for (; st->dev < SXRC_MAX_DEVICES; st->dev++) {
			dev = sxrc_dev_get(st->dev);
			if (!dev)
				continue;
			if (st->class == SXRC_NL_RES_DEV)
				ret = sxrc_nl_fill_dev(skb, cb, dev);
			else if (st->class == SXRC_NL_RES_XRCQP)
				ret = sxrc_nl_dump_xrcqps(skb, cb, dev);
			else
				ret = sxrc_nl_dump_ctxs(skb, cb, dev);
			sxrc_dev_put(dev);
			if (ret)
				goto out;
			st->ctx_next = 0;
			st->obj_next = 0;
		}
		if (st->filter_class)
			break;
		st->class++;
		st->dev = 0;
	}
out:
	/* A message that does not fit an empty skb never will. */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ? ret : skb->len;
}
