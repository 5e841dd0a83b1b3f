// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: devices and contexts (their queries:
 * query.c).
 *
 * Devices are found in sysfs (/sys/class/misc/softxrcN) and opened through
 * /dev/infiniband/softxrcN (/dev/softxrcN on older modules).  A struct sxu_device, once found, lives as long as the
 * process: applications may keep an ibv_device pointer after freeing the
 * list that returned it, as long as a context on it is open, and rdma-core
 * makes the same promise.
 *
 * The list also holds the host's other devices, from the system's
 * rdma-core library (sys.c): softxrc's come first, so that programs that
 * take the first device keep finding softxrc0.  Calls on those devices
 * and their objects go to the system library.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sxu.h"

#define SXU_SYSFS_CLASS "/sys/class/misc"

/*
 * Devices seen so far; entries are never freed (see above).  They live
 * in one array, so that telling softxrc's from the system library's is
 * a comparison (sxu_device_is_ours()).
 */
static pthread_mutex_t sxu_devices_lock = PTHREAD_MUTEX_INITIALIZER;
struct sxu_device sxu_device_slots[64];
static struct sxu_device *sxu_devices[SXU_ARRAY_SIZE(sxu_device_slots)];

/*
 * What ibv_get_device_list() returns is @devs; @sys is the system
 * library's list whose devices it holds, freed with it.
 */
struct sxu_device_list {
	struct ibv_device **sys;
	struct ibv_device *devs[];
};

static __be64 sxu_parse_guid(const char *s)
{
	unsigned int a, b, c, d;

	if (sscanf(s, "%x:%x:%x:%x", &a, &b, &c, &d) != 4)
		return 0;
	return htobe64((uint64_t)a << 48 | (uint64_t)b << 32 |
		       (uint64_t)c << 16 | d);
}

/* Called with sxu_devices_lock held. */
static struct sxu_device *sxu_find_or_add(uint32_t index)
{
	char path[IBV_SYSFS_PATH_MAX], buf[64];
	struct sxu_device *dev;

	if (index >= SXU_ARRAY_SIZE(sxu_devices))
		return NULL;

	snprintf(path, sizeof(path), SXU_SYSFS_CLASS "/" SXRC_DEV_PREFIX "%u",
		 index);
	if (sxu_read_sysfs(path, "abi_version", buf, sizeof(buf)) <= 0)
		return NULL;
	if (atoi(buf) != SXRC_ABI_VERSION) {
		sxu_log("%s: kernel ABI version %d, library %d: skipped\n",
			 path, atoi(buf), SXRC_ABI_VERSION);
		return NULL;
	}

	dev = sxu_devices[index];
	if (!dev) {
		dev = &sxu_device_slots[index];
		dev->index = index;
		dev->ibdev.node_type = IBV_NODE_CA;
		dev->ibdev.transport_type = IBV_TRANSPORT_IB;
		snprintf(dev->ibdev.name, sizeof(dev->ibdev.name),
			 SXRC_DEV_PREFIX "%u", index);
		snprintf(dev->ibdev.dev_name, sizeof(dev->ibdev.dev_name),
			 SXRC_DEV_PREFIX "%u", index);
		snprintf(dev->ibdev.dev_path, sizeof(dev->ibdev.dev_path),
			 "%s", path);
		snprintf(dev->ibdev.ibdev_path, sizeof(dev->ibdev.ibdev_path),
			 "%s", path);
		sxu_devices[index] = dev;
	}
	/* The GUID changes when the module is reloaded: read it afresh. */
	if (sxu_read_sysfs(path, "node_guid", buf, sizeof(buf)) > 0)
		dev->node_guid = sxu_parse_guid(buf);
	return dev;
}

