// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the data path.
 *
 * A send queue runs when its owner rings the doorbell, in the owner's
 * own context: each WQE is read from the ring (once, into kernel
 * memory), checked, and executed against the pinned pages of the local
 * and the remote MRs, then completed.  Nothing is "sent": the responder's
 * side of the operation (consuming a receive WQE, checking an rkey,
 * writing its CQE) happens right there, under the responder's locks.
 *
 * A responder takes a message only from the QP it is connected to, in
 * PSN sequence (UD excepted: Q_Keys): anything else is dropped as a wire
 * would drop it, and the requester sees a lost message.
 *
 * When the responder cannot take a message yet (no receive posted: RNR;
 * QP not there, not ready, or not its peer: a lost packet), the head WQE
 * waits as the IBTA says it would on a wire: a delayed work item retries
 * it after the responder's RNR timer or the requester's ack timeout, up
 * to rnr_retry and retry_cnt times, and the queue goes on from there by
 * itself.
 *
 * One system call does bounded work: a doorbell executes at most
 * SXRC_SQ_BUDGET_WQES WQEs or SXRC_SQ_BUDGET_BYTES bytes and leaves the
 * rest to the QP's work item (on sxrc_wq); copies yield the CPU as they
 * go and stop when the poster is killed or the QP destroyed.
 *
 * Locks, outermost first, as Documentation/design.rst ("Locks") lists
 * them: qp->sq_mutex (the requester's send queue), dev->mcast_lock (UD
 * multicast), xrcd->lock (an XRC receive QP's registrations, for its
 * events), the responder's rq_lock or srq->lock, mw->lock, mr->lock,
 * qp->lock, cq->lock, channel->lock, ctx->ev_lock, dev->users_lock.
 * Nothing is held while a copy waits for others to leave an MR
 * (invalidation, unbinding a window).  An ODP region's odp_lock (two at
 * most, in address order) is held around one page of a copy and
 * nothing else; its pages are faulted in with no spinlock held (odp.c).
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_trace.h"

#define SXRC_GRH_SIZE		40
#define SXRC_UD_MTU		4096
#define SXRC_MCAST_QPN		0xffffffU
#define SXRC_MAX_MSG		BIT(31)

/* Work one doorbell (or one run of the work item) does at most. */
#define SXRC_SQ_BUDGET_WQES	256
#define SXRC_SQ_BUDGET_BYTES	(16ULL << 20)
/* Bytes a copy moves between two looks at the scheduler and signals. */
#define SXRC_COPY_CHUNK		BIT(20)

/* The workqueue of retries and of the work a doorbell left over. */
static struct workqueue_struct *sxrc_wq;

/* ------------------------------------------------------------------
 * Memory: scatter/gather lists resolved to pinned pages
 */

/**
 * struct sxrc_seg - one resolved scatter/gather element
 * @umem: pinned pages (a reference is held), or NULL for @kbuf
 * @kbuf: kernel memory (inline data, a GRH), when @umem is NULL
 * @off: byte offset into @umem from its page-aligned start
 * @len: bytes
 */
struct sxrc_seg {
	struct sxrc_umem *umem;
	void *kbuf;
	u64 off;
	u32 len;
};

/*
 * A resolved list; @total is the sum of the lengths; @fault is set when
 * an ODP page of it could not be faulted in.
 */
struct sxrc_sgl {
	struct sxrc_seg seg[SXRC_MAX_SGE + 1];
	u32 n;
	u64 total;
	bool fault;
};

/*
 * Scratch space of a send queue: too big for the stack, and allocated
 * once per QP (lazily, under sq_mutex) rather than per doorbell:
 * kernels with init_on_alloc would clear it on every call.
 */
struct sxrc_scratch {
	struct sxrc_send_wqe wqe;
	struct sxrc_sge sge[SXRC_MAX_SGE];
	struct sxrc_recv_wqe rwqe;
	struct sxrc_sge rsge[SXRC_MAX_SGE];
	struct sxrc_sgl local;		/* the WQE's own list */
	struct sxrc_sgl peer;		/* the receive WQE it lands in */
	struct sxrc_sgl remote;		/* the rkey range of RDMA/atomics */
	struct sxrc_srq *xsrq;		/* XRC: the SRQ the WQE names */
	struct sxrc_umem *inv_umem;	/* invalidated: wait for its copies */
	struct sxrc_qp *qp;		/* the requester running this */
	u8 grh[SXRC_GRH_SIZE];
};

/*
 * Where a message to @dest lands: an XRC receive QP delivers into the
 * SRQ the sender named (and its CQ), other QPs into their SRQ or RQ.
 * Receive WQEs are checked against the PD of their queue.
 */
static struct sxrc_srq *sxrc_recv_srq(struct sxrc_qp *dest,
				      struct sxrc_scratch *s)
{
	return dest->type == SXRC_QPT_XRC_RECV ? s->xsrq : dest->srq;
}

static struct sxrc_cq *sxrc_recv_cq(struct sxrc_qp *dest,
				    struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);

	return srq && srq->cq ? srq->cq : dest->recv_cq;
}

static struct sxrc_pd *sxrc_recv_pd(struct sxrc_qp *dest,
				    struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);

	return srq ? srq->pd : dest->pd;
}

/*
 * The PD that remote access (RDMA, atomics, SEND_WITH_INV) to @dest is
 * checked against: the QP's own, with or without an SRQ; an XRC receive
 * QP has none, and uses the PD of the XRC SRQ the message names.
 */
static struct sxrc_pd *sxrc_remote_pd(struct sxrc_qp *dest,
				      struct sxrc_scratch *s)
{
	return dest->type == SXRC_QPT_XRC_RECV ? s->xsrq->pd : dest->pd;
}

/* Reliable transports retry and report; the others drop silently. */
static bool sxrc_reliable(u32 type)
{
	return type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND ||
	       type == SXRC_QPT_XRC_RECV;
}

static void sxrc_sgl_init(struct sxrc_sgl *sgl)
{
	sgl->n = 0;
	sgl->total = 0;
	sgl->fault = false;
}

static void sxrc_sgl_release(struct sxrc_sgl *sgl)
{
	u32 i;

	for (i = 0; i < sgl->n; i++)
		if (sgl->seg[i].umem)
			sxrc_umem_unuse(sgl->seg[i].umem);
	sgl->n = 0;
	sgl->total = 0;
}

static void sxrc_sgl_add_kbuf(struct sxrc_sgl *sgl, void *buf, u32 len)
{
	sgl->seg[sgl->n++] = (struct sxrc_seg){ .kbuf = buf, .len = len };
	sgl->total += len;
}

