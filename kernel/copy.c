// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the copy engine: scatter lists resolved into the pages behind
 * them (pinned runs, ODP windows, dma-buf mappings) through their keys
 * (mr.c, mw.c), and copies between two such lists.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "engine.h"

/* Bytes a copy moves between two looks at the scheduler and signals. */
#define SXRC_COPY_CHUNK		BIT(20)

void sxrc_sgl_init(struct sxrc_sgl *sgl)
{
	sgl->n = 0;
	sgl->total = 0;
	sgl->fault = false;
	sgl->parked = false;
}

void sxrc_sgl_release(struct sxrc_sgl *sgl)
{
	u32 i;

	for (i = 0; i < sgl->n; i++) {
		if (!sgl->seg[i].umem)
			continue;
		if (sgl->parked)
			sxrc_umem_put(sgl->seg[i].umem);
		else
			sxrc_umem_unuse(sgl->seg[i].umem);
	}
	sgl->n = 0;
	sgl->total = 0;
	sgl->parked = false;
}

void sxrc_sgl_add_kbuf(struct sxrc_sgl *sgl, void *buf, u32 len)
{
	sgl->seg[sgl->n++] = (struct sxrc_seg){ .kbuf = buf, .len = len };
	sgl->total += len;
}

/*
 * May this context wait for one user's memory (fault in ODP pages, which
 * takes as long as the memory's owner likes: a FUSE-backed mapping, say)
 * or for a long piece of work?  Not in softirq, and not in a link's
 * receive worker, which serves every QP of its device: a packet that
 * needs to goes to its QP's own work item (wire.c).
 */
bool sxrc_may_wait(void)
{
	return in_task() && !sxrc_wire_in_rx_worker();
}

/*
 * An ODP range must be mapped (and writable for @access that writes)
 * when it is resolved: an access error otherwise, as for a bad key.
 * Faulting may sleep: where that may not wait (sxrc_may_wait()) an ODP
 * range is not resolved but left to a context that may, -EWOULDBLOCK.
 */
int sxrc_seg_odp_check(struct sxrc_seg *seg, u32 access)
{
	bool write = access & (SXRC_ACCESS_LOCAL_WRITE |
			       SXRC_ACCESS_REMOTE_WRITE |
			       SXRC_ACCESS_REMOTE_ATOMIC);
	int ret = -EACCES;

	if (!seg->umem->odp)
		return 0;
	if (!sxrc_may_wait())
		ret = -EWOULDBLOCK;
	else if (!sxrc_odp_prefault(seg->umem, seg->off, seg->len, write,
				    true))
		return 0;
	sxrc_umem_unuse(seg->umem);
	return ret;
}

/**
 * sxrc_sgl_park - hold a list's regions by reference only
 * @sgl: the list, resolved
 *
 * A list the wire keeps from one packet to the next (a receive WQE, an
 * RDMA range, a WQE in flight) is parked in between: the pages stay, but
 * an invalidation, deregistration or unbinding of its keys does not wait
 * for it.  The next copy takes it out again (sxrc_sgl_unpark()).
 */
void sxrc_sgl_park(struct sxrc_sgl *sgl)
{
	u32 i;

	if (sgl->parked)
		return;
	for (i = 0; i < sgl->n; i++)
		if (sgl->seg[i].umem)
			sxrc_umem_idle(sgl->seg[i].umem);
	sgl->parked = true;
}

/**
 * sxrc_sgl_unpark - count a parked list in use again
 * @sgl: the list
 *
 * Each key is checked again: it must still grant its range as
 * @sgl->grant says, on the same pages.
 *
 * Return: 0; -EFAULT when one no longer does (@sgl->fault is set and
 * the list stays parked): the message it belongs to fails.
 */
int sxrc_sgl_unpark(struct sxrc_sgl *sgl)
{
	u32 i, j;

	if (!sgl->parked)
		return 0;
	for (i = 0; i < sgl->n; i++) {
		struct sxrc_seg *seg = &sgl->seg[i];

		if (seg->umem &&
		    sxrc_key_grant(seg->umem->dev, seg, &sgl->grant))
			goto revoked;
	}
	sgl->parked = false;
	return 0;

revoked:
	for (j = 0; j < i; j++)
		if (sgl->seg[j].umem)
			sxrc_umem_idle(sgl->seg[j].umem);
	sgl->fault = true;
	return -EFAULT;
}

/* Both lists in use, for a copy: -EFAULT as sxrc_sgl_unpark(). */
static int sxrc_copy_unpark(struct sxrc_sgl *a, struct sxrc_sgl *b)
{
	if (sxrc_sgl_unpark(a))
		return -EFAULT;
	if (sxrc_sgl_unpark(b)) {
		sxrc_sgl_park(a);
		return -EFAULT;
	}
	return 0;
}

