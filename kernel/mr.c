// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: memory regions.
 *
 * Registration pins the pages with FOLL_LONGTERM and charges them to
 * the caller's mm->pinned_vm, exactly once per MR, against
 * RLIMIT_MEMLOCK.  The page list is kept as runs of physically
 * contiguous pages, so a huge page or a contiguous buffer costs one
 * entry, not one per 4 KiB.
 *
 * A dma-buf region pins nothing of the caller's: the exporter owns the
 * memory.  A software device has no DMA, so it takes the importer's CPU
 * path: dma_buf_vmap() of the whole buffer, kept until the region goes,
 * and copies through that kernel mapping.  An attachment would hand out
 * DMA addresses of a device that does no DMA, and the pages behind an
 * attachment's sg_table are the exporter's business, not the importer's.
 *
 * An on-demand paging region (SXRC_ACCESS_ON_DEMAND) pins nothing and
 * charges nothing: odp.c follows its range through an MMU notifier.
 */
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "engine.h"
#include "sxrc_methods.h"
#include "sxrc_trace.h"

/* Page pointers fetched per pin_user_pages_fast() call. */
#define SXRC_PIN_BATCH		(PAGE_SIZE * 4 / sizeof(struct page *))

static int sxrc_charge_pinned(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	u64 pinned;

	pinned = atomic64_add_return(npages, &mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/* Make room for one more run; blocks are allocated whole, never moved. */
static int sxrc_umem_grow(struct sxrc_umem *umem)
{
	if (umem->nruns < umem->nblocks * SXRC_RUNS_PER_BLOCK)
		return 0;
	if (umem->nblocks == umem->max_blocks) {
		unsigned long max = umem->max_blocks ? umem->max_blocks * 2 : 8;
		struct sxrc_page_run **blocks;

		blocks = kvmalloc_array(max, sizeof(*blocks), GFP_KERNEL_ACCOUNT);
		if (!blocks)
			return -ENOMEM;
		if (umem->nblocks)
			memcpy(blocks, umem->blocks,
			       umem->nblocks * sizeof(*blocks));
		kvfree(umem->blocks);
		umem->blocks = blocks;
		umem->max_blocks = max;
	}
	umem->blocks[umem->nblocks] = kmalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (!umem->blocks[umem->nblocks])
		return -ENOMEM;
	umem->nblocks++;
	return 0;
}

/* Append @n pages starting at @pages, merging into the last run. */
static int sxrc_umem_add(struct sxrc_umem *umem, struct page **pages,
			 unsigned long n, unsigned long pgoff)
{
	struct sxrc_page_run *last = umem->nruns ?
		sxrc_umem_run(umem, umem->nruns - 1) : NULL;
	unsigned long i;
	int ret;

	for (i = 0; i < n; i++, pgoff++) {
		if (last && page_to_pfn(last->page) + last->npages ==
			    page_to_pfn(pages[i])) {
			last->npages++;
			continue;
		}
		ret = sxrc_umem_grow(umem);
		if (ret)
			return ret;
		last = sxrc_umem_run(umem, umem->nruns++);
		last->page = pages[i];
		last->pgoff = pgoff;
		last->npages = 1;
	}
	return 0;
}

static void sxrc_umem_unpin(struct sxrc_umem *umem)
{
	unsigned long i;

	for (i = 0; i < umem->nruns; i++) {
		struct sxrc_page_run *run = sxrc_umem_run(umem, i);

		unpin_user_page_range_dirty_lock(run->page, run->npages,
						 umem->writable);
	}
	for (i = 0; i < umem->nblocks; i++)
		kfree(umem->blocks[i]);
	kvfree(umem->blocks);
	umem->blocks = NULL;
	umem->nruns = 0;
	umem->nblocks = 0;
	umem->max_blocks = 0;
}

static void sxrc_umem_free(struct kref *ref)
{
	struct sxrc_umem *umem = container_of(ref, struct sxrc_umem, ref);

	atomic64_sub(umem->npages, &umem->dev->mr_pages);
	atomic64_sub(umem->nruns, &umem->dev->mr_runs);
	trace_sxrc_mr_unpin(umem);
	if (umem->dmabuf) {
		dma_buf_vunmap_unlocked(umem->dmabuf, &umem->map);
		dma_buf_put(umem->dmabuf);
	} else if (umem->odp) {
		sxrc_odp_release(umem);
	} else {
		sxrc_umem_unpin(umem);
		atomic64_sub(umem->npages, &umem->owner_mm->pinned_vm);
		mmdrop(umem->owner_mm);
	}
	kfree(umem);
}

void sxrc_umem_put(struct sxrc_umem *umem)
{
	sxrc_kref_put(&umem->ref, sxrc_umem_free, &umem->late);
}

/* A copy starts on @umem; the caller holds the lock of the MR using it. */
void sxrc_umem_use(struct sxrc_umem *umem)
{
	kref_get(&umem->ref);
	atomic_inc(&umem->copies);
}

/*
 * A copy on @umem stopped (its list is parked, or let go of): wake an
 * invalidation waiting for the last one.
 */
void sxrc_umem_idle(struct sxrc_umem *umem)
{
	if (atomic_dec_and_test(&umem->copies))
		wake_up_var(&umem->copies);
}

/* The copy is done, and its reference with it. */
void sxrc_umem_unuse(struct sxrc_umem *umem)
{
	sxrc_umem_idle(umem);
	sxrc_umem_put(umem);
}

/*
 * Wait until no copy uses @umem any more.  Its MR no longer hands it out
 * (or is invalid, or the window through it is unbound), so no new copy
 * starts; a running one holds it for one chunk of a local copy or one
 * packet of the wire at most (copy.c), whatever the peer does next.  A
 * caller that is a user's own system call stops waiting when killed: the
 * pages stay pinned by the copies' references until they end.
 */
void sxrc_umem_quiesce(struct sxrc_umem *umem)
{
	if (!(current->flags & PF_KTHREAD)) {
		wait_var_event_killable(&umem->copies,
					!atomic_read(&umem->copies));
		return;
	}
	wait_var_event(&umem->copies, !atomic_read(&umem->copies));
}

/* Pin [addr, addr + length) of the current process. */
static struct sxrc_umem *sxrc_umem_get(struct sxrc_dev *dev, u64 addr,
				       u64 length, bool writable)
{
	unsigned int gup_flags = FOLL_LONGTERM |
				 (writable ? FOLL_WRITE : SXRC_FOLL_READONLY);
	unsigned long done = 0, start;
	struct sxrc_umem *umem;
	struct page **pages;
	int ret;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	kref_init(&umem->ref);
	umem->dev = dev;
	umem->addr = addr;
	umem->length = length;
	umem->writable = writable;
	start = addr & PAGE_MASK;
	umem->npages = (PAGE_ALIGN(addr + length) - start) >> PAGE_SHIFT;

	umem->owner_mm = current->mm;
	mmgrab(umem->owner_mm);
	ret = sxrc_charge_pinned(umem->owner_mm, umem->npages);
	if (ret)
		goto err_mm;
	if (sxrc_max_mr_pages &&
	    atomic64_read(&dev->mr_pages) + umem->npages > sxrc_max_mr_pages) {
		dev_warn_ratelimited(dev->misc.this_device,
				     "MR page limit reached (%lu): raise the module parameter max_mr_pages\n",
				     sxrc_max_mr_pages);
		ret = -ENOMEM;
		goto err_uncharge;
	}

	pages = kvmalloc_array(SXRC_PIN_BATCH, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}

	while (done < umem->npages) {
		unsigned long want = min(umem->npages - done, SXRC_PIN_BATCH);
		int got;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		if (writable)
			got = pin_user_pages_fast(start + done * PAGE_SIZE,
						  want, gup_flags, pages);
		else
			got = sxrc_pin_readonly(start + done * PAGE_SIZE,
						want, gup_flags, pages);
		if (got <= 0) {
			ret = got ? got : -EFAULT;
			goto err_unpin;
		}
		ret = sxrc_umem_add(umem, pages, got, done);
		if (ret) {
			unpin_user_pages(pages, got);
			goto err_unpin;
		}
		done += got;
		cond_resched();
	}
	kvfree(pages);
	atomic64_add(umem->npages, &dev->mr_pages);
	atomic64_add(umem->nruns, &dev->mr_runs);
	trace_sxrc_mr_pin(umem);
	return umem;

err_unpin:
	kvfree(pages);
	sxrc_umem_unpin(umem);
err_uncharge:
	atomic64_sub(umem->npages, &umem->owner_mm->pinned_vm);
err_mm:
	mmdrop(umem->owner_mm);
	kfree(umem);
	return ERR_PTR(ret);
}

/*
 * Map [offset, offset + length) of the dma-buf @fd; the mapping and a
 * reference on the buffer are held until the umem goes.
 */
static struct sxrc_umem *sxrc_umem_get_dmabuf(struct sxrc_dev *dev, int fd,
					      u64 offset, u64 length)
{
	struct sxrc_umem *umem;
	struct dma_buf *dmabuf;
	u64 end;
	int ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	ret = -EINVAL;
	if (check_add_overflow(offset, length, &end) || end > dmabuf->size)
		goto err_put;
	/* No CPU mapping, no way for a software device to reach the bytes. */
	ret = -EOPNOTSUPP;
	if (!dmabuf->ops->vmap)
		goto err_put;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!umem)
		goto err_put;
	kref_init(&umem->ref);
	umem->dev = dev;
	umem->addr = offset;
	umem->length = length;
	umem->writable = true;
	umem->npages = (PAGE_ALIGN(end) - (offset & PAGE_MASK)) >> PAGE_SHIFT;
	if (sxrc_max_mr_pages &&
	    atomic64_read(&dev->mr_pages) + umem->npages > sxrc_max_mr_pages) {
		dev_warn_ratelimited(dev->misc.this_device,
				     "MR page limit reached (%lu): raise the module parameter max_mr_pages\n",
				     sxrc_max_mr_pages);
		goto err_free;
	}

	ret = dma_buf_vmap_unlocked(dmabuf, &umem->map);
	if (ret)
		goto err_free;
	/* I/O memory wants memcpy_toio() and no atomics: not for the engine. */
	ret = -EOPNOTSUPP;
	if (umem->map.is_iomem || !umem->map.vaddr)
		goto err_vunmap;
	umem->dmabuf = dmabuf;
	umem->kaddr = umem->map.vaddr + (offset & PAGE_MASK);
	atomic64_add(umem->npages, &dev->mr_pages);
	trace_sxrc_mr_pin(umem);
	return umem;

err_vunmap:
	dma_buf_vunmap_unlocked(dmabuf, &umem->map);
err_free:
	kfree(umem);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/* ------------------------------------------------------------------ */

static int sxrc_check_access(u32 access)
{
	if (access & ~SXRC_ACCESS_ALL)
		return -EINVAL;
	/* Remote writes and atomics change memory: it must be writable. */
	if ((access & (SXRC_ACCESS_REMOTE_WRITE | SXRC_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & SXRC_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Implicit ODP: addr 0 and length ~0 (SIZE_MAX) name the address space. */
static bool sxrc_implicit_odp(u32 access, u64 addr, u64 length)
{
	return (access & SXRC_ACCESS_ON_DEMAND) && !addr && length == U64_MAX;
}

static int sxrc_check_range(u64 addr, u64 length)
{
	u64 end;

	if (!length || length > SXRC_MAX_MR_SIZE ||
	    check_add_overflow(addr, length, &end) || end > TASK_SIZE)
		return -EINVAL;
	return 0;
}

static void sxrc_mr_destroy(struct sxrc_obj *obj)
{
	struct sxrc_mr *mr = to_sxrc_mr(obj);

	struct sxrc_umem *umem;

	/* No key reaches it from now on; copies under way are waited for. */
	xa_erase(&obj->ctx->dev->mrs, mr->key >> 8);
	spin_lock_bh(&mr->lock);
	umem = mr->umem;
	mr->umem = NULL;
	spin_unlock_bh(&mr->lock);
	sxrc_obj_undepend(&mr->pd->obj);
	/* Verbs promise: nothing lands in the memory once dereg returns. */
	sxrc_umem_quiesce(umem);
	sxrc_umem_put(umem);
}

static void sxrc_mr_release(struct sxrc_obj *obj)
{
	struct sxrc_mr *mr = to_sxrc_mr(obj);

	kfree_rcu(mr, rcu);
}

static const struct sxrc_obj_ops sxrc_mr_ops = {
	.destroy = sxrc_mr_destroy,
	.release = sxrc_mr_release,
};

/*
 * Make an MR of @umem in the PD @pd_obj and publish it.  Takes over the
 * umem's reference and drops the PD's.
 */
static int sxrc_mr_create(struct sxrc_call *call, struct sxrc_obj *pd_obj,
			  u32 access, u64 iova, u64 user_cookie,
			  struct sxrc_umem *umem)
{
	struct sxrc_reg_mr_out *out = call->out;
	struct sxrc_dev *dev = call->ctx->dev;
	struct sxrc_mr *mr;
	u32 index;
	int ret;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		ret = -ENOMEM;
		goto err_put_pd;
	}
	mutex_init(&mr->rereg_mutex);
	spin_lock_init(&mr->lock);
	mr->access = access;
	mr->iova = iova;
	mr->umem = umem;

	/* Reserve the index; the MR becomes reachable by key below. */
	ret = xa_alloc_cyclic(&dev->mrs, &index, NULL,
			      XA_LIMIT(1, SXRC_MR_INDEX_MAX), &dev->mr_next,
			      GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_free;
	mr->key = index << 8 | get_random_u8();

	ret = sxrc_obj_init(call, &mr->obj, SXRC_TYPE_MR, &sxrc_mr_ops,
			    user_cookie);
	if (ret)
		goto err_index;

	mr->pd = to_sxrc_pd(pd_obj);
	sxrc_obj_depend(pd_obj);
	xa_store(&dev->mrs, index, mr, GFP_KERNEL_ACCOUNT);
	sxrc_obj_put(pd_obj);

	out->handle = mr->obj.handle;
	out->lkey = mr->key;
	out->rkey = mr->key;
	return 0;

err_index:
	xa_erase(&dev->mrs, index);
err_free:
	kfree(mr);
err_put_pd:
	sxrc_obj_put(pd_obj);
	sxrc_umem_put(umem);
	return ret == -EBUSY ? -ENOMEM : ret;
}

/* Pin the range, or follow it on demand. */
static struct sxrc_umem *sxrc_umem_new(struct sxrc_dev *dev, u64 addr,
				       u64 length, u32 access)
{
	bool writable = access & SXRC_ACCESS_LOCAL_WRITE;

	if (sxrc_implicit_odp(access, addr, length))
		return sxrc_odp_get(dev, 0, TASK_SIZE, writable);
	if (access & SXRC_ACCESS_ON_DEMAND)
		return sxrc_odp_get(dev, addr, length, writable);
	return sxrc_umem_get(dev, addr, length, writable);
}

/* The range of a registration: checked, or implicit ODP at iova 0. */
static int sxrc_check_reg(u32 access, u64 addr, u64 length, u64 iova)
{
	int ret;

	if (sxrc_implicit_odp(access, addr, length))
		return iova ? -EINVAL : 0;
	ret = sxrc_check_range(addr, length);
	if (ret)
		return ret;
	if (iova + length < iova)
		return -EINVAL;
	return 0;
}

int sxrc_mr_reg(struct sxrc_call *call)
{
	const struct sxrc_reg_mr_in *in = call->in;
	struct sxrc_obj *pd_obj;
	struct sxrc_umem *umem;
	int ret;

	ret = sxrc_check_access(in->access);
	if (ret)
		return ret;
	ret = sxrc_check_reg(in->access, in->addr, in->length, in->iova);
	if (ret)
		return ret;

	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	umem = sxrc_umem_new(call->ctx->dev, in->addr, in->length, in->access);
	if (IS_ERR(umem)) {
		sxrc_obj_put(pd_obj);
		return PTR_ERR(umem);
	}
	return sxrc_mr_create(call, pd_obj, in->access, in->iova,
			      in->user_cookie, umem);
}

int sxrc_mr_reg_dmabuf(struct sxrc_call *call)
{
	const struct sxrc_reg_dmabuf_mr_in *in = call->in;
	struct sxrc_obj *pd_obj;
	struct sxrc_umem *umem;
	int ret;

	if (in->reserved || (in->access & SXRC_ACCESS_ON_DEMAND))
		return -EINVAL;
	ret = sxrc_check_access(in->access);
	if (ret)
		return ret;
	if (!in->length || in->length > SXRC_MAX_MR_SIZE ||
	    in->iova + in->length < in->iova)
		return -EINVAL;
	/* As the RDMA core: the iova keeps the offset's place in its page. */
	if (offset_in_page(in->offset ^ in->iova))
		return -EINVAL;
	if (in->fd > INT_MAX)
		return -EBADF;

	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	umem = sxrc_umem_get_dmabuf(call->ctx->dev, in->fd, in->offset,
				    in->length);
	if (IS_ERR(umem)) {
		sxrc_obj_put(pd_obj);
		return PTR_ERR(umem);
	}
	return sxrc_mr_create(call, pd_obj, in->access, in->iova,
			      in->user_cookie, umem);
}

int sxrc_mr_query(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_query_mr_out *out = call->out;
	struct sxrc_obj *obj;
	struct sxrc_mr *mr;

	if (in->reserved)
		return -EINVAL;
	obj = sxrc_obj_query_get(call->ctx, in->handle, SXRC_TYPE_MR);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	mr = to_sxrc_mr(obj);
	spin_lock_bh(&mr->lock);
	if (mr->umem) {
		out->addr = mr->umem->addr;
		out->length = mr->umem->length;
	}
	out->iova = mr->iova;
	out->lkey = mr->key;
	out->rkey = mr->key;
	out->access = mr->access;
	out->pd_handle = mr->pd->obj.handle;
	spin_unlock_bh(&mr->lock);
	sxrc_obj_put(obj);
	return 0;
}

int sxrc_mr_rereg(struct sxrc_call *call)
{
	const struct sxrc_rereg_mr_in *in = call->in;
	struct sxrc_reg_mr_out *out = call->out;
	struct sxrc_umem *umem = NULL, *old_umem = NULL;
	struct sxrc_obj *obj, *pd_obj = NULL;
	struct sxrc_pd *old_pd = NULL;
	struct sxrc_mr *mr;
	u32 access;
	int ret;

	if (!in->flags || in->flags & ~SXRC_REREG_ALL)
		return -EINVAL;

	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_MR);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	mr = to_sxrc_mr(obj);
	mutex_lock(&mr->rereg_mutex);

	/* IBTA: a region with windows bound keeps its attributes. */
	ret = -EBUSY;
	if (READ_ONCE(mr->nmw))
		goto out_put;
	/* A dma-buf region has no user range to move to. */
	ret = -EOPNOTSUPP;
	if ((in->flags & SXRC_REREG_TRANSLATION) && mr->umem->dmabuf)
		goto out_put;

	access = in->flags & SXRC_REREG_ACCESS ? in->access : mr->access;
	ret = sxrc_check_access(access);
	if (ret)
		goto out_put;
	/* On demand or pinned is chosen with the translation only. */
	ret = -EINVAL;
	if ((access ^ mr->access) & SXRC_ACCESS_ON_DEMAND &&
	    !(in->flags & SXRC_REREG_TRANSLATION))
		goto out_put;

	if (in->flags & SXRC_REREG_PD) {
		pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
		if (IS_ERR(pd_obj)) {
			ret = PTR_ERR(pd_obj);
			pd_obj = NULL;
			goto out_put;
		}
	}

	if (in->flags & SXRC_REREG_TRANSLATION) {
		ret = sxrc_check_reg(access, in->addr, in->length, in->iova);
		if (ret)
			goto out_put;
		umem = sxrc_umem_new(call->ctx->dev, in->addr, in->length,
				     access);
	} else if ((access & SXRC_ACCESS_LOCAL_WRITE) &&
		   !mr->umem->writable && !mr->umem->odp) {
		/* Newly writable: the pages must be pinned for write. */
		umem = sxrc_umem_get(call->ctx->dev, mr->umem->addr,
				     mr->umem->length, true);
	}
	if (IS_ERR(umem)) {
		ret = PTR_ERR(umem);
		goto out_put;
	}

	spin_lock_bh(&mr->lock);
	if (mr->nmw) {
		/* A window was bound meanwhile. */
		spin_unlock_bh(&mr->lock);
		if (umem)
			sxrc_umem_put(umem);
		ret = -EBUSY;
		goto out_put;
	}
	/* Nothing can fail from here: switch everything at once. */
	if (pd_obj)
		sxrc_obj_depend(pd_obj);
	if (pd_obj) {
		old_pd = mr->pd;
		mr->pd = to_sxrc_pd(pd_obj);
	}
	if (umem) {
		old_umem = mr->umem;
		mr->umem = umem;
	}
	if (in->flags & SXRC_REREG_TRANSLATION)
		mr->iova = in->iova;
	mr->access = access;
	mr->invalid = false;	/* registered again: the keys work */
	spin_unlock_bh(&mr->lock);

	if (old_pd)
		sxrc_obj_undepend(&old_pd->obj);
	if (old_umem) {
		/* The old translation is unused once rereg returns. */
		sxrc_umem_quiesce(old_umem);
		sxrc_umem_put(old_umem);
	}

	out->handle = mr->obj.handle;
	out->lkey = mr->key;
	out->rkey = mr->key;
	ret = 0;

out_put:
	mutex_unlock(&mr->rereg_mutex);
	if (pd_obj)
		sxrc_obj_put(pd_obj);
	sxrc_obj_put(obj);
	return ret;
}