/* Look up an MR key of @dev under RCU; returns the MR with a reference. */
struct sxrc_mr *sxrc_mr_lookup(struct sxrc_dev *dev, u32 key)
{
	struct sxrc_mr *mr;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, key >> 8);
	mr = entry && !xa_pointer_tag(entry) ? entry : NULL;
	if (mr && (mr->key != key || !kref_get_unless_zero(&mr->obj.ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/*
 * The window whose key has the index of @key, with a reference; its
 * current key is compared under its lock by the caller.
 */
static struct sxrc_mw *sxrc_mw_lookup(struct sxrc_dev *dev, u32 key)
{
	struct sxrc_mw *mw = NULL;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mrs, key >> 8);
	if (entry && xa_pointer_tag(entry) == SXRC_KEY_MW) {
		mw = xa_untag_pointer(entry);
		if (!kref_get_unless_zero(&mw->obj.ref))
			mw = NULL;
	}
	rcu_read_unlock();
	return mw;
}

/* [addr, addr + len) of @mr into @seg; the caller holds mr->lock. */
static int sxrc_mr_seg_locked(struct sxrc_mr *mr, u64 addr, u32 len,
			      struct sxrc_seg *seg)
{
	u64 end;

	if (mr->invalid || !mr->umem ||
	    check_add_overflow(addr, (u64)len, &end) || addr < mr->iova ||
	    end > mr->iova + mr->umem->length)
		return -EACCES;
	seg->umem = mr->umem;
	sxrc_umem_use(seg->umem);
	seg->kbuf = NULL;
	seg->off = addr - mr->iova + offset_in_page(mr->umem->addr);
	seg->len = len;
	return 0;
}

/*
 * An ODP range must be mapped (and writable for @access that writes)
 * when it is resolved: an access error otherwise, as for a bad key.
 */
static int sxrc_seg_odp_check(struct sxrc_seg *seg, u32 access)
{
	bool write = access & (SXRC_ACCESS_LOCAL_WRITE |
			       SXRC_ACCESS_REMOTE_WRITE |
			       SXRC_ACCESS_REMOTE_ATOMIC);

	if (!seg->umem->odp ||
	    !sxrc_odp_prefault(seg->umem, seg->off, seg->len, write, true))
		return 0;
	sxrc_umem_unuse(seg->umem);
	return -EACCES;
}

/**
 * sxrc_mr_range - resolve [addr, addr + len) of the MR @key names
 * @dev: the device the key belongs to
 * @key: lkey or rkey
 * @pd: the PD the MR must be in; NULL for any (an XRC receive QP has no
 *	PD: RDMA to it is checked against the key's rights alone)
 * @access: SXRC_ACCESS_* the MR must grant
 * @addr: start, in the MR's iova space
 * @len: bytes
 * @seg: filled in, with a reference on the pages and counted as a user
 *	of them (sxrc_sgl_release() ends both)
 *
 * Return: 0, or -EACCES when anything does not match.
 */
static int sxrc_mr_range(struct sxrc_dev *dev, u32 key, struct sxrc_pd *pd,
			 u32 access, u64 addr, u32 len, struct sxrc_seg *seg)
{
	struct sxrc_mr *mr = sxrc_mr_lookup(dev, key);
	int ret = -EACCES;

	if (!mr)
		return -EACCES;
	spin_lock(&mr->lock);
	if ((!pd || mr->pd == pd) && (mr->access & access) == access)
		ret = sxrc_mr_seg_locked(mr, addr, len, seg);
	spin_unlock(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ret ? ret : sxrc_seg_odp_check(seg, access);
}

/**
 * sxrc_mw_range - resolve [addr, addr + len) of the window @mw
 * @mw: the window the rkey's index names (the reference is dropped)
 * @key: the rkey
 * @dest: the responder QP the access arrived on
 * @pd: the PD remote access to @dest is checked against
 * @access: SXRC_ACCESS_REMOTE_* the window must grant
 * @addr: start, in the MR's iova space
 * @len: bytes
 * @seg: filled in as by sxrc_mr_range()
 *
 * The pages are resolved under the window's lock: an unbind that took
 * it after us waits for this access (sxrc_mw_binding_release()).
 *
 * Return: 0, or -EACCES when anything does not match.
 */
static int sxrc_mw_range(struct sxrc_mw *mw, u32 key, struct sxrc_qp *dest,
			 struct sxrc_pd *pd, u32 access, u64 addr, u32 len,
			 struct sxrc_seg *seg)
{
	int ret = -EACCES;
	u64 end;

	spin_lock(&mw->lock);
	if (!mw->mr || mw->rkey != key || mw->pd != pd ||
	    (mw->type == SXRC_MW_TYPE_2 && mw->qp != dest) ||
	    (mw->access & access) != access ||
	    check_add_overflow(addr, (u64)len, &end) || addr < mw->addr ||
	    end > mw->addr + mw->length)
		goto out;
	spin_lock(&mw->mr->lock);
	ret = sxrc_mr_seg_locked(mw->mr, addr, len, seg);
	spin_unlock(&mw->mr->lock);
out:
	spin_unlock(&mw->lock);
	sxrc_obj_drop(&mw->obj);
	return ret ? ret : sxrc_seg_odp_check(seg, access);
}

/* Resolve a WQE's local scatter/gather list. */
static int sxrc_local_sgl(struct sxrc_qp *qp, const struct sxrc_sge *sge,
			  u32 n, u32 access, struct sxrc_sgl *sgl)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!sge[i].length)
			continue;
		if (sxrc_mr_range(dev, sge[i].lkey, qp->pd, access,
				  sge[i].addr, sge[i].length,
				  &sgl->seg[sgl->n]))
			return -EACCES;
		sgl->total += sge[i].length;
		sgl->n++;
	}
	return 0;
}

