// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the memory behind a memory region (struct sxrc_umem).
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
 *
 * Copies count themselves in use of a umem (sxrc_umem_use()); whoever
 * takes its pages away (dereg, rereg, invalidation) waits for them
 * (sxrc_umem_quiesce()).
 */
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "compat.h"
#include "engine.h"
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
struct sxrc_umem *sxrc_umem_get(struct sxrc_dev *dev, u64 addr,
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
struct sxrc_umem *sxrc_umem_get_dmabuf(struct sxrc_dev *dev, int fd,
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
