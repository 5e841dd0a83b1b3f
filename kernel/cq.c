// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: completion queues and completion channels.
 *
 * The kernel produces CQEs into a ring the library polls without a
 * system call (uapi: "Mapped rings").  Arming is a word in the same
 * ring: the library stores the arm request, the kernel swaps it back to
 * zero when a matching completion arrives and queues the CQ on its
 * channel, a file of its own that the application reads or polls.
 */
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "sxrc.h"
#include "sxrc_methods.h"
#include "sxrc_trace.h"

/* ------------------------------------------------------------------
 * Completion channels
 */

static void sxrc_channel_free(struct sxrc_evfile *evf)
{
	kfree(container_of(evf, struct sxrc_channel, evf));
}

static ssize_t sxrc_channel_read(struct file *file, char __user *buf,
				 size_t len, loff_t *pos)
{
	struct sxrc_evfile *evf = file->private_data;
	struct sxrc_evq *q = &evf->q;
	struct sxrc_comp_event rec;
	struct sxrc_cq *cq;
	size_t done = 0;
	int ret;

	if (len < sizeof(rec))
		return -EINVAL;

	ret = sxrc_evq_wait(q, file);
	if (ret)
		return ret;

	while (done + sizeof(rec) <= len) {
		spin_lock_bh(&q->lock);
		cq = list_first_entry_or_null(&q->events, struct sxrc_cq,
					      ev_entry);
		if (!cq) {
			spin_unlock_bh(&q->lock);
			break;
		}
		list_del_init(&cq->ev_entry);
		rec.cq_cookie = cq->obj.user_cookie;
		/*
		 * Counted now, while the CQ cannot be destroyed under us: a
		 * record the library may never see (EFAULT below) is one it
		 * cannot acknowledge, so it is taken back.
		 */
		atomic_inc(&cq->comp_events);
		kref_get(&cq->obj.ref);
		spin_unlock_bh(&q->lock);

		if (copy_to_user(buf + done, &rec, sizeof(rec))) {
			atomic_dec(&cq->comp_events);
			sxrc_obj_drop(&cq->obj);
			return done ? done : -EFAULT;
		}
		sxrc_obj_drop(&cq->obj);
		done += sizeof(rec);
	}
	return done;
}

static const struct file_operations sxrc_channel_fops = {
	.owner = THIS_MODULE,
	.read = sxrc_channel_read,
	.poll = sxrc_evfile_poll,
	.release = sxrc_evfile_release,
};

int sxrc_channel_create(struct sxrc_call *call)
{
	struct sxrc_channel *ch;
	int ret;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	sxrc_evfile_init(&ch->evf, call->ctx->dev, sxrc_channel_free);
	ret = sxrc_evfile_create(call, &ch->evf, "[softxrc-channel]",
				 &sxrc_channel_fops);
	if (ret)
		kfree(ch);
	return ret;
}

/* Look up a channel fd given to SXRC_CQ_CREATE; returns a reference. */
static struct sxrc_channel *sxrc_channel_get(struct sxrc_dev *dev, int fd)
{
	struct sxrc_evfile *evf = sxrc_evfile_get(dev, fd, &sxrc_channel_fops);

	if (IS_ERR(evf))
		return ERR_CAST(evf);
	return container_of(evf, struct sxrc_channel, evf);
}

static void sxrc_channel_put(struct sxrc_channel *ch)
{
	sxrc_evfile_put(&ch->evf);
}

static void sxrc_channel_notify(struct sxrc_cq *cq)
{
	struct sxrc_channel *ch = cq->channel;

	if (!ch)
		return;
	/*
	 * An event already waiting for this CQ covers this one too.  A
	 * destroyed CQ is never listed again: its destroy unlisted it under
	 * this lock after marking it dead.
	 */
	spin_lock_bh(&ch->evf.q.lock);
	if (list_empty(&cq->ev_entry) && !READ_ONCE(cq->dead))
		list_add_tail(&cq->ev_entry, &ch->evf.q.events);
	spin_unlock_bh(&ch->evf.q.lock);
	wake_up_interruptible(&ch->evf.q.wait);
}

/* ------------------------------------------------------------------
 * Completion queues
 */

/**
 * sxrc_cq_post - produce one completion
 * @cq: the CQ
 * @cqe: the completion
 *
 * Runs in process context (a doorbell, a work item) and does not sleep;
 * none of the data path's locks is taken from interrupts, so none
 * disables them.  Fires the channel if the CQ is armed
 * for this completion.  A full ring (or a consumer index the library
 * moved past the producer) is an overrun: the CQ stops producing, is
 * marked SXRC_RING_ERROR and IBV_EVENT_CQ_ERR is raised.  A destroyed CQ
 * (a requester still held the QP that uses it) takes nothing.
 *
 * Return: 0, -ENOSPC if the completion was lost to an overrun, or
 * -ENOENT if the CQ is gone.
 */