/* Which run of @umem holds page @pgidx; @hint is where to look first. */
static unsigned long sxrc_find_run(struct sxrc_umem *umem,
				   unsigned long pgidx, unsigned long hint)
{
	unsigned long lo = 0, hi = umem->nruns;
	struct sxrc_page_run *run;

	if (hint < umem->nruns) {
		run = sxrc_umem_run(umem, hint);
		if (pgidx >= run->pgoff && pgidx < run->pgoff + run->npages)
			return hint;
		if (hint + 1 < umem->nruns) {
			run = sxrc_umem_run(umem, hint + 1);
			if (pgidx >= run->pgoff &&
			    pgidx < run->pgoff + run->npages)
				return hint + 1;
		}
	}
	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (sxrc_umem_run(umem, mid)->pgoff <= pgidx)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/**
 * struct sxrc_cursor - a position in a resolved list
 * @sgl: the list
 * @i: current element
 * @pos: bytes of it already passed
 * @run: run of the current element's pages last used (a search hint)
 * @win: pages of an ODP element faulted in (odp.c)
 */
struct sxrc_cursor {
	struct sxrc_sgl *sgl;
	u32 i;
	u64 pos;
	unsigned long run;
	struct sxrc_odp_win win;
};

static void sxrc_cursor_init(struct sxrc_cursor *c, struct sxrc_sgl *sgl,
			     u64 skip)
{
	c->sgl = sgl;
	c->i = 0;
	c->pos = 0;
	c->run = 0;
	c->win.umem = NULL;
	while (c->i < sgl->n && skip >= sgl->seg[c->i].len) {
		skip -= sgl->seg[c->i].len;
		c->i++;
	}
	c->pos = skip;
}

/*
 * Must a copy for @qp stop?  Its poster was killed (a doorbell runs in
 * the poster's own context), or the QP is being destroyed (its work item
 * runs it).
 */
static bool sxrc_copy_aborted(struct sxrc_qp *qp)
{
	return fatal_signal_pending(current) || READ_ONCE(qp->dead);
}

/* The element at the cursor, past those it is done with. */
static struct sxrc_seg *sxrc_cursor_seg(struct sxrc_cursor *c)
{
	while (c->pos == c->sgl->seg[c->i].len) {
		c->i++;
		c->pos = 0;
		c->run = 0;
	}
	return &c->sgl->seg[c->i];
}

/*
 * ODP: make @c's window hold the page at the cursor, faulted for write
 * if @write, with no region locked.  *@odp is the region, or NULL when
 * the element is no ODP one.  -EFAULT (the list is marked) when the page
 * is not mapped, -EINTR when the caller was killed.
 */
static int sxrc_cursor_odp(struct sxrc_cursor *c, bool write,
			   struct sxrc_umem **odp)
{
	struct sxrc_seg *seg = sxrc_cursor_seg(c);
	u64 byte = seg->off + c->pos;
	unsigned long pgidx = byte >> PAGE_SHIFT;
	int ret;

	*odp = NULL;
	if (!seg->umem || !seg->umem->odp)
		return 0;
	*odp = seg->umem;
	if (c->win.umem == seg->umem && pgidx >= c->win.start &&
	    pgidx < c->win.start + c->win.n)
		return 0;
	ret = sxrc_odp_fault(&c->win, seg->umem, byte, seg->off + seg->len,
			     write);
	if (ret == -EFAULT)
		c->sgl->fault = true;
	return ret;
}

/*
 * Fault in what the next step of @dst and @src (either may be NULL)
 * touches and lock the ODP regions involved with their windows still
 * valid: the step may map and copy until sxrc_odp_unlock(*@du, *@su).
 */
static int sxrc_cursor_odp_lock(struct sxrc_cursor *dst,
				struct sxrc_cursor *src, struct sxrc_qp *qp,
				struct sxrc_umem **du, struct sxrc_umem **su)
{
	int ret;

	*du = NULL;
	*su = NULL;
	for (;;) {
		ret = dst ? sxrc_cursor_odp(dst, true, du) : 0;
		if (!ret && src)
			ret = sxrc_cursor_odp(src, false, su);
		if (ret)
			return ret;
		sxrc_odp_lock(*du, *su);
		if ((!*du || sxrc_odp_valid(&dst->win)) &&
		    (!*su || sxrc_odp_valid(&src->win)))
			return 0;
		/* Invalidated since: fault again. */
		sxrc_odp_unlock(*du, *su);
		if (dst)
			dst->win.umem = NULL;
		if (src)
			src->win.umem = NULL;
		if (sxrc_copy_aborted(qp))
			return -EINTR;
	}
}

/*
 * Map the bytes at the cursor: returns an address (kmap_local'ed when
 * *@page is set) and, in *@avail, how many bytes follow contiguously.
 */
static void *sxrc_cursor_map(struct sxrc_cursor *c, u32 *avail,
			     struct page **page)
{
	struct sxrc_seg *seg = sxrc_cursor_seg(c);
	struct sxrc_page_run *run;
	unsigned long pgidx;
	u64 byte;

	*avail = seg->len - c->pos;
	if (!seg->umem) {
		*page = NULL;
		return seg->kbuf + c->pos;
	}
	byte = seg->off + c->pos;
	*avail = min_t(u64, *avail, PAGE_SIZE - offset_in_page(byte));
	if (seg->umem->kaddr) {
		/* A dma-buf, mapped whole while the umem lives. */
		*page = NULL;
		return seg->umem->kaddr + byte;
	}
	pgidx = byte >> PAGE_SHIFT;
	if (seg->umem->odp) {
		/* Checked valid by sxrc_cursor_odp_lock()'s caller. */
		*page = sxrc_odp_page(&c->win, pgidx);
		return kmap_local_page(*page) + offset_in_page(byte);
	}
	c->run = sxrc_find_run(seg->umem, pgidx, c->run);
	run = sxrc_umem_run(seg->umem, c->run);
	*page = nth_page(run->page, pgidx - run->pgoff);
	return kmap_local_page(*page) + offset_in_page(byte);
}

static void sxrc_cursor_unmap(void *addr, struct page *page)
{
	if (page)
		kunmap_local(addr);
}

/*
 * The bulk copy.  On x86-64 a string move of quadwords: as fast as the
 * kernel's memcpy() on hardware, and several times faster where a byte
 * string move (what memcpy() picks on ERMS/FSRM CPUs) is slow, such as
 * under emulation.
 */
static void sxrc_memcpy(void *dst, const void *src, size_t len)
{
#ifdef CONFIG_X86_64
	size_t qwords = len / 8;

	if (qwords >= 8) {
		asm volatile("rep movsq"
			     : "+D" (dst), "+S" (src), "+c" (qwords)
			     : : "memory");
		len &= 7;
	}
#endif
	memcpy(dst, src, len);
}

/*
 * Copy @len bytes from @src to @dst; both must hold that many.  Every
 * SXRC_COPY_CHUNK bytes the copy yields the CPU, and stops if @qp (the
 * requester) says so: -EINTR, with part of the data moved.  -EFAULT
 * when an ODP page is no longer mapped (the list's @fault says which).
 */
static int sxrc_copy(struct sxrc_cursor *dst, struct sxrc_cursor *src,
		     u64 len, struct sxrc_qp *qp)
{
	u32 chunk = 0;
	int ret;

	while (len) {
		struct sxrc_umem *du, *su;
		struct page *dpage, *spage;
		u32 davail, savail, n;
		void *d, *s;

		ret = sxrc_cursor_odp_lock(dst, src, qp, &du, &su);
		if (ret)
			return ret;
		d = sxrc_cursor_map(dst, &davail, &dpage);
		s = sxrc_cursor_map(src, &savail, &spage);
		n = min3((u64)davail, (u64)savail, len);
		sxrc_memcpy(d, s, n);
		sxrc_cursor_unmap(s, spage);
		sxrc_cursor_unmap(d, dpage);
		sxrc_odp_unlock(du, su);
		dst->pos += n;
		src->pos += n;
		len -= n;
		chunk += n;
		if (chunk >= SXRC_COPY_CHUNK && len) {
			chunk = 0;
			cond_resched();
			if (sxrc_copy_aborted(qp))
				return -EINTR;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------
 * Queue pairs: lookup, errors, flushing
 */

/* Count on the QP and on its device. */
static void sxrc_count(struct sxrc_qp *qp, enum sxrc_stat stat, s64 n)
{
	atomic64_add(n, &qp->stats.c[stat]);
	atomic64_add(n, &qp->obj.ctx->dev->stats.c[stat]);
}

/* The QP @qpn of @dev, with a reference, or NULL. */
static struct sxrc_qp *sxrc_qp_lookup(struct sxrc_dev *dev, u32 qpn)
{
	struct sxrc_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qps, qpn);
	if (qp && !kref_get_unless_zero(&qp->obj.ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

static bool sxrc_qp_can_receive(struct sxrc_qp *qp)
{
	u32 state = READ_ONCE(qp->attr.qp_state);

	return state == SXRC_QPS_RTR || state == SXRC_QPS_RTS ||
	       state == SXRC_QPS_SQD;
}

static u32 sxrc_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
		return SXRC_WC_OP_RDMA_WRITE;
	case SXRC_WR_RDMA_READ:
		return SXRC_WC_OP_RDMA_READ;
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
		return SXRC_WC_OP_COMP_SWAP;
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		return SXRC_WC_OP_FETCH_ADD;
	case SXRC_WR_LOCAL_INV:
		return SXRC_WC_OP_LOCAL_INV;
	case SXRC_WR_BIND_MW:
		return SXRC_WC_OP_BIND_MW;
	default:
		return SXRC_WC_OP_SEND;
	}
}

/*
 * Complete every WQE of @wq the kernel has not consumed with
 * WR_FLUSH_ERR.  The caller serialises consumers of @wq.
 */
static void sxrc_wq_flush(struct sxrc_qp *qp, struct sxrc_wq *wq,
			  struct sxrc_cq *cq, bool send)
{
	u32 prod;

	if (!wq->ring)
		return;
	prod = sxrc_ring_prod(wq->ring);
	if (sxrc_ring_count(wq->ring, prod, wq->cons) < 0)
		wq->cons = prod;	/* corrupt: nothing sane to complete */

	for (; wq->cons != prod; wq->cons++) {
		void *slot = sxrc_ring_slot(wq->ring, wq->cons);
		struct sxrc_cqe cqe = {
			.status = SXRC_WC_WR_FLUSH_ERR,
			.qp_num = qp->qpn,
		};

		if (send) {
			const struct sxrc_send_wqe *wqe = slot;

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = sxrc_wc_opcode(READ_ONCE(wqe->opcode));
		} else {
			const struct sxrc_recv_wqe *wqe = slot;

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = SXRC_WC_OP_RECV;
		}
		sxrc_cq_post(cq, &cqe);
	}
	sxrc_ring_publish_cons(wq->ring, wq->cons);
}

/* Flush the receive queue of a QP in the error state. */
void sxrc_rq_flush(struct sxrc_qp *qp)
{
	spin_lock(&qp->rq_lock);
	sxrc_wq_flush(qp, &qp->rq, qp->recv_cq, false);
	spin_unlock(&qp->rq_lock);
}

/* Flush both queues of a QP in the error state; sq_mutex is held. */
void sxrc_qp_flush_locked(struct sxrc_qp *qp)
{
	lockdep_assert_held(&qp->sq_mutex);
	qp->stalled = false;
	sxrc_wq_flush(qp, &qp->sq, qp->send_cq, true);
	sxrc_rq_flush(qp);
}

/*
 * Move @qp to the error state.  Returns true if this call did it.  The
 * rings are marked so that the library rings the doorbell after posting,
 * to have late receives flushed too.
 */
static bool sxrc_qp_set_error(struct sxrc_qp *qp)
{
	bool changed = false;

	spin_lock(&qp->lock);
	if (qp->attr.qp_state != SXRC_QPS_ERR) {
		WRITE_ONCE(qp->attr.qp_state, SXRC_QPS_ERR);
		qp->attr.cur_qp_state = SXRC_QPS_ERR;
		changed = true;
	}
	spin_unlock(&qp->lock);
	if (changed) {
		sxrc_qp_mark_error(qp);
		sxrc_count(qp, SXRC_STAT_ERRORS, 1);
	}
	return changed;
}

/* Tell the library, through the rings, that the QP is in error. */
void sxrc_qp_mark_error(struct sxrc_qp *qp)
{
	if (qp->sq.ring)
		WRITE_ONCE(sxrc_ring_hdr(qp->sq.ring)->flags, SXRC_RING_ERROR);
	if (qp->rq.ring)
		WRITE_ONCE(sxrc_ring_hdr(qp->rq.ring)->flags, SXRC_RING_ERROR);
}

/* Run (or flush) @qp's send queue from its work item, @delay from now. */
static void sxrc_qp_schedule(struct sxrc_qp *qp, unsigned long delay)
{
	spin_lock(&qp->lock);
	if (!qp->dead)
		mod_delayed_work(sxrc_wq, &qp->retry_work, delay);
	spin_unlock(&qp->lock);
}

void sxrc_qp_kick(struct sxrc_qp *qp)
{
	sxrc_qp_schedule(qp, 0);
}

/*
 * A responder QP failed an incoming request (RC): it enters the error
 * state, its owner hears @event, and its queues are flushed (the send
 * queue from its own work item: its mutex may be held by its own
 * doorbell right now, sending to us).
 */
static void sxrc_responder_error(struct sxrc_qp *dest, u32 event)
{
	if (!sxrc_qp_set_error(dest))
		return;
	sxrc_obj_event(&dest->obj, event);
	sxrc_rq_flush(dest);
	sxrc_qp_kick(dest);
}

/* ------------------------------------------------------------------
 * The responder's side
 */

/* The receive WQE a message consumes, or an error to report. */
enum sxrc_pop {
	SXRC_POP_OK,
	SXRC_POP_EMPTY,		/* RNR */
	SXRC_POP_BAD,		/* malformed WQE: consumed */
	SXRC_POP_CORRUPT,	/* corrupt ring */
};

static enum sxrc_pop sxrc_recv_pop(struct sxrc_qp *dest,
				   struct sxrc_scratch *s)
{
	struct sxrc_srq *srq = sxrc_recv_srq(dest, s);
	struct sxrc_wq *wq = srq ? &srq->wq : &dest->rq;
	spinlock_t *lock = srq ? &srq->lock : &dest->rq_lock;
	enum sxrc_pop ret = SXRC_POP_OK;
	bool limit_hit = false;
	u32 prod, n;
	int pending;
	void *slot;

	spin_lock(lock);
	prod = sxrc_ring_prod(wq->ring);
	pending = sxrc_ring_count(wq->ring, prod, wq->cons);
	if (!pending) {
		ret = SXRC_POP_EMPTY;
		goto out;
	}
	if (pending < 0) {
		ret = SXRC_POP_CORRUPT;
		goto out;
	}
	slot = sxrc_ring_slot(wq->ring, wq->cons);
	memcpy(&s->rwqe, slot, sizeof(s->rwqe));
	n = s->rwqe.num_sge;
	if (n > wq->max_sge) {
		ret = SXRC_POP_BAD;
	} else {
		memcpy(s->rsge, slot + sizeof(s->rwqe), n * sizeof(*s->rsge));
		s->rwqe.num_sge = n;
	}
	wq->cons++;
	sxrc_ring_publish_cons(wq->ring, wq->cons);
	if (srq && srq->limit && prod - wq->cons < srq->limit) {
		srq->limit = 0;
		limit_hit = true;
	}
out:
	spin_unlock(lock);
	if (limit_hit)
		sxrc_obj_event(&srq->obj, SXRC_EVENT_SRQ_LIMIT_REACHED);
	return ret;
}

/* Complete the receive WQE just taken for @dest in error. */
static void sxrc_recv_error(struct sxrc_qp *dest, struct sxrc_scratch *s,
			    u32 status)
{
	struct sxrc_cqe cqe = {
		.wr_id = s->rwqe.wr_id,
		.status = status,
		.opcode = SXRC_WC_OP_RECV,
		.qp_num = dest->qpn,
	};

	sxrc_cq_post(sxrc_recv_cq(dest, s), &cqe);
}

/* How the responder took a message. */
enum sxrc_resp {
	SXRC_RESP_OK,
	SXRC_RESP_RNR,		/* no receive WQE: retry later */
	SXRC_RESP_DROPPED,	/* UC/UD: silently gone, sender done */
	SXRC_RESP_ERR,		/* *status tells the requester */
};

/*
 * Take the next receive WQE of @dest for a message of @need bytes and
 * resolve its scatter list into s->peer.  Every failure is completed on
 * the responder's side here; the requester learns it through the return
 * value and *@status.
 */
static enum sxrc_resp sxrc_recv_take(struct sxrc_qp *dest,
				     struct sxrc_scratch *s, u64 need,
				     u32 *status)
{
	struct sxrc_pd *pd = sxrc_recv_pd(dest, s);
	bool ud = dest->type == SXRC_QPT_UD;
	bool rc = sxrc_reliable(dest->type);
	u32 i;

	sxrc_sgl_init(&s->peer);
	switch (sxrc_recv_pop(dest, s)) {
	case SXRC_POP_EMPTY:
		return rc ? SXRC_RESP_RNR : SXRC_RESP_DROPPED;
	case SXRC_POP_CORRUPT:
		goto fatal;
	case SXRC_POP_BAD:
		sxrc_recv_error(dest, s, SXRC_WC_LOC_QP_OP_ERR);
		goto fatal;
	case SXRC_POP_OK:
		break;
	}

	for (i = 0; i < s->rwqe.num_sge; i++) {
		struct sxrc_sge *sge = &s->rsge[i];

		if (!sge->length)
			continue;
		if (sxrc_mr_range(dest->obj.ctx->dev, sge->lkey, pd,
				  SXRC_ACCESS_LOCAL_WRITE, sge->addr,
				  sge->length, &s->peer.seg[s->peer.n])) {
			sxrc_sgl_release(&s->peer);
			sxrc_recv_error(dest, s, SXRC_WC_LOC_PROT_ERR);
			if (ud)
				return SXRC_RESP_DROPPED;
			goto fatal;
		}
		s->peer.total += sge->length;
		s->peer.n++;
	}
	if (need > s->peer.total) {
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, SXRC_WC_LOC_LEN_ERR);
		if (ud)
			return SXRC_RESP_DROPPED;
		sxrc_responder_error(dest, SXRC_EVENT_QP_REQ_ERR);
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return rc ? SXRC_RESP_ERR : SXRC_RESP_DROPPED;
	}
	return SXRC_RESP_OK;

fatal:
	sxrc_responder_error(dest, SXRC_EVENT_QP_FATAL);
	*status = SXRC_WC_REM_OP_ERR;
	return rc ? SXRC_RESP_ERR : SXRC_RESP_DROPPED;
}

/* The data is in place: complete the receive WQE taken above. */
static void sxrc_recv_done(struct sxrc_qp *dest, struct sxrc_scratch *s,
			   struct sxrc_cqe *rcqe, u32 byte_len)
{
	sxrc_sgl_release(&s->peer);
	rcqe->wr_id = s->rwqe.wr_id;
	rcqe->status = SXRC_WC_SUCCESS;
	rcqe->qp_num = dest->qpn;
	rcqe->byte_len = byte_len;
	sxrc_cq_post(sxrc_recv_cq(dest, s), rcqe);
	sxrc_count(dest, SXRC_STAT_RECV_WQES, 1);
	sxrc_count(dest, SXRC_STAT_RECV_BYTES, byte_len);
}

/*
 * Copy all of @src to the start of @dst, after skipping @skip bytes, for
 * the requester @qp: 0, or -EINTR if the copy stopped (sxrc_copy()).
 */
static int sxrc_copy_sgl(struct sxrc_sgl *dst, u64 skip, struct sxrc_sgl *src,
			 struct sxrc_qp *qp)
{
	struct sxrc_cursor dc, sc;

	sxrc_cursor_init(&dc, dst, skip);
	sxrc_cursor_init(&sc, src, 0);
	return sxrc_copy(&dc, &sc, src->total, qp);
}

/*
 * May the window @key of @dev be invalidated in @pd (through @qp for a
 * SEND_WITH_INV, any QP for a LOCAL_INV: NULL)?  Only a bound type 2
 * window may.  The caller holds mw->lock.
 */
static bool sxrc_mw_can_invalidate(struct sxrc_mw *mw, struct sxrc_pd *pd,
				   struct sxrc_qp *qp, u32 key)
{
	lockdep_assert_held(&mw->lock);
	return mw->type == SXRC_MW_TYPE_2 && mw->mr && mw->rkey == key &&
	       mw->pd == pd && (!qp || mw->qp == qp);
}

/* Can the MR or window @key of @dev in @pd be invalidated? */
static bool sxrc_can_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
				struct sxrc_qp *qp, u32 key)
{
	struct sxrc_mr *mr = sxrc_mr_lookup(dev, key);
	struct sxrc_mw *mw;
	bool ok;

	if (!mr) {
		mw = sxrc_mw_lookup(dev, key);
		if (!mw)
			return false;
		spin_lock(&mw->lock);
		ok = sxrc_mw_can_invalidate(mw, pd, qp, key);
		spin_unlock(&mw->lock);
		sxrc_obj_drop(&mw->obj);
		return ok;
	}
	spin_lock(&mr->lock);
	/* An MR under bound windows stays valid (as rxe does). */
	ok = mr->pd == pd && !mr->invalid && !mr->nmw;
	spin_unlock(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ok;
}

/*
 * Invalidate the MR @key of @dev if it is in @pd (SEND_WITH_INV,
 * LOCAL_INV).  Copies already under way on its pages are waited for
 * before the WQE completes (sxrc_wqe_execute(), once this requester let
 * go of its own lists): s->inv_umem holds them meanwhile.
 */
static int sxrc_mw_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
			      struct sxrc_qp *qp, u32 key,
			      struct sxrc_scratch *s)
{
	struct sxrc_mw *mw = sxrc_mw_lookup(dev, key);
	struct sxrc_mw_binding b = {};
	int ret = -EACCES;

	if (!mw)
		return -EACCES;
	spin_lock(&mw->lock);
	if (sxrc_mw_can_invalidate(mw, pd, qp, key)) {
		sxrc_mw_unbind_locked(mw, &b);
		ret = 0;
	}
	spin_unlock(&mw->lock);
	/* The pages are waited for once this requester let go of its own. */
	s->inv_umem = b.umem;
	b.umem = NULL;
	sxrc_mw_binding_release(&b);
	sxrc_obj_drop(&mw->obj);
	return ret;
}

static int sxrc_invalidate(struct sxrc_dev *dev, struct sxrc_pd *pd,
			   struct sxrc_qp *qp, u32 key, struct sxrc_scratch *s)
{
	struct sxrc_mr *mr = sxrc_mr_lookup(dev, key);
	int ret = -EACCES;

	if (!mr)
		return sxrc_mw_invalidate(dev, pd, qp, key, s);
	spin_lock(&mr->lock);
	if (mr->pd == pd && !mr->invalid && !mr->nmw) {
		mr->invalid = true;
		if (mr->umem) {
			kref_get(&mr->umem->ref);
			s->inv_umem = mr->umem;
		}
		ret = 0;
	}
	spin_unlock(&mr->lock);
	sxrc_obj_drop(&mr->obj);
	return ret;
}

/* ------------------------------------------------------------------
 * The requester's side
 */

/* The device an address vector leads to, on this host. */
static struct sxrc_dev *sxrc_ah_dev(const struct sxrc_ah_attr *ah)
{
	__be64 guid;

	if (ah->is_global) {
		memcpy(&guid, &ah->dgid[8], sizeof(guid));
		return sxrc_dev_by_guid(guid);
	}
	return sxrc_dev_by_lid(ah->dlid);
}

/* A UD header as a receiver sees it in the first 40 bytes. */
static void sxrc_build_grh(struct sxrc_qp *qp, const struct sxrc_ah_attr *ah,
			   u32 len, u8 *grh)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	__be32 vtf = cpu_to_be32(6U << 28 | (u32)ah->traffic_class << 20 |
				 (ah->flow_label & 0xfffff));
	__be16 paylen = cpu_to_be16(len);

	memcpy(grh, &vtf, 4);
	memcpy(grh + 4, &paylen, 2);
	grh[6] = 0x1b;		/* next header: IBA transport */
	grh[7] = ah->hop_limit;
	memset(grh + 8, 0, 8);
	grh[8] = 0xfe;
	grh[9] = 0x80;
	memcpy(grh + 16, &dev->node_guid, 8);
	memcpy(grh + 24, ah->dgid, 16);
}

/* What became of one send WQE. */
enum sxrc_outcome {
	SXRC_DONE,		/* completed, with @status */
	SXRC_WAIT_RNR,		/* retry after the responder's RNR timer */
	SXRC_WAIT_LOST,		/* retry after the ack timeout */
	SXRC_STOPPED,		/* poster killed or QP destroyed mid-copy */
};

struct sxrc_result {
	u32 status;
	u32 byte_len;
	u8 rnr_timer;		/* the responder's, for SXRC_WAIT_RNR */
};

/* Deliver a UD message to one destination QP; failures are silent. */
static void sxrc_ud_one(struct sxrc_qp *qp, struct sxrc_qp *dest,
			struct sxrc_scratch *s, const struct sxrc_ah_attr *ah,
			u32 qkey)
{
	struct sxrc_cqe rcqe = {
		.src_qp = qp->qpn,
		.slid = sxrc_port_lid(qp->obj.ctx->dev),
		.sl = ah->sl,
		.solicited = !!(s->wqe.send_flags & SXRC_SEND_SOLICITED),
	};
	u32 status;
	int ret = 0;

	if (dest->type != SXRC_QPT_UD || !sxrc_qp_can_receive(dest) ||
	    READ_ONCE(dest->attr.qkey) != qkey)
		return;
	if (ah->is_global)
		rcqe.wc_flags |= SXRC_WC_GRH;
	if (s->wqe.opcode == SXRC_WR_SEND_WITH_IMM) {
		rcqe.wc_flags |= SXRC_WC_WITH_IMM;
		rcqe.imm_data = s->wqe.imm_data;
	}
	rcqe.opcode = SXRC_WC_OP_RECV;
	if (sxrc_recv_take(dest, s, SXRC_GRH_SIZE + s->local.total,
			   &status) != SXRC_RESP_OK)
		return;
	if (ah->is_global) {
		struct sxrc_sgl grh = { .n = 0 };

		sxrc_sgl_add_kbuf(&grh, s->grh, SXRC_GRH_SIZE);
		ret = sxrc_copy_sgl(&s->peer, 0, &grh, qp);
	}
	/* At most SXRC_UD_MTU bytes: less than a chunk. */
	if (!ret)
		ret = sxrc_copy_sgl(&s->peer, SXRC_GRH_SIZE, &s->local, qp);
	if (ret) {
		/* An ODP page gone meanwhile, or the poster killed: lost. */
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, s->peer.fault ? SXRC_WC_LOC_PROT_ERR :
					 SXRC_WC_WR_FLUSH_ERR);
		return;
	}
	sxrc_recv_done(dest, s, &rcqe, SXRC_GRH_SIZE + s->local.total);
}