SXU_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct sxu_device_list *hdr;
	struct ibv_device **list, **sys;
	struct dirent *de;
	size_t n = 0;
	int nsys;
	DIR *dir;

	sys = sxu_sys_device_list(&nsys);
	hdr = calloc(1, sizeof(*hdr) + (SXU_ARRAY_SIZE(sxu_devices) + nsys +
					1) * sizeof(*list));
	if (!hdr) {
		if (sys)
			SXU_FORWARD(ibv_free_device_list, (void)0, sys);
		errno = ENOMEM;
		return NULL;
	}
	hdr->sys = sys;
	list = hdr->devs;

	pthread_mutex_lock(&sxu_devices_lock);
	dir = opendir(SXU_SYSFS_CLASS);
	while (dir && (de = readdir(dir))) {
		const char *p = de->d_name + strlen(SXRC_DEV_PREFIX);
		struct sxu_device *dev;
		char *end;
		unsigned long index;

		if (strncmp(de->d_name, SXRC_DEV_PREFIX,
			    strlen(SXRC_DEV_PREFIX)) || !*p)
			continue;
		index = strtoul(p, &end, 10);
		if (*end)
			continue;
		dev = sxu_find_or_add(index);
		if (dev && n < SXU_ARRAY_SIZE(sxu_devices))
			list[n++] = &dev->ibdev;
	}
	if (dir)
		closedir(dir);
	pthread_mutex_unlock(&sxu_devices_lock);

	/* Keep the order stable: softxrc0 first. */
	for (size_t i = 1; i < n; i++) {
		for (size_t j = i; j > 0 &&
		     to_sxu_dev(list[j - 1])->index >
		     to_sxu_dev(list[j])->index; j--) {
			struct ibv_device *t = list[j];

			list[j] = list[j - 1];
			list[j - 1] = t;
		}
	}
	for (int i = 0; i < nsys; i++)
		list[n++] = sys[i];

	if (num_devices)
		*num_devices = n;
	return list;
}

SXU_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	struct sxu_device_list *hdr;

	if (!list)
		return;
	hdr = sxu_container_of(list, struct sxu_device_list, devs);
	if (hdr->sys)
		SXU_FORWARD(ibv_free_device_list, (void)0, hdr->sys);
	free(hdr);
}

SXU_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	if (!sxu_device_is_ours(device))
		return SXU_FORWARD(ibv_get_device_name, NULL, device);
	return device->name;
}

SXU_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (!sxu_device_is_ours(device))
		return SXU_FORWARD(ibv_get_device_guid, 0, device);
	return to_sxu_dev(device)->node_guid;
}

SXU_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	if (!sxu_device_is_ours(device))
		return SXU_FORWARD(ibv_get_device_index, -1, device);
	return to_sxu_dev(device)->index;
}

/*
 * A context on @fd, a file of @device the calling process may use; the
 * context owns @fd from then on.  Returns an errno value on failure,
 * when @fd is still the caller's.
 */
static int sxu_context_new(struct ibv_device *device, int fd,
			    const struct sxrc_query_ctx_out *q,
			    struct ibv_context **out)
{
	struct sxu_context *ctx;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return ENOMEM;
	ctx->num_ports = q->num_ports;
	ctx->features = q->features;
	pthread_mutex_init(&ctx->maps_lock, NULL);

	ctx->vctx.sz = sizeof(ctx->vctx);
	ctx->vctx.query_port = sxu_query_port;
	ctx->vctx.query_device_ex = sxu_query_device_ex;
	ctx->vctx.create_cq_ex = sxu_create_cq_ex;
	ctx->vctx.query_rt_values = sxu_query_rt_values;
	ctx->vctx.create_qp_ex = sxu_create_qp_ex;
	ctx->vctx.create_srq_ex = sxu_create_srq_ex;
	ctx->vctx.get_srq_num = sxu_get_srq_num;
	ctx->vctx.open_xrcd = sxu_open_xrcd;
	ctx->vctx.close_xrcd = sxu_close_xrcd;
	ctx->vctx.open_qp = sxu_open_qp;
	ctx->vctx.alloc_td = sxu_alloc_td;
	if (q->features & SXRC_FEATURE_ODP)
		ctx->vctx.advise_mr = sxu_advise_mr;
	ctx->vctx.dealloc_td = sxu_dealloc_td;
	ctx->vctx.alloc_parent_domain = sxu_alloc_parent_domain;
	ctx->vctx.context.ops.poll_cq = sxu_poll_cq;
	ctx->vctx.context.ops.req_notify_cq = sxu_req_notify_cq;
	ctx->vctx.context.ops.post_send = sxu_post_send;
	ctx->vctx.context.ops.post_recv = sxu_post_recv;
	ctx->vctx.context.ops.post_srq_recv = sxu_post_srq_recv;
	ctx->vctx.context.ops.alloc_mw = sxu_alloc_mw;
	ctx->vctx.context.ops.dealloc_mw = sxu_dealloc_mw;
	ctx->vctx.context.ops.bind_mw = sxu_bind_mw;

