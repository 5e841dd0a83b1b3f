// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: event queues, as upstream's ib_uverbs_event_queue serves
 * both uverbs' async and completion event files.  A context's async
 * events (event.c, read from the device file), a completion channel
 * (cq.c) and a CM event channel (cm_chan.c) are each a struct sxrc_evq:
 * the lock, the list, the readers' wait queue, and here the test for
 * something queued, read()'s wait for it and poll().  What is queued
 * (async events, CQs with an event, CM events) and read() are each
 * owner's own.
 *
 * A channel is read through a file of its own, a struct sxrc_evfile
 * around its queue: its lifetime, poll(), release(), the file's creation
 * and its lookup by fd are here too.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>

#include "sxrc.h"

void sxrc_evq_init(struct sxrc_evq *q)
{
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->events);
	init_waitqueue_head(&q->wait);
}

static bool sxrc_evq_pending(struct sxrc_evq *q)
{
	bool pending;

	spin_lock_bh(&q->lock);
	pending = !list_empty(&q->events);
	spin_unlock_bh(&q->lock);
	return pending;
}

/*
 * read()'s wait for something queued on @q, read through @file: 0 once
 * there is, -EAGAIN for a non-blocking file, or a signal's error.
 */
int sxrc_evq_wait(struct sxrc_evq *q, struct file *file)
{
	int ret;

	while (!sxrc_evq_pending(q)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(q->wait, sxrc_evq_pending(q));
		if (ret)
			return ret;
	}
	return 0;
}

/* poll() of @file, which reads @q. */
__poll_t sxrc_evq_poll(struct sxrc_evq *q, struct file *file,
		       struct poll_table_struct *wait)
{
	poll_wait(file, &q->wait, wait);
	return sxrc_evq_pending(q) ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * A new channel's file on @dev with one reference (the caller's, which
 * passes to the file); @free frees the channel @evf is in, with what it
 * still holds.
 */
void sxrc_evfile_init(struct sxrc_evfile *evf, struct sxrc_dev *dev,
		      void (*free)(struct sxrc_evfile *evf))
{
	sxrc_evq_init(&evf->q);
	kref_init(&evf->ref);
	evf->dev = dev;
	evf->free = free;
}

static void sxrc_evfile_free(struct kref *ref)
{
	struct sxrc_evfile *evf = container_of(ref, struct sxrc_evfile, ref);

	evf->free(evf);
}

void sxrc_evfile_put(struct sxrc_evfile *evf)
{
	kref_put(&evf->ref, sxrc_evfile_free);
}

__poll_t sxrc_evfile_poll(struct file *file, struct poll_table_struct *wait)
{
	struct sxrc_evfile *evf = file->private_data;

	return sxrc_evq_poll(&evf->q, file, wait);
}

int sxrc_evfile_release(struct inode *inode, struct file *file)
{
	sxrc_evfile_put(file->private_data);
	return 0;
}

/*
 * A file @name of @fops reading @evf, on a reserved fd returned in the
 * call's struct sxrc_channel_out; the dispatcher installs it once the
 * number reached userspace.  The file takes the caller's reference to
 * @evf; on an error it does not, and the caller frees its channel.
 */
int sxrc_evfile_create(struct sxrc_call *call, struct sxrc_evfile *evf,
		       const char *name, const struct file_operations *fops)
{
	struct sxrc_channel_out *out = call->out;
	struct file *file;
	int fd, ret;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_getfile(name, fops, evf, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_fd;
	}
	call->new_file = file;
	call->new_fd = fd;
	out->fd = fd;
	return 0;

err_fd:
	put_unused_fd(fd);
	return ret;
}

/*
 * The channel file @fd names, if it is one of @fops made on @dev, with a
 * reference; or an ERR_PTR: -EBADF for no file, else -EINVAL.
 */
struct sxrc_evfile *sxrc_evfile_get(struct sxrc_dev *dev, int fd,
				    const struct file_operations *fops)
{
	struct sxrc_evfile *evf = ERR_PTR(-EINVAL);
	struct file *file;

	if (fd < 0)
		return evf;
	file = fget(fd);
	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op == fops) {
		evf = file->private_data;
		if (evf->dev == dev)
			kref_get(&evf->ref);
		else
			evf = ERR_PTR(-EINVAL);
	}
	fput(file);
	return evf;
}