static enum sxrc_outcome sxrc_exec_ud(struct sxrc_qp *qp,
				      struct sxrc_scratch *s,
				      struct sxrc_result *res)
{
	struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_ah_attr ah;
	struct sxrc_dev *dev;
	struct sxrc_obj *obj;
	struct sxrc_qp *dest;
	u32 qkey;

	obj = sxrc_obj_get(qp->obj.ctx, w->ah_handle, SXRC_TYPE_AH);
	if (IS_ERR(obj)) {
		res->status = SXRC_WC_LOC_QP_OP_ERR;
		return SXRC_DONE;
	}
	ah = to_sxrc_ah(obj)->attr;
	if (to_sxrc_ah(obj)->pd != qp->pd) {
		sxrc_obj_put(obj);
		res->status = SXRC_WC_LOC_QP_OP_ERR;
		return SXRC_DONE;
	}
	sxrc_obj_put(obj);

	/* A privileged Q_Key in the WR means: use the QP's own. */
	qkey = w->remote_qkey & SXRC_QKEY_PRIVILEGED ?
	       READ_ONCE(qp->attr.qkey) : w->remote_qkey;
	if (ah.is_global)
		sxrc_build_grh(qp, &ah, s->local.total, s->grh);
	res->status = SXRC_WC_SUCCESS;
	res->byte_len = s->local.total;