int sxrc_cq_post(struct sxrc_cq *cq, const struct sxrc_cqe *cqe)
{
	bool notify = false, overrun = false;
	struct sxrc_ring_hdr *hdr;
	struct sxrc_cqe_ts *slot;
	int used;
	u32 arm;

	spin_lock_bh(&cq->lock);
	if (cq->dead || cq->error) {
		spin_unlock_bh(&cq->lock);
		return cq->dead ? -ENOENT : -ENOSPC;
	}
	hdr = sxrc_ring_hdr(cq->ring);
	used = sxrc_ring_count(cq->ring, cq->prod, sxrc_ring_cons(cq->ring));
	if (used < 0 || used == cq->ring->entries) {
		cq->error = true;
		WRITE_ONCE(hdr->flags, SXRC_RING_ERROR);
		overrun = true;
	} else {
		slot = sxrc_ring_slot(cq->ring, cq->prod);
		memcpy(&slot->cqe, cqe, sizeof(*cqe));
		if (cq->stride == sizeof(*slot)) {
			slot->ts_ns = ktime_get_ns();
			slot->wallclock_ns = ktime_get_real_ns();
		}
		cq->prod++;
		sxrc_ring_publish_prod(cq->ring, cq->prod);
		/*
		 * Pairs with the library's full barrier between storing
		 * arm and polling again: one of us sees the other.
		 */
		smp_mb();
		arm = READ_ONCE(hdr->arm);
		if ((arm == SXRC_CQ_ARM_NEXT ||
		     (arm == SXRC_CQ_ARM_SOLICITED &&
		      (cqe->solicited || cqe->status != SXRC_WC_SUCCESS))) &&
		    cmpxchg(&hdr->arm, arm, SXRC_CQ_ARM_NONE) == arm)
			notify = true;
	}
	spin_unlock_bh(&cq->lock);

	if (cqe->status != SXRC_WC_SUCCESS)
		trace_sxrc_cqe_err(cq, cqe);
	else
		trace_sxrc_cqe(cq, cqe);
	if (overrun) {
		sxrc_obj_event(&cq->obj, SXRC_EVENT_CQ_ERR);
		return -ENOSPC;
	}
	if (notify)
		sxrc_channel_notify(cq);
	return 0;
}

/**
 * sxrc_cq_notify - SXRC_CQ_NOTIFY: fire an arm for waiting completions
 * @call: input struct sxrc_handle_in
 *
 * The library stored an arm and found a completion that matches it
 * already in the ring (uapi: "CQ arming").  The arm fires as for a new
 * completion if it is still set (a completion since may have fired it)
 * and the ring is not empty.  Which waiting completion matched is the
 * library's word: a wrong one only wakes its own channel.
 *
 * Return: 0, or -EINVAL for a handle that names no CQ of the context.
 */
int sxrc_cq_notify(struct sxrc_call *call)
{
	const struct sxrc_handle_in *in = call->in;
	struct sxrc_ring_hdr *hdr;
	struct sxrc_obj *obj;
	struct sxrc_cq *cq;
	bool notify = false;
	u32 arm;

	if (in->reserved)
		return -EINVAL;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_CQ);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cq = to_sxrc_cq(obj);

	spin_lock_bh(&cq->lock);
	hdr = sxrc_ring_hdr(cq->ring);
	arm = READ_ONCE(hdr->arm);
	if (!cq->dead && !cq->error &&
	    (arm == SXRC_CQ_ARM_NEXT || arm == SXRC_CQ_ARM_SOLICITED) &&
	    sxrc_ring_count(cq->ring, cq->prod, sxrc_ring_cons(cq->ring)) > 0 &&
	    cmpxchg(&hdr->arm, arm, SXRC_CQ_ARM_NONE) == arm)
		notify = true;
	spin_unlock_bh(&cq->lock);

	if (notify)
		sxrc_channel_notify(cq);
	sxrc_obj_put(obj);
	return 0;
}

static void sxrc_cq_destroy_obj(struct sxrc_obj *obj)
{
	struct sxrc_cq *cq = to_sxrc_cq(obj);
	struct sxrc_channel *ch = cq->channel;

	spin_lock_bh(&cq->lock);
	WRITE_ONCE(cq->dead, true);
	spin_unlock_bh(&cq->lock);
	if (ch) {
		spin_lock_bh(&ch->evf.q.lock);
		list_del_init(&cq->ev_entry);
		spin_unlock_bh(&ch->evf.q.lock);
	}
	sxrc_ring_unmap(obj->ctx, cq->ring);
}

static void sxrc_cq_release(struct sxrc_obj *obj)
{
	struct sxrc_cq *cq = to_sxrc_cq(obj);

	if (cq->channel)
		sxrc_channel_put(cq->channel);
	sxrc_ring_put(cq->ring);
	kfree(cq);
}

static const struct sxrc_obj_ops sxrc_cq_ops = {
	.destroy = sxrc_cq_destroy_obj,
	.release = sxrc_cq_release,
};

