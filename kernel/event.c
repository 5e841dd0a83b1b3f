// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: asynchronous events, read from the device fd.
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "sxrc.h"

/**
 * struct sxrc_event - a queued async event
 * @entry: on ctx->ev_list
 * @obj: the object it is about (counted when read, dropped when the
 *	object is destroyed first), or NULL for port events
 * @rec: what read() returns
 */
struct sxrc_event {
	struct list_head entry;
	struct sxrc_obj *obj;
	struct sxrc_async_event rec;
};

void sxrc_ctx_events_init(struct sxrc_ctx *ctx)
{
	mutex_init(&ctx->ev_read_mutex);
	spin_lock_init(&ctx->ev_lock);
	INIT_LIST_HEAD(&ctx->ev_list);
	init_waitqueue_head(&ctx->ev_wait);
}

/* Drop whatever is still queued; the context is closing. */
void sxrc_ctx_events_flush(struct sxrc_ctx *ctx)
{
	struct sxrc_event *ev, *tmp;

	list_for_each_entry_safe(ev, tmp, &ctx->ev_list, entry) {
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
 * is never called from interrupts.  A
 * full queue, or a failed allocation, drops the event and marks the next
 * delivered record with SXRC_ASYNC_FLAG_OVERFLOW.
 */
void sxrc_queue_event(struct sxrc_ctx *ctx, u32 event_type, u16 element_type,
		      u64 element, struct sxrc_obj *obj)
{
	struct sxrc_event *ev;

	ev = kzalloc(sizeof(*ev), GFP_ATOMIC | __GFP_ACCOUNT);

	spin_lock(&ctx->ev_lock);
	if (ctx->closed) {
		spin_unlock(&ctx->ev_lock);
		kfree(ev);
		return;
	}
	if (!ev || ctx->ev_count >= SXRC_ASYNC_QUEUE_MAX) {
		ctx->ev_overflow = true;
		spin_unlock(&ctx->ev_lock);
		kfree(ev);
		return;
	}
	ev->obj = obj;
	ev->rec.element = element;
	ev->rec.event_type = event_type;
	ev->rec.element_type = element_type;
	list_add_tail(&ev->entry, &ctx->ev_list);
	ctx->ev_count++;
	spin_unlock(&ctx->ev_lock);

	wake_up_interruptible(&ctx->ev_wait);
}

/* Tell every context open on @dev about a port event. */
void sxrc_dev_event(struct sxrc_dev *dev, u32 event_type, u32 port_num)
{
	struct sxrc_ctx *ctx;

	spin_lock(&dev->lock);
	list_for_each_entry(ctx, &dev->ctx_list, dev_entry)
		sxrc_queue_event(ctx, event_type, SXRC_ELEMENT_PORT, port_num,
				 NULL);
	spin_unlock(&dev->lock);
}

/*
 * Tell the owner of @obj about it; an XRC receive QP has no single
 * owner: every context registered with it hears.  May sleep.
 */
void sxrc_obj_event(struct sxrc_obj *obj, u32 event_type)
{
	if (obj->type == SXRC_TYPE_QP &&
	    to_sxrc_qp(obj)->type == SXRC_QPT_XRC_RECV) {
		sxrc_xrc_qp_event(to_sxrc_qp(obj), event_type);
		return;
	}
	sxrc_queue_event(obj->ctx, event_type, SXRC_ELEMENT_OBJECT,
			 obj->user_cookie, obj);
}

/*
 * @obj is being destroyed: its unread events go, so that the count the
 * destroy reports is what the library actually read.
 */
void sxrc_ctx_purge_events(struct sxrc_ctx *ctx, struct sxrc_obj *obj)
{
	struct sxrc_event *ev, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ctx->ev_read_mutex);
	spin_lock(&ctx->ev_lock);
	list_for_each_entry_safe(ev, tmp, &ctx->ev_list, entry) {
		if (ev->obj != obj)
			continue;
		list_move(&ev->entry, &dead);
		ctx->ev_count--;
	}
	spin_unlock(&ctx->ev_lock);
	mutex_unlock(&ctx->ev_read_mutex);

	list_for_each_entry_safe(ev, tmp, &dead, entry)
		kfree(ev);
}

static bool sxrc_events_pending(struct sxrc_ctx *ctx)
{
	bool pending;

	spin_lock(&ctx->ev_lock);
	pending = !list_empty(&ctx->ev_list);
	spin_unlock(&ctx->ev_lock);
	return pending;
}

ssize_t sxrc_event_read(struct file *file, char __user *buf, size_t len,
			loff_t *pos)
{
	struct sxrc_ctx *ctx = file->private_data;
	const size_t rec_size = sizeof(struct sxrc_async_event);
	struct sxrc_event *ev;
	size_t done = 0;
	int ret;

	if (len < rec_size)
		return -EINVAL;

	for (;;) {
		if (sxrc_events_pending(ctx))
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(ctx->ev_wait,
					       sxrc_events_pending(ctx));
		if (ret)
			return ret;
	}

	mutex_lock(&ctx->ev_read_mutex);
	while (done + rec_size <= len) {
		spin_lock(&ctx->ev_lock);
		ev = list_first_entry_or_null(&ctx->ev_list, struct sxrc_event,
					      entry);
		if (!ev) {
			spin_unlock(&ctx->ev_lock);
			break;
		}
		list_del(&ev->entry);
		ctx->ev_count--;
		if (ev->obj)
			atomic_inc(&ev->obj->async_events);
		if (ctx->ev_overflow) {
			ev->rec.flags |= SXRC_ASYNC_FLAG_OVERFLOW;
			ctx->ev_overflow = false;
		}
		spin_unlock(&ctx->ev_lock);

		if (copy_to_user(buf + done, &ev->rec, rec_size)) {
			/* Put it back so the event is not lost. */
			spin_lock(&ctx->ev_lock);
			if (ev->obj)
				atomic_dec(&ev->obj->async_events);
			list_add(&ev->entry, &ctx->ev_list);
			ctx->ev_count++;
			spin_unlock(&ctx->ev_lock);
			mutex_unlock(&ctx->ev_read_mutex);
			return done ? done : -EFAULT;
		}
		kfree(ev);
		done += rec_size;
	}
	mutex_unlock(&ctx->ev_read_mutex);
	return done;
}

__poll_t sxrc_event_poll(struct file *file, struct poll_table_struct *wait)
{
	struct sxrc_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->ev_wait, wait);
	return sxrc_events_pending(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}
