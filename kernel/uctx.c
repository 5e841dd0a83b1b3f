// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: user contexts: open() and release() of the device file, and
 * the processes that may use one (its opener and those that imported it).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "sxrc.h"

static void sxrc_ctx_free(struct kref *ref)
{
	struct sxrc_ctx *ctx = container_of(ref, struct sxrc_ctx, ref);

	sxrc_ctx_events_flush(ctx);
	sxrc_user_put(ctx->user);
	sxrc_dev_put(ctx->dev);
	kfree(ctx);
}

void sxrc_ctx_put(struct sxrc_ctx *ctx)
{
	kref_put(&ctx->ref, sxrc_ctx_free);
}

static int sxrc_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct sxrc_dev *dev = container_of(misc, struct sxrc_dev, misc);
	struct sxrc_ctx *ctx;
	int ret;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->uid = current_euid();
	ctx->user = sxrc_user_get(dev, ctx->uid);
	if (IS_ERR(ctx->user)) {
		ret = PTR_ERR(ctx->user);
		kfree(ctx);
		return ret;
	}
	ctx->unlimited = ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);

	kref_init(&ctx->ref);
	spin_lock_init(&ctx->member_lock);
	ctx->members[0] = current->mm;
	mmgrab(current->mm);
	ctx->nmembers = 1;
	/* The device table's reference is there: open() and removal exclude. */
	kref_get(&dev->ref);
	ctx->dev = dev;
	xa_init_flags(&ctx->objects, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->mmaps, XA_FLAGS_ALLOC);
	sxrc_evq_init(&ctx->evq);
	ctx->pid = task_tgid_nr(current);
	get_task_comm(ctx->comm, current);

	spin_lock_bh(&dev->lock);
	ctx->id = dev->ctx_next++;
	list_add_tail(&ctx->dev_entry, &dev->ctx_list);
	spin_unlock_bh(&dev->lock);
	atomic_inc(&dev->nctx);

	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

static int sxrc_release(struct inode *inode, struct file *file)
{
	struct sxrc_ctx *ctx = file->private_data;
	struct sxrc_dev *dev = ctx->dev;

	u32 i;

	spin_lock_bh(&dev->lock);
	list_del(&ctx->dev_entry);
	spin_unlock_bh(&dev->lock);

	sxrc_cm_ctx_close(ctx);
	sxrc_ctx_destroy_objects(ctx);
	for (i = 0; i < ctx->nmembers; i++)
		mmdrop(ctx->members[i]);
	ctx->nmembers = 0;
	WARN_ON_ONCE(!xa_empty(&ctx->mmaps));
	xa_destroy(&ctx->mmaps);
	spin_lock_bh(&ctx->evq.lock);
	ctx->closed = true;
	spin_unlock_bh(&ctx->evq.lock);
	atomic_dec(&dev->nctx);
	sxrc_ctx_put(ctx);
	return 0;
}

/**
 * sxrc_ctx_member - may the current process use @ctx?
 * @ctx: the context of the file it calls on
 *
 * Return: true for the opener and the processes that imported the
 * context; a fork()ed child or a process the fd was passed to has no
 * business here until it imports.
 */
bool sxrc_ctx_member(struct sxrc_ctx *ctx)
{
	/* Pairs with sxrc_import(): the entries below n are written. */
	u32 i, n = smp_load_acquire(&ctx->nmembers);

	for (i = 0; i < n; i++)
		if (ctx->members[i] == current->mm)
			return true;
	return false;
}

/* ibv_import_device(): make the current process a member of @ctx. */
static long sxrc_import(struct sxrc_ctx *ctx, unsigned long arg)
{
	long ret = 0;

	if (arg)
		return -EINVAL;
	if (!current->mm)
		return -EPERM;
	spin_lock_bh(&ctx->member_lock);
	if (sxrc_ctx_member(ctx))
		goto out_unlock;
	if (ctx->nmembers == SXRC_MAX_MEMBERS) {
		ret = -EUSERS;
		goto out_unlock;
	}
	mmgrab(current->mm);
	ctx->members[ctx->nmembers] = current->mm;
	/* Publish the entry before the count that covers it. */
	smp_store_release(&ctx->nmembers, ctx->nmembers + 1);
out_unlock:
	spin_unlock_bh(&ctx->member_lock);
	return ret;
}

static long sxrc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sxrc_ctx *ctx = file->private_data;

	if (cmd == SXRC_IOCTL_IMPORT)
		return sxrc_import(ctx, arg);
	if (!sxrc_ctx_member(ctx))
		return -EPERM;

	switch (cmd) {
	case SXRC_IOCTL_INVOKE:
		return sxrc_invoke(ctx, (struct sxrc_ioctl_hdr __user *)arg);
	case SXRC_IOCTL_DOORBELL:
		return sxrc_doorbell(ctx, arg);
	default:
		return -ENOTTY;
	}
}

const struct file_operations sxrc_fops = {
	.owner = THIS_MODULE,
	.open = sxrc_open,
	.release = sxrc_release,
	.unlocked_ioctl = sxrc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = sxrc_event_read,
	.poll = sxrc_event_poll,
	.mmap = sxrc_mmap,
};
