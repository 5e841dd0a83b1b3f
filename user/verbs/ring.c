// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: rings shared with the kernel.
 *
 * The ordering rules are those of uapi "Mapped rings": a producer fills
 * a slot and publishes it with a store-release of its index; a consumer
 * reads the other side's index with a load-acquire.  C11 atomics on the
 * shared 32-bit indices give exactly the kernel's smp_load_acquire() /
 * smp_store_release() pairing.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "sxu.h"

/* Remember a mapping in its context; returns 0 or ENOMEM. */
static int sxu_track(struct ibv_context *context, void *addr, size_t size)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	int ret = 0;

	pthread_mutex_lock(&ctx->maps_lock);
	if (ctx->nmaps == ctx->maxmaps) {
		size_t max = ctx->maxmaps ? ctx->maxmaps * 2 : 16;
		struct sxu_map *maps = realloc(ctx->maps, max * sizeof(*maps));

		if (!maps) {
			ret = ENOMEM;
			goto out;
		}
		ctx->maps = maps;
		ctx->maxmaps = max;
	}
	ctx->maps[ctx->nmaps++] = (struct sxu_map){ addr, size };
out:
	pthread_mutex_unlock(&ctx->maps_lock);
	return ret;
}

static void sxu_untrack(struct ibv_context *context, void *addr)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	size_t i;

	pthread_mutex_lock(&ctx->maps_lock);
	for (i = 0; i < ctx->nmaps; i++) {
		if (ctx->maps[i].addr != addr)
			continue;
		ctx->maps[i] = ctx->maps[--ctx->nmaps];
		break;
	}
	pthread_mutex_unlock(&ctx->maps_lock);
}

/* ibv_close_device(): the kernel can let go of the context now. */
void sxu_unmap_all(struct ibv_context *context)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	size_t i;

	pthread_mutex_lock(&ctx->maps_lock);
	for (i = 0; i < ctx->nmaps; i++)
		munmap(ctx->maps[i].addr, ctx->maps[i].size);
	free(ctx->maps);
	ctx->maps = NULL;
	ctx->nmaps = 0;
	ctx->maxmaps = 0;
	pthread_mutex_unlock(&ctx->maps_lock);
}

int sxu_uring_map(struct ibv_context *context, struct sxu_uring *r,
		   uint64_t offset, uint64_t size, uint32_t entries,
		   uint32_t stride)
{
	void *map;
	int ret;

	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   context->cmd_fd, offset);
	if (map == MAP_FAILED)
		return errno;
	ret = sxu_track(context, map, size);
	if (ret) {
		munmap(map, size);
		return ret;
	}
	r->map = map;
	r->size = size;
	r->hdr = map;
	r->entries = entries;
	r->stride = stride;
	return 0;
}

void sxu_uring_unmap(struct ibv_context *context, struct sxu_uring *r)
{
	if (r->map) {
		sxu_untrack(context, r->map);
		munmap(r->map, r->size);
	}
	r->map = NULL;
}

int sxu_uwq_init(struct ibv_context *context, struct sxu_uwq *wq,
		  const struct sxrc_wq_info *info, uint32_t max_sge,
		  uint32_t max_inline)
{
	int ret;

	memset(wq, 0, sizeof(*wq));
	sxu_spin_init(&wq->lock);
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	if (!info->mmap_size)
		return 0;
	ret = sxu_uring_map(context, &wq->ring, info->mmap_offset,
			     info->mmap_size, info->entries, info->stride);
	if (ret)
		return ret;
	/* The kernel may have consumed nothing yet; start where it is. */
	wq->prod = atomic_load_explicit(SXU_RING_IDX(&wq->ring.hdr->prod),
					memory_order_relaxed);
	return 0;
}

void sxu_uwq_fini(struct ibv_context *context, struct sxu_uwq *wq)
{
	sxu_uring_unmap(context, &wq->ring);
}

/* Post receive WQEs into an RQ or SRQ ring; returns 0 or an errno. */
int sxu_post_recv_ring(struct sxu_uwq *wq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct sxu_uring *r = &wq->ring;
	int ret = 0;

	sxu_uwq_lock(wq);
	for (; wr; wr = wr->next) {
		struct sxrc_recv_wqe *wqe;
		struct sxrc_sge *sge;
		int i;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (sxu_uring_full(r, wq->prod)) {
			ret = ENOMEM;
			break;
		}
		wqe = sxu_uring_slot(r, wq->prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		sge = (struct sxrc_sge *)(wqe + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
		wq->prod++;
	}
	/* Publish every WQE written above at once. */
	sxu_uring_publish_prod(r, wq->prod);
	sxu_uwq_unlock(wq);

	if (ret && bad_wr)
		*bad_wr = wr;
	return ret;
}

/*
 * rdma-core's rule for destroying a CQ, QP or SRQ: wait until the
 * application acknowledged every event the kernel says it delivered.
 */
void sxu_wait_events(pthread_mutex_t *mutex, pthread_cond_t *cond,
		      const uint32_t *acked, uint32_t reported)
{
	pthread_mutex_lock(mutex);
	while (*acked < reported)
		pthread_cond_wait(cond, mutex);
	pthread_mutex_unlock(mutex);
}
