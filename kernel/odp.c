// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: on-demand paging memory regions.
 *
 * An ODP region pins nothing.  Registration inserts an MMU interval
 * notifier over the range in the registrant's mm (mmgrab'ed, never
 * mmget'ed: the region does not keep the address space alive).  A copy
 * faults the pages it is about to touch with hmm_range_fault(), holding
 * no lock of a region, into a small window of its cursor; then it takes
 * umem->odp_lock of every region it touches (at most two, in address
 * order), checks that no invalidation came in between
 * (mmu_interval_read_retry()) and only then maps and copies.  The
 * invalidation callback takes the same lock to bump the sequence, so an
 * munmap(), mremap() or copy-on-write waits for a page copy in progress,
 * and a window faulted before it is never used after it: the copy
 * faults again.
 *
 * Faulting never happens under a region's lock: faulting one region
 * may invalidate another of the same mm (a copy-on-write break), whose
 * callback would wait for a lock its own faulter holds.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "sxrc.h"
#include "sxrc_methods.h"

/* Pages one hmm_range_fault() of a prefetch covers. */
#define SXRC_ODP_BATCH		(PAGE_SIZE / sizeof(unsigned long))

static bool sxrc_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct sxrc_umem *umem = container_of(mni, struct sxrc_umem, notifier);

	if (mmu_notifier_range_blockable(range))
		spin_lock(&umem->odp_lock);
	else if (!spin_trylock(&umem->odp_lock))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	spin_unlock(&umem->odp_lock);
	return true;
}

static const struct mmu_interval_notifier_ops sxrc_odp_ops = {
	.invalidate = sxrc_odp_invalidate,
};

/*
 * Follow [addr, addr + length) of the current process on demand; @addr
 * 0 and @length the size of the user address space is all of it.
 */
struct sxrc_umem *sxrc_odp_get(struct sxrc_dev *dev, u64 addr, u64 length,
			       bool writable)
{
	unsigned long start = addr & PAGE_MASK;
	struct sxrc_umem *umem;
	int ret;

	umem = kzalloc(sizeof(*umem), GFP_KERNEL_ACCOUNT);
	if (!umem)
		return ERR_PTR(-ENOMEM);
	kref_init(&umem->ref);
	spin_lock_init(&umem->odp_lock);
	umem->dev = dev;
	umem->addr = addr;
	umem->length = length;
	umem->writable = writable;
	umem->odp = true;
	umem->owner_mm = current->mm;
	mmgrab(umem->owner_mm);
	ret = mmu_interval_notifier_insert(&umem->notifier, umem->owner_mm,
					   start, PAGE_ALIGN(addr + length) - start,
					   &sxrc_odp_ops);
	if (ret) {
		mmdrop(umem->owner_mm);
		kfree(umem);
		return ERR_PTR(ret);
	}
	atomic_inc(&dev->odp_regions);
	return umem;
}

/* The last reference went: stop following the range. */
void sxrc_odp_release(struct sxrc_umem *umem)
{
	atomic_dec(&umem->dev->odp_regions);
	mmu_interval_notifier_remove(&umem->notifier);
	mmdrop(umem->owner_mm);
}

/*
 * Look up @npages pages from page @first of @umem into @pfns, faulting
 * them in (for write if @write) when @fault; *@seq is the notifier
 * sequence they are valid under.  No region lock may be held.
 */
static int sxrc_odp_walk(struct sxrc_umem *umem, unsigned long first,
			 unsigned long npages, unsigned long *pfns,
			 bool write, bool fault, unsigned long *seq)
{
	unsigned long start = (umem->addr & PAGE_MASK) + first * PAGE_SIZE;
	struct mm_struct *mm = umem->notifier.mm;
	struct hmm_range range = {
		.notifier = &umem->notifier,
		.start = start,
		.end = start + npages * PAGE_SIZE,
		.hmm_pfns = pfns,
	};
	unsigned long timeout;
	int ret;

	if (fault)
		range.default_flags = HMM_PFN_REQ_FAULT |
				      (write ? HMM_PFN_REQ_WRITE : 0);
	/* The owner is gone: nothing is mapped any more. */
	if (!mmget_not_zero(mm))
		return -EFAULT;
	timeout = jiffies + msecs_to_jiffies(HMM_RANGE_DEFAULT_TIMEOUT);
	do {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		range.notifier_seq = mmu_interval_read_begin(&umem->notifier);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
	} while (ret == -EBUSY && !time_after(jiffies, timeout));
	/*
	 * The owner may have exited meanwhile: its address space is not
	 * torn down here, under the requester's sq_mutex.
	 */
	mmput_async(mm);
	*seq = range.notifier_seq;
	return ret;
}

/*
 * Fault in [off, off + len) of @umem (offsets from its page-aligned
 * start), or only look it up when !@fault: what a registration check
 * and SXRC_MR_ADVISE do.  0, -EFAULT when some of it is not mapped (or
 * not writable for @write), -EINTR when the caller was killed.
 */
int sxrc_odp_prefault(struct sxrc_umem *umem, u64 off, u64 len, bool write,
		      bool fault)
{
	unsigned long first = off >> PAGE_SHIFT;
	unsigned long last = (off + len - 1) >> PAGE_SHIFT;
	unsigned long *pfns, seq;
	int ret = 0;

	if (!len)
		return 0;
	pfns = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!pfns)
		return -ENOMEM;
	while (first <= last) {
		unsigned long n = min(last - first + 1, SXRC_ODP_BATCH);

		ret = sxrc_odp_walk(umem, first, n, pfns, write, fault, &seq);
		if (ret)
			break;
		first += n;
		cond_resched();
	}
	kfree(pfns);
	return ret == -EINTR || ret == -ENOMEM ? ret : ret ? -EFAULT : 0;
}

