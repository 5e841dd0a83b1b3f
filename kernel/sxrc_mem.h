/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: memory: pinned and on-demand pages (struct sxrc_umem), memory
 * regions and memory windows.
 */
#ifndef SXRC_MEM_H
#define SXRC_MEM_H

#include <linux/iosys-map.h>
#include <linux/mmu_notifier.h>

#include "sxrc_obj.h"

/**
 * struct sxrc_page_run - pinned pages that are physically contiguous
 * @page: first page
 * @pgoff: index of @page from the page-aligned start of the umem
 * @npages: pages in the run
 */
struct sxrc_page_run {
	struct page *page;
	u32 pgoff;
	u32 npages;
};

/* Runs are kept in page-sized blocks: growing never copies them. */
#define SXRC_RUNS_PER_BLOCK	(PAGE_SIZE / sizeof(struct sxrc_page_run))

/**
 * struct sxrc_umem - the memory of an MR: user pages pinned, or a dma-buf
 *	mapped into the kernel
 * @ref: the MR holds one reference, each list resolved on it another
 * @copies: lists counted in use (not parked: copy.c): taken only under
 *	the MR's lock while the MR still points here, so once the MR let go
 *	of the umem (dereg, rereg) or was invalidated, the count only
 *	falls, and sxrc_umem_quiesce() waits for it to reach zero
 * @owner_mm: the mm charged for the pin (mmgrab'ed); NULL for a dma-buf
 * @dev: the device counting the pages
 * @addr: user address of the first byte, or its offset in the dma-buf
 * @length: bytes
 * @npages: pages pinned and charged, or pages of the dma-buf covered
 * @writable: pinned with FOLL_WRITE; pages are dirtied on unpin (a
 *	dma-buf is always writable)
 * @dmabuf: the dma-buf (a reference), or NULL for user pages
 * @map: the dma-buf's kernel mapping (dma_buf_vmap())
 * @kaddr: kernel address of the page-aligned start of a dma-buf region:
 *	copies go through it, not through @blocks (which stay empty)
 * @nruns: runs in use
 * @nblocks: blocks allocated
 * @max_blocks: entries of @blocks
 * @blocks: the runs (pages in order, coalesced when contiguous); run i
 *	is blocks[i / SXRC_RUNS_PER_BLOCK][i % SXRC_RUNS_PER_BLOCK]
 * @odp: an on-demand paging region (odp.c): nothing is pinned, @blocks
 *	stay empty, pages are looked up through @notifier as copies need them
 * @notifier: follows [addr, addr + length) of @owner_mm (ODP)
 * @odp_lock: held while the engine touches a page of the region, and by
 *	the invalidation callback to bump @notifier's sequence: a copy that
 *	checked the sequence under it uses pages not yet invalidated
 * @late: its last reference went in softirq: freed by a work item
 */
struct sxrc_umem {
	struct kref ref;
	atomic_t copies;
	struct mm_struct *owner_mm;
	struct sxrc_dev *dev;
	u64 addr;
	u64 length;
	unsigned long npages;
	bool writable;
	struct dma_buf *dmabuf;
	struct iosys_map map;
	void *kaddr;
	unsigned long nruns;
	unsigned long nblocks;
	unsigned long max_blocks;
	struct sxrc_page_run **blocks;
	bool odp;
	struct mmu_interval_notifier notifier;
	spinlock_t odp_lock;	/* see above */
	struct sxrc_late_put late;
};

/* Pages one ODP window of a copy cursor covers. */
#define SXRC_ODP_WIN		16

/**
 * struct sxrc_odp_win - pages of an ODP region faulted in for a cursor
 * @umem: the region they belong to, or NULL for an empty window
 * @start: index of the first page, from the page-aligned start of @umem
 * @n: pages in the window
 * @seq: @umem's notifier sequence they were faulted under; they may be
 *	used only under @umem->odp_lock while it still holds
 * @pfns: hmm pfns of the pages
 */