	if ((w->remote_qpn & SXRC_MCAST_QPN) == SXRC_MCAST_QPN) {
		struct sxrc_dev *mdev = qp->obj.ctx->dev;
		struct sxrc_mcast *m;

		mutex_lock(&mdev->mcast_lock);
		list_for_each_entry(m, &mdev->mcast_list, entry)
			if (!memcmp(m->gid, ah.dgid, sizeof(m->gid)) ||
			    (!ah.is_global && m->lid == ah.dlid))
				sxrc_ud_one(qp, m->qp, s, &ah, qkey);
		mutex_unlock(&mdev->mcast_lock);
		return SXRC_DONE;
	}

	dev = sxrc_ah_dev(&ah);
	dest = dev ? sxrc_qp_lookup(dev, w->remote_qpn & SXRC_QPN_MAX) : NULL;
	if (dest) {
		sxrc_ud_one(qp, dest, s, &ah, qkey);
		sxrc_obj_drop(&dest->obj);
	}
	return SXRC_DONE;
}

/* Resolve the rkey range of an RDMA or atomic WQE into s->remote. */
static int sxrc_remote_range(struct sxrc_qp *dest, struct sxrc_scratch *s,
			     u32 access, u64 len)
{
	struct sxrc_dev *dev = dest->obj.ctx->dev;
	struct sxrc_mw *mw;
	int ret;

	sxrc_sgl_init(&s->remote);
	if (!len)
		return 0;	/* zero-length: no key is checked */
	if (!(READ_ONCE(dest->attr.qp_access_flags) & access))
		return -EACCES;
	mw = sxrc_mw_lookup(dev, s->wqe.rkey);
	if (mw)
		ret = sxrc_mw_range(mw, s->wqe.rkey, dest,
				    sxrc_remote_pd(dest, s), access,
				    s->wqe.remote_addr, len, &s->remote.seg[0]);
	else
		ret = sxrc_mr_range(dev, s->wqe.rkey, sxrc_remote_pd(dest, s),
				    access, s->wqe.remote_addr, len,
				    &s->remote.seg[0]);
	if (ret)
		return -EACCES;
	s->remote.n = 1;
	s->remote.total = len;
	return 0;
}

/* The atomic itself, on the responder's 8 aligned bytes. */
static int sxrc_atomic(struct sxrc_scratch *s, u64 *old)
{
	struct sxrc_umem *odp, *none;
	struct sxrc_cursor c;
	struct page *page;
	u32 avail;
	u64 *p;
	int ret;

	sxrc_cursor_init(&c, &s->remote, 0);
	ret = sxrc_cursor_odp_lock(&c, NULL, s->qp, &odp, &none);
	if (ret)
		return ret;
	p = sxrc_cursor_map(&c, &avail, &page);
	if (s->wqe.opcode == SXRC_WR_ATOMIC_CMP_AND_SWP)
		*old = cmpxchg64(p, s->wqe.compare_add, s->wqe.swap);
	else
		*old = atomic64_fetch_add(s->wqe.compare_add, (atomic64_t *)p);
	sxrc_cursor_unmap(p, page);
	sxrc_odp_unlock(odp, NULL);
	return 0;
}

/*
 * The XRC SRQ @srqn of @dev if it belongs to the domain of the receive
 * QP @dest, with a reference; else NULL.
 */
static struct sxrc_srq *sxrc_xrc_srq_get(struct sxrc_dev *dev,
					 struct sxrc_qp *dest, u32 srqn)
{
	struct sxrc_srq *srq;

	rcu_read_lock();
	srq = xa_load(&dev->srqs, srqn);
	if (srq && (srq->type != SXRC_SRQT_XRC || srq->xrcd != dest->xrcd ||
		    !kref_get_unless_zero(&srq->obj.ref)))
		srq = NULL;
	rcu_read_unlock();
	return srq;
}

/*
 * Do the atomic and return the original value into the local buffer:
 * 0, or the status of an ODP page gone meanwhile.
 */
static u32 sxrc_atomic_reply(struct sxrc_scratch *s)
{
	struct sxrc_sgl src = { .n = 0 };
	u64 old;
	int ret;

	ret = sxrc_atomic(s, &old);
	sxrc_sgl_release(&s->remote);
	if (ret)
		return ret == -EFAULT ? SXRC_WC_REM_ACCESS_ERR : 0;
	sxrc_sgl_add_kbuf(&src, &old, sizeof(old));
	if (sxrc_copy_sgl(&s->local, 0, &src, s->qp) == -EFAULT)
		return SXRC_WC_LOC_PROT_ERR;
	return 0;
}