/*
 * Fill @w with the pages of @umem from the one holding byte @off, up to
 * the one holding byte @end - 1 (the end of what the copy will touch)
 * and at most SXRC_ODP_WIN of them.
 */
int sxrc_odp_fault(struct sxrc_odp_win *w, struct sxrc_umem *umem, u64 off,
		   u64 end, bool write)
{
	unsigned long first = off >> PAGE_SHIFT;
	unsigned long n = ((end - 1) >> PAGE_SHIFT) - first + 1;
	int ret;

	w->umem = NULL;
	n = min_t(unsigned long, n, SXRC_ODP_WIN);
	ret = sxrc_odp_walk(umem, first, n, w->pfns, write, true, &w->seq);
	if (ret)
		return ret == -EINTR ? ret : -EFAULT;
	w->umem = umem;
	w->start = first;
	w->n = n;
	return 0;
}

/*
 * Lock the regions a copy step touches; either may be NULL, or both one.
 * sparse cannot follow a lock taken here and dropped by
 * sxrc_odp_unlock(): the __release()/__acquire() pairs hide it.
 */
void sxrc_odp_lock(struct sxrc_umem *a, struct sxrc_umem *b)
{
	if (a && b && a != b) {
		if (a > b)
			swap(a, b);
		spin_lock(&a->odp_lock);
		spin_lock_nested(&b->odp_lock, SINGLE_DEPTH_NESTING);
		__release(&b->odp_lock);
		__release(&a->odp_lock);
		return;
	}
	a = a ? a : b;
	if (a) {
		spin_lock(&a->odp_lock);
		__release(&a->odp_lock);
	}
}

void sxrc_odp_unlock(struct sxrc_umem *a, struct sxrc_umem *b)
{
	if (a) {
		__acquire(&a->odp_lock);
		spin_unlock(&a->odp_lock);
	}
	if (b && b != a) {
		__acquire(&b->odp_lock);
		spin_unlock(&b->odp_lock);
	}
}

/* Were @w's pages invalidated since they were faulted?  Under the lock. */
bool sxrc_odp_valid(struct sxrc_odp_win *w)
{
	lockdep_assert_held(&w->umem->odp_lock);
	return !mmu_interval_read_retry(&w->umem->notifier, w->seq);
}

/* The page @pgidx of a valid window that holds it. */
struct page *sxrc_odp_page(struct sxrc_odp_win *w, unsigned long pgidx)
{
	return hmm_pfn_to_page(w->pfns[pgidx - w->start]);
}

int sxrc_mr_advise(struct sxrc_call *call)
{
	const struct sxrc_advise_mr_in *in = call->in;
	struct sxrc_dev *dev = call->ctx->dev;
	bool write = in->advice == SXRC_ADVISE_PREFETCH_WRITE;
	bool fault = in->advice != SXRC_ADVISE_PREFETCH_NO_FAULT;
	struct sxrc_obj *pd_obj;
	struct sxrc_sge *sge;
	u32 i;
	int ret;

	if (in->advice > SXRC_ADVISE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (in->flags & ~SXRC_ADVISE_FLAGS_ALL)
		return -EINVAL;
	if (!in->num_sge || in->num_sge > SXRC_ADVISE_MAX_SGE)
		return -EINVAL;
	pd_obj = sxrc_obj_get(call->ctx, in->pd_handle, SXRC_TYPE_PD);
	if (IS_ERR(pd_obj))
		return PTR_ERR(pd_obj);
	sge = memdup_user(u64_to_user_ptr(in->sg_list),
			  array_size(in->num_sge, sizeof(*sge)));
	if (IS_ERR(sge)) {
		ret = PTR_ERR(sge);
		goto out_put;
	}

	for (i = 0, ret = 0; i < in->num_sge && !ret; i++) {
		struct sxrc_mr *mr = sxrc_mr_lookup(dev, sge[i].lkey);
		struct sxrc_umem *umem = NULL;
		u64 end, off = 0;

		if (!mr) {
			ret = -EFAULT;
			break;
		}
		spin_lock_bh(&mr->lock);
		if (mr->pd == to_sxrc_pd(pd_obj) && !mr->invalid && mr->umem &&
		    mr->umem->odp &&
		    (!write || (mr->access & SXRC_ACCESS_LOCAL_WRITE)) &&
		    !check_add_overflow(sge[i].addr, (u64)sge[i].length, &end) &&
		    sge[i].addr >= mr->iova &&
		    end <= mr->iova + mr->umem->length) {
			umem = mr->umem;
			sxrc_umem_use(umem);
			off = sge[i].addr - mr->iova +
			      offset_in_page(umem->addr);
		}
		spin_unlock_bh(&mr->lock);
		sxrc_obj_drop(&mr->obj);
		if (!umem) {
			ret = -EFAULT;
			break;
		}
		ret = sxrc_odp_prefault(umem, off, sge[i].length, write, fault);
		sxrc_umem_unuse(umem);
	}
	kfree(sge);
out_put:
	sxrc_obj_put(pd_obj);
	return ret;
}