struct sxrc_odp_win {
	struct sxrc_umem *umem;
	unsigned long start;
	unsigned long n;
	unsigned long seq;
	unsigned long pfns[SXRC_ODP_WIN];
};

static inline struct sxrc_page_run *sxrc_umem_run(struct sxrc_umem *umem,
						  unsigned long i)
{
	return &umem->blocks[i / SXRC_RUNS_PER_BLOCK][i % SXRC_RUNS_PER_BLOCK];
}

/**
 * struct sxrc_mr - a memory region
 * @obj: handle-table header
 * @rereg_mutex: serialises reregistrations of this MR
 * @lock: protects @pd, @access, @iova, @umem, @invalid and @nmw
 * @pd: its PD (holds a dependents count on it)
 * @key: lkey == rkey
 * @access: SXRC_ACCESS_*
 * @iova: address of the first byte in work requests
 * @invalid: invalidated (IBV_WR_LOCAL_INV, SEND_WITH_INV): its keys fail
 *	until it is registered again (rereg)
 * @umem: the pinned pages
 * @nmw: memory windows bound to it: rereg fails with EBUSY meanwhile
 * @rcu: the MR is freed after a grace period: rkeys are looked up in
 *	dev->mrs under RCU
 */
struct sxrc_mr {
	struct sxrc_obj obj;
	struct mutex rereg_mutex;	/* one rereg at a time */
	spinlock_t lock;	/* protects pd, access, iova, umem */
	struct sxrc_pd *pd;
	u32 key;
	u32 access;
	u64 iova;
	bool invalid;
	struct sxrc_umem *umem;
	u32 nmw;
	struct rcu_head rcu;
};

static inline struct sxrc_mr *to_sxrc_mr(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_mr, obj);
}

/* Tag of a memory window in dev->mrs; an MR is untagged. */
#define SXRC_KEY_MW		1

/**
 * struct sxrc_mw - a memory window
 * @obj: handle-table header
 * @lock: protects @rkey, @mr, @qp, @addr, @length and @access; taken
 *	before the lock of the MR it is bound to, and held while an access
 *	through the window resolves its pages, so an unbind that has taken
 *	it sees every such access counted on the MR's pages
 * @pd: its PD (holds a dependents count on it)
 * @type: SXRC_MW_TYPE_*
 * @rkey: current key; its index (bits 31:8) never changes
 * @mr: the MR it is bound to (a dependents count and a reference), NULL
 *	while unbound
 * @qp: type 2: the QP that bound it (a reference), the only one
 *	through which it is reached
 * @addr: start of the window, in @mr's iova space
 * @length: bytes
 * @access: SXRC_ACCESS_MW_ALL bits it grants
 * @rcu: freed after a grace period: keys are looked up under RCU
 */
struct sxrc_mw {
	struct sxrc_obj obj;
	spinlock_t lock;	/* see above */
	struct sxrc_pd *pd;
	u32 type;
	u32 rkey;
	struct sxrc_mr *mr;
	struct sxrc_qp *qp;
	u64 addr;
	u64 length;
	u32 access;
	struct rcu_head rcu;
};

static inline struct sxrc_mw *to_sxrc_mw(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_mw, obj);
}

/**
 * struct sxrc_mw_binding - what an unbound window let go of
 * @mr: the MR (a reference; its dependents count is dropped), or NULL
 * @qp: the QP (its reference), or NULL
 * @umem: the MR's pages (a reference): accesses under way through the
 *	window are waited for on them
 */
struct sxrc_mw_binding {
	struct sxrc_mr *mr;
	struct sxrc_qp *qp;
	struct sxrc_umem *umem;
};

void sxrc_mw_unbind_locked(struct sxrc_mw *mw, struct sxrc_mw_binding *b);
void sxrc_mw_binding_release(struct sxrc_mw_binding *b);

#endif /* SXRC_MEM_H */
