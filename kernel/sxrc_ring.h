/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the rings shared with the library through mmap() (submission
 * and receive queues, CQs), and the protocol both sides follow on them.
 */
#ifndef SXRC_RING_H
#define SXRC_RING_H

#include <linux/kref.h>
#include <linux/types.h>

#include <rdma/softxrc-abi.h>

/**
 * struct sxrc_ring - memory shared with the library through mmap()
 * @ref: the owning object holds one reference, each VMA another
 * @vaddr: zeroed vmalloc memory charged to the creator's memory cgroup;
 *	starts with struct sxrc_ring_hdr
 * @size: bytes, a multiple of PAGE_SIZE
 * @entries: slots, a power of two
 * @stride: bytes per slot
 * @mmap_id: its key in ctx->mmaps (offset >> PAGE_SHIFT), 0 if none
 */
struct sxrc_ring {
	struct kref ref;
	void *vaddr;
	size_t size;
	u32 entries;
	u32 stride;
	u32 mmap_id;
};

static inline struct sxrc_ring_hdr *sxrc_ring_hdr(struct sxrc_ring *ring)
{
	return ring->vaddr;
}

static inline void *sxrc_ring_slot(struct sxrc_ring *ring, u32 index)
{
	return ring->vaddr + SXRC_RING_HDR_SIZE +
	       (size_t)(index & (ring->entries - 1)) * ring->stride;
}

/*
 * The two indices of a ring are free-running u32s, one per side.  Each
 * side publishes its own with a store-release once the slots it covers
 * are whole (producer) or read (consumer), and reads the other's with a
 * load-acquire before it touches those slots.  Every pairing, here and in
 * the library (user/verbs/sxu.h, the same helpers), goes through these.  The
 * producer is never more than a ring ahead of the consumer: the library
 * writes one of the two indices, so a distance past the ring's size means
 * a corrupt ring, which fails its own QP or CQ and nothing else.
 */

/* Consumer: the producer's index; the slots before it are whole. */
static inline u32 sxrc_ring_prod(struct sxrc_ring *ring)
{
	/* Pairs with the producer's sxrc_(u)ring_publish_prod(). */
	return smp_load_acquire(&sxrc_ring_hdr(ring)->prod);
}

/* Producer: the consumer's index; the slots before it may be reused. */
static inline u32 sxrc_ring_cons(struct sxrc_ring *ring)
{
	/* Pairs with the consumer's sxrc_(u)ring_publish_cons(). */
	return smp_load_acquire(&sxrc_ring_hdr(ring)->cons);
}

/* Entries from @cons to @prod, or -EIO if that is more than the ring. */
static inline int sxrc_ring_count(struct sxrc_ring *ring, u32 prod, u32 cons)
{
	return prod - cons > ring->entries ? -EIO : (int)(prod - cons);
}

static inline void sxrc_ring_publish_prod(struct sxrc_ring *ring, u32 prod)
{
	/* The slots before @prod are whole: pairs with sxrc_(u)ring_prod(). */
	smp_store_release(&sxrc_ring_hdr(ring)->prod, prod);
}

static inline void sxrc_ring_publish_cons(struct sxrc_ring *ring, u32 cons)
{
	/* The slots before @cons are read: pairs with sxrc_(u)ring_cons(). */
	smp_store_release(&sxrc_ring_hdr(ring)->cons, cons);
}

#endif /* SXRC_RING_H */
