// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: rings shared with the library, and mmap() of the device fd.
 *
 * A ring is zeroed vmalloc memory charged to the creator's memory cgroup
 * (vmalloc_user() cannot be charged, so the pages are mapped one by one,
 * as remap_vmalloc_range() would).  The object that owns it (CQ, QP,
 * SRQ) holds a reference and publishes it in the context's mmap table
 * under a page offset; each VMA mapping it holds another reference, so
 * destroying the object never pulls memory from under a mapping.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "sxrc.h"

/**
 * sxrc_ring_alloc - allocate a ring and make it mappable
 * @ctx: the context whose fd maps it
 * @entries: slots, a power of two
 * @stride: bytes per slot
 *
 * Return: the ring with one reference, or an ERR_PTR.
 */
struct sxrc_ring *sxrc_ring_alloc(struct sxrc_ctx *ctx, u32 entries,
				  u32 stride)
{
	struct sxrc_ring *ring;
	size_t size;
	int ret;

	if (!is_power_of_2(entries))
		return ERR_PTR(-EINVAL);
	if (check_mul_overflow((size_t)entries, (size_t)stride, &size) ||
	    check_add_overflow(size, (size_t)SXRC_RING_HDR_SIZE, &size))
		return ERR_PTR(-EINVAL);
	size = PAGE_ALIGN(size);

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return ERR_PTR(-ENOMEM);
	/* Sized by the caller: fail rather than OOM-kill or warn. */
	ring->vaddr = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				__GFP_RETRY_MAYFAIL | __GFP_NOWARN);
	if (!ring->vaddr) {
		ret = -ENOMEM;
		goto err_free;
	}
	kref_init(&ring->ref);
	ring->size = size;
	ring->entries = entries;
	ring->stride = stride;

	/* Offsets are page numbers; 0 is never handed out. */
	ret = xa_alloc(&ctx->mmaps, &ring->mmap_id, ring,
		       XA_LIMIT(1, (U32_MAX >> PAGE_SHIFT) - 1),
		       GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_vfree;
	kref_get(&ring->ref);	/* for the mmap table */
	return ring;

err_vfree:
	vfree(ring->vaddr);
err_free:
	kfree(ring);
	return ERR_PTR(ret == -EBUSY ? -ENOMEM : ret);
}

static void sxrc_ring_free(struct kref *ref)
{
	struct sxrc_ring *ring = container_of(ref, struct sxrc_ring, ref);

	vfree(ring->vaddr);
	kfree(ring);
}

void sxrc_ring_put(struct sxrc_ring *ring)
{
	kref_put(&ring->ref, sxrc_ring_free);
}

/* No new mapping of @ring from now on; existing ones stay valid. */
void sxrc_ring_unmap(struct sxrc_ctx *ctx, struct sxrc_ring *ring)
{
	if (xa_erase(&ctx->mmaps, ring->mmap_id) == ring)
		sxrc_ring_put(ring);
}

void sxrc_wq_info(struct sxrc_ring *ring, struct sxrc_wq_info *info)
{
	info->entries = ring->entries;
	info->stride = ring->stride;
	info->mmap_offset = (u64)ring->mmap_id << PAGE_SHIFT;
	info->mmap_size = ring->size;
}

static void sxrc_vma_open(struct vm_area_struct *vma)
{
	struct sxrc_ring *ring = vma->vm_private_data;

	kref_get(&ring->ref);
}

static void sxrc_vma_close(struct vm_area_struct *vma)
{
	sxrc_ring_put(vma->vm_private_data);
}

static const struct vm_operations_struct sxrc_vm_ops = {
	.open = sxrc_vma_open,
	.close = sxrc_vma_close,
};

int sxrc_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct sxrc_ctx *ctx = file->private_data;
	struct sxrc_ring *ring;
	unsigned long off;
	int ret;

	if (!sxrc_ctx_member(ctx))
		return -EPERM;
	if (vma->vm_pgoff > U32_MAX || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	xa_lock(&ctx->mmaps);
	ring = xa_load(&ctx->mmaps, vma->vm_pgoff);
	if (ring)
		kref_get(&ring->ref);
	xa_unlock(&ctx->mmaps);
	if (!ring)
		return -EINVAL;

	/* The whole ring, or nothing. */
	if (vma->vm_end - vma->vm_start != ring->size) {
		ret = -EINVAL;
		goto err_put;
	}
	for (off = 0; off < ring->size; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(ring->vaddr + off));
		if (ret)
			goto err_put;
	}

	/* A fork()ed child gets nothing of the parent's queues. */
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = ring;
	vma->vm_ops = &sxrc_vm_ops;
	return 0;

err_put:
	sxrc_ring_put(ring);
	return ret;
}