	ctx->vctx.context.device = device;
	ctx->vctx.context.cmd_fd = fd;
	ctx->vctx.context.async_fd = fd;
	ctx->vctx.context.num_comp_vectors = q->num_comp_vectors;
	ctx->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	pthread_mutex_init(&ctx->vctx.context.mutex, NULL);
	*out = &ctx->vctx.context;
	return 0;
}

static int sxu_query_ctx(int fd, const char *name,
			  struct sxrc_query_ctx_out *q)
{
	int ret;

	ret = sxu_invoke(fd, SXRC_OBJ_CTX, SXRC_CTX_QUERY, NULL, 0,
			  q, sizeof(*q));
	if (ret)
		return ret;
	if (q->abi_version != SXRC_ABI_VERSION) {
		sxu_log("%s: kernel ABI version %u, library %d\n", name,
			 q->abi_version, SXRC_ABI_VERSION);
		return EPROTONOSUPPORT;
	}
	return 0;
}

SXU_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct sxrc_query_ctx_out q;
	char path[IBV_SYSFS_NAME_MAX + 24];
	struct ibv_context *context;
	int fd, ret;

	if (!sxu_device_is_ours(device))
		return SXU_FORWARD(ibv_open_device, NULL, device);
	snprintf(path, sizeof(path), "/dev/infiniband/%s", device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		snprintf(path, sizeof(path), "/dev/%s", device->dev_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;

	ret = sxu_query_ctx(fd, path, &q);
	if (!ret)
		ret = sxu_context_new(device, fd, &q, &context);
	if (ret) {
		close(fd);
		errno = ret;
		return NULL;
	}
	return context;
}

/* The device whose character device @fd is, found by its dev_t. */
static struct sxu_device *sxu_device_of_fd(int fd)
{
	struct ibv_device **list;
	struct sxu_device *found = NULL;
	unsigned int major, minor;
	char buf[32];
	struct stat st;
	int n;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISCHR(st.st_mode)) {
		errno = EINVAL;
		return NULL;
	}
	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n && !found; i++) {
		if (!sxu_device_is_ours(list[i]))
			continue;
		if (sxu_read_sysfs(list[i]->ibdev_path, "dev", buf,
				    sizeof(buf)) <= 0 ||
		    sscanf(buf, "%u:%u", &major, &minor) != 2)
			continue;
		if (makedev(major, minor) == st.st_rdev)
			found = to_sxu_dev(list[i]);
	}
	ibv_free_device_list(list);
	if (!found)
		errno = EINVAL;
	return found;
}

/*
 * rdma-core's rule: @cmd_fd is the caller's dup of another context's
 * fd (dup(), SCM_RIGHTS, inheritance); the new context owns it, and
 * ibv_close_device() closes it.  On failure it is left open.
 */
SXU_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct sxrc_query_ctx_out q;
	struct ibv_context *context;
	struct sxu_device *dev;
	int ret;

	dev = sxu_device_of_fd(cmd_fd);
	if (!dev) {
		/* Another device's file: the system library's to import. */
		if (errno == EINVAL && sxu_sys_loaded())
			return SXU_FORWARD(ibv_import_device, NULL, cmd_fd);
		return NULL;
	}
	if (ioctl(cmd_fd, SXRC_IOCTL_IMPORT, 0UL))
		return NULL;
	ret = sxu_query_ctx(cmd_fd, dev->ibdev.dev_name, &q);
	if (!ret && (q.dev_index != dev->index ||
		     !(q.features & SXRC_FEATURE_IMPORT)))
		ret = EINVAL;
	if (!ret)
		ret = sxu_context_new(&dev->ibdev, cmd_fd, &q, &context);
	if (ret) {
		errno = ret;
		return NULL;
	}
	return context;
}

SXU_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct sxu_context *ctx = to_sxu_ctx(context);

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_close_device, EOPNOTSUPP, context);
	/* The kernel destroys whatever the application left behind. */
	sxu_unmap_all(context);
	close(context->cmd_fd);
	pthread_mutex_destroy(&ctx->maps_lock);
	pthread_mutex_destroy(&context->mutex);
	free(ctx);
	return 0;
}