/* Resolve a WQE's local scatter/gather list. */
int sxrc_local_sgl(struct sxrc_qp *qp, const struct sxrc_sge *sge,
		   u32 n, u32 access, struct sxrc_sgl *sgl)
{
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	u32 i;

	sgl->grant = (struct sxrc_grant){ .pd = qp->pd, .access = access };
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

void sxrc_cursor_init(struct sxrc_cursor *c, struct sxrc_sgl *sgl,
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
bool sxrc_copy_aborted(struct sxrc_qp *qp)
{
	return (in_task() && fatal_signal_pending(current)) ||
	       (qp && READ_ONCE(qp->dead));
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
int sxrc_cursor_odp_lock(struct sxrc_cursor *dst,
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
void *sxrc_cursor_map(struct sxrc_cursor *c, u32 *avail,
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

void sxrc_cursor_unmap(void *addr, struct page *page)
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
 * when an ODP page is no longer mapped or a key no longer grants its
 * range (the list's @fault says which).
 *
 * A parked list is in use for the copy and parked again after it.  Each
 * chunk parks both and takes them out again, checking their keys: an
 * invalidation waits for one chunk at most, and the rest of the copy
 * fails.
 */
static int sxrc_copy(struct sxrc_cursor *dst, struct sxrc_cursor *src,
		     u64 len, struct sxrc_qp *qp)
{
	bool dpark = dst->sgl->parked, spark = src->sgl->parked;
	u32 chunk = 0;
	int ret;

	ret = sxrc_copy_unpark(dst->sgl, src->sgl);
	while (!ret && len) {
		struct sxrc_umem *du, *su;
		struct page *dpage, *spage;
		u32 davail, savail, n;
		void *d, *s;

		ret = sxrc_cursor_odp_lock(dst, src, qp, &du, &su);
		if (ret)
			break;
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
			sxrc_sgl_park(dst->sgl);
			sxrc_sgl_park(src->sgl);
			cond_resched();
			if (sxrc_copy_aborted(qp))
				return -EINTR;
			ret = sxrc_copy_unpark(dst->sgl, src->sgl);
		}
	}
	if (dpark)
		sxrc_sgl_park(dst->sgl);
	if (spark)
		sxrc_sgl_park(src->sgl);
	return ret;
}

/**
 * sxrc_sgl_pages - the pages under part of a list, to send them uncopied
 * @src: the list
 * @skip: bytes of it to skip
 * @len: bytes wanted; @src holds @skip + @len
 * @pp: filled with one piece per page touched, in order
 * @max: room in @pp
 *
 * Only regions pinned for their life qualify: an ODP region's pages may
 * go at any moment, a dma-buf has no pages of its own to lend, a kernel
 * buffer is the caller's.  The caller takes its own page references
 * while @src still holds its regions.
 *
 * Return: how many pieces of @pp describe the bytes, or 0 when they
 * cannot be described so (an element that does not qualify, or more
 * than @max pieces): copy them instead.
 */
u32 sxrc_sgl_pages(struct sxrc_sgl *src, u64 skip, u32 len,
		   struct sxrc_page_piece *pp, u32 max)
{
	struct sxrc_cursor c;
	u32 n = 0;

	sxrc_cursor_init(&c, src, skip);
	while (len) {
		struct sxrc_seg *seg = sxrc_cursor_seg(&c);
		struct sxrc_page_run *run;
		unsigned long pgidx;
		u64 byte;
		u32 step;

		if (!seg->umem || seg->umem->odp || seg->umem->kaddr ||
		    n == max)
			return 0;
		byte = seg->off + c.pos;
		step = min_t(u64, seg->len - c.pos,
			     PAGE_SIZE - offset_in_page(byte));
		step = min(step, len);
		pgidx = byte >> PAGE_SHIFT;
		c.run = sxrc_find_run(seg->umem, pgidx, c.run);
		run = sxrc_umem_run(seg->umem, c.run);
		pp[n].page = nth_page(run->page, pgidx - run->pgoff);
		pp[n].off = offset_in_page(byte);
		pp[n].len = step;
		n++;
		c.pos += step;
		len -= step;
	}
	return n;
}

/*
 * Copy all of @src to the start of @dst, after skipping @skip bytes, for
 * the requester @qp: 0, or -EINTR if the copy stopped (sxrc_copy()).
 */
int sxrc_copy_sgl(struct sxrc_sgl *dst, u64 skip, struct sxrc_sgl *src,
		  struct sxrc_qp *qp)
{
	struct sxrc_cursor dc, sc;

	sxrc_cursor_init(&dc, dst, skip);
	sxrc_cursor_init(&sc, src, 0);
	return sxrc_copy(&dc, &sc, src->total, qp);
}

/* Does @sgl hold an ODP region? */
static bool sxrc_sgl_odp(struct sxrc_sgl *sgl)
{
	u32 i;

	for (i = 0; i < sgl->n; i++)
		if (sgl->seg[i].umem && sgl->seg[i].umem->odp)
			return true;
	return false;
}

/*
 * Copy @len bytes from @src, after @sskip of it, to @dst, after @dskip;
 * both must hold them.  As sxrc_copy_sgl() otherwise; where the caller
 * may not wait (sxrc_may_wait()), -EWOULDBLOCK with nothing copied when
 * either list holds an ODP region.
 */
int sxrc_copy_range(struct sxrc_sgl *dst, u64 dskip, struct sxrc_sgl *src,
		    u64 sskip, u64 len, struct sxrc_qp *qp)
{
	struct sxrc_cursor dc, sc;

	if (!len)
		return 0;
	/* ODP pages are faulted in, which not every context may wait for. */
	if (!sxrc_may_wait() && (sxrc_sgl_odp(dst) || sxrc_sgl_odp(src)))
		return -EWOULDBLOCK;
	sxrc_cursor_init(&dc, dst, dskip);
	sxrc_cursor_init(&sc, src, sskip);
	return sxrc_copy(&dc, &sc, len, qp);
}