static int sxrc_cq_entries(u32 cqe, u32 *entries)
{
	if (!cqe || cqe > SXRC_MAX_CQE)
		return -EINVAL;
	*entries = roundup_pow_of_two(cqe);
	return 0;
}

static void sxrc_cq_ring_out(struct sxrc_cq *cq, struct sxrc_cq_ring_out *out)
{
	out->handle = cq->obj.handle;
	out->cqe = cq->ring->entries;
	out->mmap_offset = (u64)cq->ring->mmap_id << PAGE_SHIFT;
	out->mmap_size = cq->ring->size;
	out->cqe_stride = cq->stride;
}

int sxrc_cq_create(struct sxrc_call *call)
{
	const struct sxrc_create_cq_in *in = call->in;
	struct sxrc_ctx *ctx = call->ctx;
	struct sxrc_cq *cq;
	u32 entries;
	int ret;

	if ((in->flags & ~SXRC_CQ_CREATE_FLAGS_ALL) || in->comp_vector >= 1 ||
	    in->channel_fd < -1)
		return -EINVAL;
	ret = sxrc_cq_entries(in->cqe, &entries);
	if (ret)
		return ret;

	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	INIT_LIST_HEAD(&cq->ev_entry);
	cq->stride = in->flags & SXRC_CQ_CREATE_TIMESTAMP ?
		     sizeof(struct sxrc_cqe_ts) : sizeof(struct sxrc_cqe);

	if (in->channel_fd >= 0) {
		cq->channel = sxrc_channel_get(ctx->dev, in->channel_fd);
		if (IS_ERR(cq->channel)) {
			ret = PTR_ERR(cq->channel);
			goto err_free;
		}
	}

	cq->ring = sxrc_ring_alloc(ctx, entries, cq->stride);
	if (IS_ERR(cq->ring)) {
		ret = PTR_ERR(cq->ring);
		goto err_channel;
	}

	ret = sxrc_obj_init(call, &cq->obj, SXRC_TYPE_CQ, &sxrc_cq_ops,
			    in->user_cookie);
	if (ret)
		goto err_ring;
	sxrc_cq_ring_out(cq, call->out);
	return 0;

err_ring:
	sxrc_ring_unmap(ctx, cq->ring);
	sxrc_ring_put(cq->ring);
err_channel:
	if (!IS_ERR_OR_NULL(cq->channel))
		sxrc_channel_put(cq->channel);
err_free:
	kfree(cq);
	return ret;
}

static atomic_t *sxrc_cq_comp_events(struct sxrc_obj *obj)
{
	return &to_sxrc_cq(obj)->comp_events;
}

int sxrc_cq_destroy(struct sxrc_call *call)
{
	return sxrc_destroy_counted(call, SXRC_TYPE_CQ, sxrc_cq_comp_events);
}

int sxrc_cq_resize(struct sxrc_call *call)
{
	const struct sxrc_resize_cq_in *in = call->in;
	struct sxrc_ring *ring, *old;
	struct sxrc_ring_hdr *hdr;
	struct sxrc_obj *obj;
	struct sxrc_cq *cq;
	u32 entries, cons, i;
	int n;
	int ret;

	ret = sxrc_cq_entries(in->cqe, &entries);
	if (ret)
		return ret;
	obj = sxrc_obj_get(call->ctx, in->handle, SXRC_TYPE_CQ);
	if (IS_ERR(obj))
		return PTR_ERR(obj);
	cq = to_sxrc_cq(obj);

	ring = sxrc_ring_alloc(call->ctx, entries, cq->stride);
	if (IS_ERR(ring)) {
		ret = PTR_ERR(ring);
		goto out_put;
	}

	spin_lock_bh(&cq->lock);
	old = cq->ring;
	hdr = sxrc_ring_hdr(old);
	cons = sxrc_ring_cons(old);
	n = sxrc_ring_count(old, cq->prod, cons);
	if (n < 0 || (u32)n > entries) {
		/* Corrupt index, or more queued than the new size holds. */
		spin_unlock_bh(&cq->lock);
		sxrc_ring_unmap(call->ctx, ring);
		sxrc_ring_put(ring);
		ret = -EINVAL;
		goto out_put;
	}
	for (i = 0; i < n; i++)
		memcpy(sxrc_ring_slot(ring, i), sxrc_ring_slot(old, cons + i),
		       cq->stride);
	sxrc_ring_hdr(ring)->prod = n;
	sxrc_ring_hdr(ring)->arm = READ_ONCE(hdr->arm);
	sxrc_ring_hdr(ring)->flags = READ_ONCE(hdr->flags);
	cq->prod = n;
	cq->ring = ring;
	spin_unlock_bh(&cq->lock);

	sxrc_ring_unmap(call->ctx, old);
	sxrc_ring_put(old);
	sxrc_cq_ring_out(cq, call->out);
	ret = 0;

out_put:
	sxrc_obj_put(obj);
	return ret;
}