/* Packets a message of @len bytes takes at the requester's path MTU. */
static u32 sxrc_packets(struct sxrc_qp *qp, u64 len)
{
	u32 mtu = READ_ONCE(qp->attr.path_mtu);
	u32 shift = mtu ? 7 + min(mtu, 5U) : 12;	/* IBV_MTU_256 is 1 */

	return max_t(u64, 1, DIV_ROUND_UP_ULL(len, 1ULL << shift));
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

	spin_lock(&dest->lock);
	ok = sxrc_qp_can_receive(dest) && dest->attr.dest_qp_num == qp->qpn &&
	     sxrc_ah_dev(&dest->attr.ah_attr) == qp->obj.ctx->dev &&
	     (dest->type == SXRC_QPT_UC || dest->attr.rq_psn == psn);
	spin_unlock(&dest->lock);
	return ok;
}

/* The message @psn took @npkts packets: both ends move on. */
static void sxrc_psn_advance(struct sxrc_qp *qp, struct sxrc_qp *dest,
			     u32 psn, u32 npkts)
{
	u32 next = (psn + npkts) & SXRC_PSN_MASK;

	spin_lock(&dest->lock);
	dest->attr.rq_psn = next;
	spin_unlock(&dest->lock);
	spin_lock(&qp->lock);
	qp->attr.sq_psn = next;
	spin_unlock(&qp->lock);
}

/*
 * A copy into a receive WQE stopped halfway (its poster died): the WQE
 * is consumed and completes as flushed, as it would once the responder
 * learns that its connection is gone.
 */
static void sxrc_recv_stopped(struct sxrc_qp *dest, struct sxrc_scratch *s)
{
	sxrc_sgl_release(&s->peer);
	sxrc_recv_error(dest, s, SXRC_WC_WR_FLUSH_ERR);
}

/* An RDMA or atomic copy met an ODP page unmapped since it was resolved. */
static u32 sxrc_fault_status(struct sxrc_scratch *s)
{
	return s->local.fault ? SXRC_WC_LOC_PROT_ERR : SXRC_WC_REM_ACCESS_ERR;
}

/* The responder's part of a SEND (+IMM, +INV) to @dest. */
static enum sxrc_resp sxrc_resp_send(struct sxrc_qp *dest,
				     struct sxrc_scratch *s, u32 *status,
				     bool *stopped)
{
	struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_dev *dev = dest->obj.ctx->dev;
	struct sxrc_cqe rcqe = {
		.opcode = SXRC_WC_OP_RECV,
		.solicited = !!(w->send_flags & SXRC_SEND_SOLICITED),
	};
	enum sxrc_resp resp;
	u64 len = s->local.total;
	int ret;

	if (w->opcode == SXRC_WR_SEND_WITH_INV &&
	    !sxrc_can_invalidate(dev, sxrc_remote_pd(dest, s), dest,
				 w->imm_data)) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	resp = sxrc_recv_take(dest, s, len, status);
	if (resp != SXRC_RESP_OK)
		return resp;
	ret = sxrc_copy_sgl(&s->peer, 0, &s->local, s->qp);
	if (ret == -EFAULT && s->peer.fault) {
		/* As a bad lkey in the receive WQE (sxrc_recv_take()). */
		sxrc_sgl_release(&s->peer);
		sxrc_recv_error(dest, s, SXRC_WC_LOC_PROT_ERR);
		sxrc_responder_error(dest, SXRC_EVENT_QP_FATAL);
		*status = SXRC_WC_REM_OP_ERR;
		return SXRC_RESP_ERR;
	}
	if (ret) {
		sxrc_recv_stopped(dest, s);
		if (ret == -EFAULT) {
			*status = SXRC_WC_LOC_PROT_ERR;
			return SXRC_RESP_ERR;
		}
		*stopped = true;
		return SXRC_RESP_OK;
	}
	if (w->opcode == SXRC_WR_SEND_WITH_IMM) {
		rcqe.wc_flags = SXRC_WC_WITH_IMM;
		rcqe.imm_data = w->imm_data;
	} else if (w->opcode == SXRC_WR_SEND_WITH_INV) {
		sxrc_invalidate(dev, sxrc_remote_pd(dest, s), dest, w->imm_data,
				s);
		rcqe.wc_flags = SXRC_WC_WITH_INV;
		rcqe.imm_data = w->imm_data;
	}
	sxrc_recv_done(dest, s, &rcqe, len);
	return SXRC_RESP_OK;
}

