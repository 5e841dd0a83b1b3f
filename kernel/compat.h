/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the few kernel API differences between the kernels softxrc
 * builds for (6.1 and later).
 */
#ifndef SXRC_COMPAT_H
#define SXRC_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/version.h>
#include <net/genetlink.h>

/* 6.12 moved the unaligned access helpers from asm/ to linux/. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#include <asm/unaligned.h>
#else
#include <linux/unaligned.h>
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* 6.3 made vm_flags read-only and added accessors. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/*
 * Read-only long-term pins.  Before 6.2 a pin without FOLL_WRITE may
 * return a page the process does not own yet (the shared zero page, a
 * page still shared copy-on-write): its later writes would land
 * elsewhere and the MR would serve stale data.  Those kernels' own RDMA
 * core pins read-only regions with FOLL_WRITE | FOLL_FORCE, breaking the
 * sharing up front; 6.2 made plain read-only long-term pins reliable.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
#define SXRC_FOLL_READONLY	(FOLL_WRITE | FOLL_FORCE)
#else
#define SXRC_FOLL_READONLY	0
#endif

/*
 * Pin up to @nr pages at @start for reading, with @gup_flags; returns as
 * pin_user_pages_fast().  Before 6.2 a forced write is refused on a
 * shared mapping the process cannot write (a read-only hugetlbfs or
 * tmpfs file, say), and there it is not needed: a shared mapping has no
 * copy-on-write to break, its pages are the file's.  Such a VMA is
 * pinned plainly, under the mmap lock so that it cannot change between
 * the look and the pin, and no further than its end.
 */
static inline long sxrc_pin_readonly(unsigned long start, unsigned long nr,
				     unsigned int gup_flags,
				     struct page **pages)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	long got;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, start);
	if (vma && !is_cow_mapping(vma->vm_flags)) {
		nr = min(nr, (vma->vm_end - start) >> PAGE_SHIFT);
		gup_flags &= ~(FOLL_WRITE | FOLL_FORCE);
	}
	got = pin_user_pages(start, nr, gup_flags, pages, NULL);
	mmap_read_unlock(mm);
	return got;
#else
	return pin_user_pages_fast(start, nr, gup_flags, pages);
#endif
}

/*
 * 6.2 moved dma-buf mappings under the buffer's reservation lock:
 * dma_buf_vmap() now expects it held and the _unlocked variants take
 * it.  Before, dma_buf_vmap() took the buffer's own mutex itself.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
static inline int dma_buf_vmap_unlocked(struct dma_buf *dmabuf,
					struct iosys_map *map)
{
	return dma_buf_vmap(dmabuf, map);
}

static inline void dma_buf_vunmap_unlocked(struct dma_buf *dmabuf,
					   struct iosys_map *map)
{
	dma_buf_vunmap(dmabuf, map);
}
#endif

/* 6.2 put a struct genl_info into the dump state. */
static inline struct nlattr **sxrc_genl_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->attrs;
#else
	return genl_dumpit_info(cb)->info.attrs;
#endif
}

#endif /* SXRC_COMPAT_H */
