// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: asynchronous events, read from the device fd.  A context's
 * queue of them is an event queue (evq.c) as a channel's is; what is
 * queued, the overflow flag and read() are here.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sxrc.h"

/**
 * struct sxrc_event - a queued async event
 * @entry: on ctx->evq.events
 * @obj: the object it is about, or NULL for port events.  No reference
 *	is held while the event is queued: the object's teardown removes
 *	its events (sxrc_obj_kill_events()) before its memory can go.  A
 *	reader takes a reference when it dequeues the event.
 * @rec: what read() returns
 */
struct sxrc_event {
	struct list_head entry;
	struct sxrc_obj *obj;
	struct sxrc_async_event rec;
};

/* Drop whatever is still queued; the context is closing. */
void sxrc_ctx_events_flush(struct sxrc_ctx *ctx)
{
	struct sxrc_event *ev, *tmp;

	list_for_each_entry_safe(ev, tmp, &ctx->evq.events, entry) {
		list_del(&ev->entry);
		kfree(ev);
	}
	ctx->ev_count = 0;
}

/**
 * sxrc_queue_event - queue one async event for a context
 * @ctx: the context to tell
 * @event_type: SXRC_EVENT_*
 * @element_type: enum sxrc_async_element
 * @element: port number or user cookie
 * @obj: the object the event is about, or NULL
 *
 * Does not sleep (it runs under the data path's spinlocks' callers); it
 * is never called from interrupts.  A full queue, or a failed
 * allocation, drops the event and marks the next delivered record with
 * SXRC_ASYNC_FLAG_OVERFLOW.  An event about an object already torn down
 * (a requester still held it) is dropped silently: nobody can
 * acknowledge it any more.
 */
void sxrc_queue_event(struct sxrc_ctx *ctx, u32 event_type, u16 element_type,
		      u64 element, struct sxrc_obj *obj)
{
	struct sxrc_event *ev;

	ev = kzalloc(sizeof(*ev), GFP_ATOMIC | __GFP_ACCOUNT);

	spin_lock_bh(&ctx->evq.lock);
	if (ctx->closed || (obj && obj->dead)) {
		spin_unlock_bh(&ctx->evq.lock);
		kfree(ev);
		return;
	}
	if (!ev || ctx->ev_count >= SXRC_ASYNC_QUEUE_MAX) {
		ctx->ev_overflow = true;
		spin_unlock_bh(&ctx->evq.lock);
		kfree(ev);
		return;
	}
	ev->obj = obj;
	ev->rec.element = element;
	ev->rec.event_type = event_type;
	ev->rec.element_type = element_type;
	list_add_tail(&ev->entry, &ctx->evq.events);
	ctx->ev_count++;
	spin_unlock_bh(&ctx->evq.lock);

	wake_up_interruptible(&ctx->evq.wait);
}

/* Tell every context open on @dev about a port event. */
void sxrc_dev_event(struct sxrc_dev *dev, u32 event_type, u32 port_num)
{
	struct sxrc_ctx *ctx;

	spin_lock_bh(&dev->lock);
	list_for_each_entry(ctx, &dev->ctx_list, dev_entry)
		sxrc_queue_event(ctx, event_type, SXRC_ELEMENT_PORT, port_num,
				 NULL);
	spin_unlock_bh(&dev->lock);
}

/* Tell the owner of @obj about it, or whom its class says.  May sleep. */
void sxrc_obj_event(struct sxrc_obj *obj, u32 event_type)
{
	if (obj->ops->event) {
		obj->ops->event(obj, event_type);
		return;
	}
	sxrc_queue_event(obj->ctx, event_type, SXRC_ELEMENT_OBJECT,
			 obj->user_cookie, obj);
}

/*
 * @obj is being torn down: its unread events go, so that the count the
 * destroy reports is what the library actually read, and none is queued
 * from now on.  A reader that dequeued one of its events holds a
 * reference and counted it already.
 */
void sxrc_obj_kill_events(struct sxrc_obj *obj)
{
	struct sxrc_ctx *ctx = obj->ctx;
	struct sxrc_event *ev, *tmp;
	LIST_HEAD(dead);

	spin_lock_bh(&ctx->evq.lock);
	obj->dead = true;
	list_for_each_entry_safe(ev, tmp, &ctx->evq.events, entry) {
		if (ev->obj != obj)
			continue;
		list_move(&ev->entry, &dead);
		ctx->ev_count--;
	}
	spin_unlock_bh(&ctx->evq.lock);

	list_for_each_entry_safe(ev, tmp, &dead, entry)
		kfree(ev);
}

ssize_t sxrc_event_read(struct file *file, char __user *buf, size_t len,
			loff_t *pos)
{
	struct sxrc_ctx *ctx = file->private_data;
	struct sxrc_evq *q = &ctx->evq;
	const size_t rec_size = sizeof(struct sxrc_async_event);
	struct sxrc_event *ev;
	size_t done = 0;
	int ret;

	/* Events are the members': a process that did not import steals none. */
	if (!sxrc_ctx_member(ctx))
		return -EPERM;
	if (len < rec_size)
		return -EINVAL;

	ret = sxrc_evq_wait(q, file);
	if (ret)
		return ret;

	while (done + rec_size <= len) {
		struct sxrc_obj *obj;

		spin_lock_bh(&q->lock);
		ev = list_first_entry_or_null(&q->events, struct sxrc_event,
					      entry);
		if (!ev) {
			spin_unlock_bh(&q->lock);
			break;
		}
		list_del(&ev->entry);
		ctx->ev_count--;
		/*
		 * Counted now, under the lock the teardown takes: the destroy
		 * reports an event either purged or counted, never lost.  The
		 * reference keeps the object's memory while no lock is held.
		 */
		obj = ev->obj;
		if (obj) {
			kref_get(&obj->ref);
			atomic_inc(&obj->async_events);
		}
		if (ctx->ev_overflow) {
			ev->rec.flags |= SXRC_ASYNC_FLAG_OVERFLOW;
			ctx->ev_overflow = false;
		}
		spin_unlock_bh(&q->lock);

		/* No lock is held here: the copy may fault and wait. */
		if (copy_to_user(buf + done, &ev->rec, rec_size)) {
			/* Put it back so the event is not lost... */
			spin_lock_bh(&q->lock);
			if (!obj || !obj->dead) {
				if (obj)
					atomic_dec(&obj->async_events);
				list_add(&ev->entry, &q->events);
				ctx->ev_count++;
				ev = NULL;
			}
			/*
			 * ...unless its object went meanwhile: the destroy
			 * counted it, and only a caller reading with a bad
			 * buffer while destroying its own objects sees that.
			 */
			spin_unlock_bh(&q->lock);
			kfree(ev);
			if (obj)
				sxrc_obj_drop(obj);
			return done ? done : -EFAULT;
		}
		kfree(ev);
		if (obj)
			sxrc_obj_drop(obj);
		done += rec_size;
	}
	return done;
}

__poll_t sxrc_event_poll(struct file *file, struct poll_table_struct *wait)
{
	struct sxrc_ctx *ctx = file->private_data;

	return sxrc_evq_poll(&ctx->evq, file, wait);
}