/* The responder's part of an RDMA WRITE (+IMM) to @dest. */
static enum sxrc_resp sxrc_resp_write(struct sxrc_qp *dest,
				      struct sxrc_scratch *s, u32 *status,
				      bool *stopped)
{
	struct sxrc_send_wqe *w = &s->wqe;
	bool imm = w->opcode == SXRC_WR_RDMA_WRITE_WITH_IMM;
	struct sxrc_cqe rcqe = {
		.opcode = SXRC_WC_OP_RECV_RDMA_WITH_IMM,
		.wc_flags = SXRC_WC_WITH_IMM,
		.imm_data = w->imm_data,
		.solicited = !!(w->send_flags & SXRC_SEND_SOLICITED),
	};
	u64 len = s->local.total;
	enum sxrc_resp resp;
	int ret;

	if (sxrc_remote_range(dest, s, SXRC_ACCESS_REMOTE_WRITE, len)) {
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	if (imm) {
		/* The immediate needs a receive WQE, before any data. */
		resp = sxrc_recv_take(dest, s, 0, status);
		if (resp != SXRC_RESP_OK) {
			sxrc_sgl_release(&s->remote);
			return resp;
		}
	}
	ret = sxrc_copy_sgl(&s->remote, 0, &s->local, s->qp);
	sxrc_sgl_release(&s->remote);
	if (ret) {
		if (imm)
			sxrc_recv_stopped(dest, s);
		if (ret == -EFAULT) {
			*status = sxrc_fault_status(s);
			return SXRC_RESP_ERR;
		}
		*stopped = true;
	} else if (imm) {
		sxrc_recv_done(dest, s, &rcqe, len);
	}
	return SXRC_RESP_OK;
}

/* The responder's part of an RDMA READ or an atomic from @dest. */
static enum sxrc_resp sxrc_resp_read_atomic(struct sxrc_qp *dest,
					    struct sxrc_scratch *s,
					    u32 *status, bool *stopped)
{
	struct sxrc_send_wqe *w = &s->wqe;
	int ret;

	if (w->opcode == SXRC_WR_RDMA_READ) {
		if (sxrc_remote_range(dest, s, SXRC_ACCESS_REMOTE_READ,
				      s->local.total)) {
			*status = SXRC_WC_REM_ACCESS_ERR;
			return SXRC_RESP_ERR;
		}
		ret = sxrc_copy_sgl(&s->local, 0, &s->remote, s->qp);
		sxrc_sgl_release(&s->remote);
		if (ret == -EFAULT) {
			*status = sxrc_fault_status(s);
			return SXRC_RESP_ERR;
		}
		*stopped = ret;
		return SXRC_RESP_OK;
	}
	if (w->remote_addr & 7) {
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	if (sxrc_remote_range(dest, s, SXRC_ACCESS_REMOTE_ATOMIC, 8)) {
		*status = SXRC_WC_REM_ACCESS_ERR;
		return SXRC_RESP_ERR;
	}
	/*
	 * The iova is aligned; the memory behind it must be too (an MR may
	 * map iova X to an address X + 4): an atomic never straddles two
	 * pages.
	 */
	if (s->remote.seg[0].off & 7) {
		sxrc_sgl_release(&s->remote);
		*status = SXRC_WC_REM_INV_REQ_ERR;
		return SXRC_RESP_ERR;
	}
	*status = sxrc_atomic_reply(s);
	return *status ? SXRC_RESP_ERR : SXRC_RESP_OK;
}

/* RC, UC and XRC: everything that needs the connected peer. */
static enum sxrc_outcome sxrc_exec_connected(struct sxrc_qp *qp,
					     struct sxrc_scratch *s,
					     struct sxrc_result *res)
{
	struct sxrc_send_wqe *w = &s->wqe;
	bool rc = sxrc_reliable(qp->type), stopped = false;
	u32 peer_type = qp->type == SXRC_QPT_XRC_SEND ? SXRC_QPT_XRC_RECV :
			qp->type;
	enum sxrc_resp resp = SXRC_RESP_OK;
	struct sxrc_ah_attr ah;
	struct sxrc_dev *dev;
	struct sxrc_qp *dest;
	u32 status = 0, dqpn, psn;
	u64 len = s->local.total;

	spin_lock(&qp->lock);
	ah = qp->attr.ah_attr;
	dqpn = qp->attr.dest_qp_num;
	psn = qp->attr.sq_psn;
	spin_unlock(&qp->lock);

	dev = sxrc_ah_dev(&ah);
	dest = dev ? sxrc_qp_lookup(dev, dqpn) : NULL;
	if (!dest || dest->type != peer_type ||
	    !sxrc_peer_accepts(dest, qp, psn)) {
		if (dest)
			sxrc_obj_drop(&dest->obj);
		if (!rc) {
			res->status = SXRC_WC_SUCCESS;	/* UC: lost, done */
			return SXRC_DONE;
		}
		return SXRC_WAIT_LOST;
	}

	res->status = SXRC_WC_SUCCESS;
	res->byte_len = len;
	s->xsrq = NULL;
	if (dest->type == SXRC_QPT_XRC_RECV) {
		/* The SRQ named must be one of the receive QP's domain. */
		s->xsrq = sxrc_xrc_srq_get(dev, dest, w->remote_srqn);
		if (!s->xsrq) {
			resp = SXRC_RESP_ERR;
			status = SXRC_WC_REM_INV_REQ_ERR;
			goto done;
		}
	}
	switch (w->opcode) {
	case SXRC_WR_SEND:
	case SXRC_WR_SEND_WITH_IMM:
	case SXRC_WR_SEND_WITH_INV:
		resp = sxrc_resp_send(dest, s, &status, &stopped);
		break;
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
		resp = sxrc_resp_write(dest, s, &status, &stopped);
		break;
	case SXRC_WR_RDMA_READ:
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		resp = sxrc_resp_read_atomic(dest, s, &status, &stopped);
		break;
	}

done:
	if (s->xsrq) {
		sxrc_obj_drop(&s->xsrq->obj);
		s->xsrq = NULL;
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
			sxrc_psn_advance(qp, dest, psn, sxrc_packets(qp, len));
		break;
	case SXRC_RESP_RNR:
		res->rnr_timer = READ_ONCE(dest->attr.min_rnr_timer);
		sxrc_obj_drop(&dest->obj);
		return SXRC_WAIT_RNR;
	case SXRC_RESP_ERR:
		if (!rc) {
			/* UC: the responder drops, the sender is done. */
			sxrc_psn_advance(qp, dest, psn, sxrc_packets(qp, len));
			break;
		}
		res->status = status;
		/* An access or request error fails the responder too. */
		if (status == SXRC_WC_REM_ACCESS_ERR)
			sxrc_responder_error(dest, SXRC_EVENT_QP_ACCESS_ERR);
		else if (status == SXRC_WC_REM_INV_REQ_ERR)
			sxrc_responder_error(dest, SXRC_EVENT_QP_REQ_ERR);
		break;
	}
	sxrc_obj_drop(&dest->obj);
	return SXRC_DONE;
}

/* Is @opcode something a QP of @type may post? */
static bool sxrc_opcode_ok(u32 type, u32 opcode)
{
	switch (opcode) {
	case SXRC_WR_SEND:
	case SXRC_WR_SEND_WITH_IMM:
		return true;
	case SXRC_WR_RDMA_WRITE:
	case SXRC_WR_RDMA_WRITE_WITH_IMM:
	case SXRC_WR_SEND_WITH_INV:
	case SXRC_WR_LOCAL_INV:
		return type != SXRC_QPT_UD;
	case SXRC_WR_RDMA_READ:
	case SXRC_WR_ATOMIC_CMP_AND_SWP:
	case SXRC_WR_ATOMIC_FETCH_AND_ADD:
		return type == SXRC_QPT_RC || type == SXRC_QPT_XRC_SEND;
	case SXRC_WR_BIND_MW:
		return type == SXRC_QPT_RC || type == SXRC_QPT_UC;
	default:
		return false;
	}
}

/* May the MR @mr back the window of a BIND_MW WQE @w on @qp? */
static bool sxrc_bind_mr_ok(struct sxrc_qp *qp, struct sxrc_mr *mr,
			    const struct sxrc_send_wqe *w)
{
	u64 end;

	lockdep_assert_held(&mr->lock);
	if (mr->invalid || !mr->umem || mr->pd != qp->pd ||
	    !(mr->access & SXRC_ACCESS_MW_BIND))
		return false;
	/* A window that lets peers write needs writable pages. */
	if ((w->swap & (SXRC_ACCESS_REMOTE_WRITE | SXRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & SXRC_ACCESS_LOCAL_WRITE))
		return false;
	return !check_add_overflow(w->remote_addr, w->compare_add, &end) &&
	       w->remote_addr >= mr->iova &&
	       end <= mr->iova + mr->umem->length;
}

/*
 * Execute a BIND_MW WQE (layout in the uapi header): returns the
 * completion status.  A window bound before is unbound first, and the
 * accesses through that binding are waited for (s->inv_umem).
 */
static u32 sxrc_exec_bind(struct sxrc_qp *qp, struct sxrc_scratch *s)
{
	const struct sxrc_send_wqe *w = &s->wqe;
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	struct sxrc_mw_binding b = {};
	struct sxrc_mr *mr = NULL;
	u32 status = SXRC_WC_MW_BIND_ERR;
	struct sxrc_mw *mw;

	if (w->num_sge || (w->send_flags & SXRC_SEND_INLINE) ||
	    (w->swap & ~(u64)SXRC_ACCESS_MW_ALL) ||
	    (w->imm_data >> 8) != (w->rkey >> 8))
		return SXRC_WC_MW_BIND_ERR;
	mw = sxrc_mw_lookup(dev, w->rkey);
	if (!mw)
		return SXRC_WC_MW_BIND_ERR;
	if (w->compare_add) {
		mr = sxrc_mr_lookup(dev, w->remote_qpn);
		if (!mr)
			goto out_mw;
	}

	spin_lock(&mw->lock);
	if (mw->rkey != w->rkey || mw->pd != qp->pd)
		goto out_unlock;
	/* A type 2 window is bound once, to something, until invalidated. */
	if (mw->type == SXRC_MW_TYPE_2 && (mw->mr || !mr))
		goto out_unlock;
	if (mr) {
		bool ok;

		spin_lock(&mr->lock);
		ok = sxrc_bind_mr_ok(qp, mr, w);
		if (ok)
			mr->nmw++;
		spin_unlock(&mr->lock);
		if (!ok)
			goto out_unlock;
	}
	if (mw->mr)
		sxrc_mw_unbind_locked(mw, &b);
	if (mr) {
		sxrc_obj_depend(&mr->obj);
		mw->mr = mr;
		if (mw->type == SXRC_MW_TYPE_2) {
			kref_get(&qp->obj.ref);
			mw->qp = qp;
		}
		mw->addr = w->remote_addr;
		mw->length = w->compare_add;
		mw->access = w->swap;
	}
	mw->rkey = w->imm_data;
	status = SXRC_WC_SUCCESS;
out_unlock:
	spin_unlock(&mw->lock);
	s->inv_umem = b.umem;
	b.umem = NULL;
	sxrc_mw_binding_release(&b);
	if (mr)
		sxrc_obj_drop(&mr->obj);
out_mw:
	sxrc_obj_drop(&mw->obj);
	return status;
}

/*
 * Read the head WQE into s->wqe and check it; resolve its local list
 * into s->local.  Returns 0 or the completion status of a local error.
 */
static u32 sxrc_wqe_prepare(struct sxrc_qp *qp, void *slot,
			    struct sxrc_scratch *s)
{
	struct sxrc_send_wqe *w = &s->wqe;
	bool atomic, read;
	u32 n, access = 0;

	memcpy(w, slot, sizeof(*w));
	sxrc_sgl_init(&s->local);

	if (!sxrc_opcode_ok(qp->type, w->opcode) ||
	    (w->send_flags & ~SXRC_SEND_FLAGS_ALL))
		return SXRC_WC_LOC_QP_OP_ERR;
	if (w->opcode == SXRC_WR_LOCAL_INV || w->opcode == SXRC_WR_BIND_MW)
		return 0;
	atomic = w->opcode == SXRC_WR_ATOMIC_CMP_AND_SWP ||
		 w->opcode == SXRC_WR_ATOMIC_FETCH_AND_ADD;
	read = w->opcode == SXRC_WR_RDMA_READ;
	n = w->num_sge;

	if (w->send_flags & SXRC_SEND_INLINE) {
		if (atomic || read || n > qp->cap.max_inline_data)
			return SXRC_WC_LOC_QP_OP_ERR;
		if (n)
			sxrc_sgl_add_kbuf(&s->local, slot + sizeof(*w), n);
	} else {
		if (n > qp->sq.max_sge)
			return SXRC_WC_LOC_QP_OP_ERR;
		memcpy(s->sge, slot + sizeof(*w), n * sizeof(*s->sge));
		/* Reads and atomics write into local memory. */
		if (atomic || read)
			access = SXRC_ACCESS_LOCAL_WRITE;
		if (sxrc_local_sgl(qp, s->sge, n, access, &s->local))
			return SXRC_WC_LOC_PROT_ERR;
	}
	if (s->local.total > SXRC_MAX_MSG ||
	    (atomic && s->local.total != sizeof(u64)) ||
	    (qp->type == SXRC_QPT_UD && s->local.total > SXRC_UD_MTU))
		return SXRC_WC_LOC_LEN_ERR;
	return 0;
}

static enum sxrc_outcome sxrc_wqe_execute(struct sxrc_qp *qp, void *slot,
					  struct sxrc_scratch *s,
					  struct sxrc_result *res)
{
	enum sxrc_outcome out = SXRC_DONE;
	u32 status;

	memset(res, 0, sizeof(*res));
	status = sxrc_wqe_prepare(qp, slot, s);
	if (status) {
		res->status = status;
	} else if (s->wqe.opcode == SXRC_WR_LOCAL_INV) {
		res->status = sxrc_invalidate(qp->obj.ctx->dev, qp->pd, NULL,
					      s->wqe.imm_data, s) ?
			      SXRC_WC_LOC_PROT_ERR : SXRC_WC_SUCCESS;
	} else if (s->wqe.opcode == SXRC_WR_BIND_MW) {
		res->status = sxrc_exec_bind(qp, s);
	} else if (qp->type == SXRC_QPT_UD) {
		out = sxrc_exec_ud(qp, s, res);
	} else {
		out = sxrc_exec_connected(qp, s, res);
	}
	sxrc_sgl_release(&s->local);
	/*
	 * An invalidation completes once no copy uses the MR's pages any
	 * more; this requester holds none of its own by now.
	 */
	if (s->inv_umem) {
		sxrc_umem_quiesce(s->inv_umem);
		sxrc_umem_put(s->inv_umem);
		s->inv_umem = NULL;
	}
	return out;
}

/* IBTA RNR NAK timer values, in microseconds (code 0 is the longest). */
static const u32 sxrc_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* The ack timeout: 4.096 us << timeout; 0 is "infinite", waited in 1 s steps. */
static unsigned long sxrc_ack_timeout(u8 timeout)
{
	u64 usec = timeout ? 4096ULL << min_t(u8, timeout, 31) : 1000000000ULL;

	return max_t(unsigned long, usecs_to_jiffies(div_u64(usec, 1000)), 1);
}

static void sxrc_reset_retries(struct sxrc_qp *qp)
{
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
}

/*
 * The head WQE waits @delay jiffies before it is tried again (RNR timer,
 * ack timeout); sq_mutex is held.  Until then a run of the work item
 * queued for another reason (a kick, left-over work) does not retry it.
 */
static void sxrc_qp_stall(struct sxrc_qp *qp, unsigned long delay)
{
	qp->stalled = true;
	qp->stall_until = jiffies + delay;
	sxrc_qp_schedule(qp, delay);
}

/* The QP (re)enters RTS: a fresh retry budget; sq_mutex is held. */
void sxrc_qp_engine_ready(struct sxrc_qp *qp)
{
	lockdep_assert_held(&qp->sq_mutex);
	sxrc_reset_retries(qp);
	qp->stalled = false;
}

/*
 * Execute the send queue until it is empty, must wait, or fails, or
 * until this call's budget is spent: the work item then goes on with the
 * rest.  Called with qp->sq_mutex held, from the doorbell or the work
 * item.
 */
static void sxrc_sq_process(struct sxrc_qp *qp)
{
	struct sxrc_ring *ring = qp->sq.ring;
	struct sxrc_scratch *s = qp->scratch;
	struct sxrc_result res;
	u32 state, wqes = 0;
	int pending;
	u64 bytes = 0;

	lockdep_assert_held(&qp->sq_mutex);
	if (!ring)
		return;		/* an XRC receive QP sends nothing */
	for (;;) {
		enum sxrc_outcome out;
		bool signaled;

		state = READ_ONCE(qp->attr.qp_state);
		if (state == SXRC_QPS_ERR) {
			sxrc_qp_flush_locked(qp);
			break;
		}
		if (state != SXRC_QPS_RTS || qp->stalled)
			break;
		pending = sxrc_ring_count(ring, sxrc_ring_prod(ring), qp->sq.cons);
		if (!pending)
			break;
		if (pending < 0) {
			/* A corrupt ring fails this QP, nothing else. */
			if (sxrc_qp_set_error(qp))
				sxrc_obj_event(&qp->obj, SXRC_EVENT_QP_FATAL);
			continue;
		}
		if (wqes >= SXRC_SQ_BUDGET_WQES ||
		    bytes >= SXRC_SQ_BUDGET_BYTES) {
			/* Enough for one call: the work item goes on. */
			sxrc_qp_schedule(qp, 0);
			break;
		}
		if (wqes && sxrc_copy_aborted(qp))
			break;
		if (!s) {
			s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
			if (!s) {
				/* Try again later rather than fail. */
				sxrc_qp_schedule(qp, 1);
				break;
			}
			s->qp = qp;
			qp->scratch = s;
		}

		out = sxrc_wqe_execute(qp, sxrc_ring_slot(ring, qp->sq.cons),
				       s, &res);
		wqes++;
		bytes += res.byte_len;
		if (out == SXRC_STOPPED)
			break;	/* the WQE stays: its QP is going away */
		cond_resched();
		if (out == SXRC_WAIT_RNR) {
			sxrc_count(qp, SXRC_STAT_RNR_RETRIES, 1);
			if (qp->attr.rnr_retry != 7 && !qp->rnr_left--) {
				res.status = SXRC_WC_RNR_RETRY_EXC_ERR;
			} else {
				u32 usec = sxrc_rnr_usec[res.rnr_timer & 31];

				sxrc_qp_stall(qp, max_t(unsigned long, 1,
							usecs_to_jiffies(usec)));
				break;
			}
		} else if (out == SXRC_WAIT_LOST) {
			sxrc_count(qp, SXRC_STAT_RETRIES, 1);
			if (qp->attr.timeout && !qp->retry_left--) {
				res.status = SXRC_WC_RETRY_EXC_ERR;
			} else {
				sxrc_qp_stall(qp,
					      sxrc_ack_timeout(qp->attr.timeout));
				break;
			}
		}

		/* Done with this WQE, one way or the other. */
		trace_sxrc_send_wqe(qp, &s->wqe, res.status, res.byte_len);
		signaled = qp->sq_sig_all ||
			   (s->wqe.send_flags & SXRC_SEND_SIGNALED);
		if (signaled || res.status != SXRC_WC_SUCCESS) {
			struct sxrc_cqe cqe = {
				.wr_id = s->wqe.wr_id,
				.status = res.status,
				.opcode = sxrc_wc_opcode(s->wqe.opcode),
				.byte_len = res.byte_len,
				.qp_num = qp->qpn,
			};

			sxrc_cq_post(qp->send_cq, &cqe);
		}
		qp->sq.cons++;
		sxrc_ring_publish_cons(ring, qp->sq.cons);
		sxrc_reset_retries(qp);
		if (res.status != SXRC_WC_SUCCESS) {
			sxrc_qp_set_error(qp);
			continue;	/* flushes the rest */
		}
		sxrc_count(qp, SXRC_STAT_SEND_WQES, 1);
		sxrc_count(qp, SXRC_STAT_SEND_BYTES, res.byte_len);
	}
}

/*
 * The doorbell.  Another thread of the poster (or the work item) may be
 * running the queue: waiting for it can be interrupted by a fatal
 * signal only, and its run is bounded anyway.
 */
int sxrc_sq_run(struct sxrc_qp *qp)
{
	if (mutex_lock_killable(&qp->sq_mutex))
		return -EINTR;
	if (trace_sxrc_doorbell_enabled() && qp->sq.ring)
		trace_sxrc_doorbell(qp, READ_ONCE(sxrc_ring_hdr(qp->sq.ring)->prod) -
				    qp->sq.cons);
	sxrc_sq_process(qp);
	mutex_unlock(&qp->sq_mutex);
	return 0;
}

static void sxrc_retry_work(struct work_struct *work)
{
	struct sxrc_qp *qp = container_of(to_delayed_work(work),
					  struct sxrc_qp, retry_work);

	mutex_lock(&qp->sq_mutex);
	if (qp->stalled && time_before(jiffies, qp->stall_until)) {
		/* Run early (a kick raced with the stall): wait it out. */
		sxrc_qp_schedule(qp, qp->stall_until - jiffies);
	} else {
		qp->stalled = false;
		sxrc_sq_process(qp);
	}
	mutex_unlock(&qp->sq_mutex);
}

int sxrc_engine_init(void)
{
	/*
	 * Retries and leftover work of every QP: unbound (a long queue
	 * does not pin one CPU), and never in the way of system_wq users.
	 */
	sxrc_wq = alloc_workqueue("softxrc", WQ_UNBOUND, 0);
	return sxrc_wq ? 0 : -ENOMEM;
}

void sxrc_engine_exit(void)
{
	destroy_workqueue(sxrc_wq);
}

void sxrc_qp_init_engine(struct sxrc_qp *qp)
{
	mutex_init(&qp->sq_mutex);
	spin_lock_init(&qp->rq_lock);
	INIT_DELAYED_WORK(&qp->retry_work, sxrc_retry_work);
}

/* The QP is being destroyed: no more work runs on it after this. */
void sxrc_qp_stop_engine(struct sxrc_qp *qp)
{
	spin_lock(&qp->lock);
	qp->dead = true;
	spin_unlock(&qp->lock);
	cancel_delayed_work_sync(&qp->retry_work);
	/* Wait for a doorbell still running on it. */
	mutex_lock(&qp->sq_mutex);
	mutex_unlock(&qp->sq_mutex);
}
