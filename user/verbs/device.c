// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: devices, contexts and their queries.
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

/* ------------------------------------------------------------------ */

static int sxu_query_device_raw(struct ibv_context *context,
				 struct sxrc_device_attr *a)
{
	return sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			   SXRC_DEVICE_QUERY, NULL, 0, a, sizeof(*a));
}

static void sxu_fill_device_attr(struct ibv_device_attr *attr,
				  const struct sxrc_device_attr *a)
{
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u",
		 (unsigned int)(a->fw_ver >> 32),
		 (unsigned int)(a->fw_ver >> 16) & 0xffff,
		 (unsigned int)a->fw_ver & 0xffff);
	attr->node_guid = a->node_guid;
	attr->sys_image_guid = a->sys_image_guid;
	attr->max_mr_size = a->max_mr_size;
	attr->page_size_cap = a->page_size_cap;
	attr->vendor_id = a->vendor_id;
	attr->vendor_part_id = a->vendor_part_id;
	attr->hw_ver = a->hw_ver;
	attr->max_qp = a->max_qp;
	attr->max_qp_wr = a->max_qp_wr;
	attr->device_cap_flags = (unsigned int)a->device_cap_flags;
	attr->max_sge = a->max_sge;
	attr->max_sge_rd = a->max_sge_rd;
	attr->max_cq = a->max_cq;
	attr->max_cqe = a->max_cqe;
	attr->max_mr = a->max_mr;
	attr->max_pd = a->max_pd;
	attr->max_qp_rd_atom = a->max_qp_rd_atom;
	attr->max_res_rd_atom = a->max_res_rd_atom;
	attr->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	attr->atomic_cap = a->atomic_cap;
	attr->max_mcast_grp = a->max_mcast_grp;
	attr->max_mcast_qp_attach = a->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = a->max_total_mcast_qp_attach;
	attr->max_ah = a->max_ah;
	attr->max_mw = a->max_mw;
	attr->max_srq = a->max_srq;
	attr->max_srq_wr = a->max_srq_wr;
	attr->max_srq_sge = a->max_srq_sge;
	attr->max_pkeys = a->max_pkeys;
	attr->local_ca_ack_delay = a->local_ca_ack_delay;
	attr->phys_port_cnt = a->phys_port_cnt;
}

SXU_EXPORT int ibv_query_device(struct ibv_context *context,
				 struct ibv_device_attr *attr)
{
	struct sxrc_device_attr a;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_device, EOPNOTSUPP, context, attr);
	ret = sxu_query_device_raw(context, &a);
	if (ret)
		return ret;
	sxu_fill_device_attr(attr, &a);
	return 0;
}

int sxu_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct sxrc_device_attr a;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;

	ret = sxu_query_device_raw(context, &a);
	if (ret)
		return ret;

	memset(&ex, 0, sizeof(ex));
	sxu_fill_device_attr(&ex.orig_attr, &a);
	ex.device_cap_flags_ex = a.device_cap_flags;
	ex.phys_port_cnt_ex = a.phys_port_cnt;
	if (to_sxu_ctx(context)->features & SXRC_FEATURE_CQE_TIMESTAMP) {
		/* The completion clock: CLOCK_MONOTONIC, 1 GHz (in kHz). */
		ex.completion_timestamp_mask = UINT64_MAX;
		ex.hca_core_clock = 1000000;
	}
	if (to_sxu_ctx(context)->features & SXRC_FEATURE_ODP) {
		/* What SXRC_FEATURE_ODP promises; UC is not covered. */
		ex.odp_caps.general_caps = IBV_ODP_SUPPORT |
					   IBV_ODP_SUPPORT_IMPLICIT;
		ex.odp_caps.per_transport_caps.rc_odp_caps =
			IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
		ex.odp_caps.per_transport_caps.ud_odp_caps =
			IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_SRQ_RECV;
		ex.xrc_odp_caps = ex.odp_caps.per_transport_caps.rc_odp_caps;
	}
	if (attr_size > sizeof(ex)) {
		memset((char *)attr + sizeof(ex), 0, attr_size - sizeof(ex));
		attr_size = sizeof(ex);
	}
	memcpy(attr, &ex, attr_size);
	return 0;
}

static int sxu_query_port_raw(struct ibv_context *context, uint8_t port_num,
			       struct ibv_port_attr *attr)
{
	struct sxrc_port_in in = { .port_num = port_num };
	struct sxrc_port_attr p;
	int ret;

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			  SXRC_DEVICE_QUERY_PORT, &in, sizeof(in),
			  &p, sizeof(p));
	if (ret)
		return ret;

	memset(attr, 0, sizeof(*attr));
	attr->state = p.state;
	attr->max_mtu = p.max_mtu;
	attr->active_mtu = p.active_mtu;
	attr->gid_tbl_len = p.gid_tbl_len;
	attr->port_cap_flags = p.port_cap_flags;
	attr->max_msg_sz = p.max_msg_sz;
	attr->bad_pkey_cntr = p.bad_pkey_cntr;
	attr->qkey_viol_cntr = p.qkey_viol_cntr;
	attr->pkey_tbl_len = p.pkey_tbl_len;
	attr->lid = p.lid;
	attr->sm_lid = p.sm_lid;
	attr->lmc = p.lmc;
	attr->max_vl_num = p.max_vl_num;
	attr->sm_sl = p.sm_sl;
	attr->subnet_timeout = p.subnet_timeout;
	attr->init_type_reply = p.init_type_reply;
	attr->active_width = p.active_width;
	attr->active_speed = p.active_speed;
	attr->phys_state = p.phys_state;
	attr->link_layer = p.link_layer;
	attr->flags = p.flags;
	attr->port_cap_flags2 = p.port_cap_flags2;
	return 0;
}

int sxu_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_size)
{
	struct ibv_port_attr full;
	int ret;

	ret = sxu_query_port_raw(context, port_num, &full);
	if (ret)
		return ret;
	if (attr_size > sizeof(full)) {
		memset((char *)attr + sizeof(full), 0,
		       attr_size - sizeof(full));
		attr_size = sizeof(full);
	}
	memcpy(attr, &full, attr_size);
	return 0;
}

/*
 * The exported symbol serves binaries built against headers older than
 * the extended context: their struct ends with link_layer at the latest,
 * so nothing past it is written.
 */
#undef ibv_query_port
SXU_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			       struct _compat_ibv_port_attr *port_attr)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_port, EOPNOTSUPP, context,
				   port_num, port_attr);
	return sxu_query_port(context, port_num,
			       (struct ibv_port_attr *)port_attr,
			       offsetof(struct ibv_port_attr, link_layer) + 1);
}

static int sxu_query_gid_raw(struct ibv_context *context, uint32_t port_num,
			      uint32_t index, struct sxrc_gid_out *out)
{
	struct sxrc_gid_in in = { .port_num = port_num, .index = index };

	return sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			   SXRC_DEVICE_QUERY_GID, &in, sizeof(in),
			   out, sizeof(*out));
}

SXU_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			      int index, union ibv_gid *gid)
{
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_gid, -1, context, port_num, index,
				   gid);
	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = sxu_query_gid_raw(context, port_num, index, &out);
	if (ret == ENODATA) {
		/* An empty entry of a link's table reads as zeros, as in sysfs. */
		memset(gid->raw, 0, sizeof(gid->raw));
		return 0;
	}
	if (ret)
		return -1;
	memcpy(gid->raw, out.gid, sizeof(gid->raw));
	return 0;
}

SXU_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
				  uint32_t port_num, uint32_t gid_index,
				  struct ibv_gid_entry *entry, uint32_t flags,
				  size_t entry_size)
{
	struct ibv_gid_entry e = { 0 };
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(_ibv_query_gid_ex, EOPNOTSUPP, context,
				   port_num, gid_index, entry, flags,
				   entry_size);
	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = sxu_query_gid_raw(context, port_num, gid_index, &out);
	if (ret)
		return ret;
	memcpy(e.gid.raw, out.gid, sizeof(e.gid.raw));
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = out.gid_type;
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

SXU_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					 struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags,
					 size_t entry_size)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	size_t n = 0;

	if (sxu_foreign(context))
		return SXU_FORWARD(_ibv_query_gid_table, -EOPNOTSUPP, context,
				   entries, max_entries, flags, entry_size);
	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;

	for (uint32_t port = 1; port <= ctx->num_ports; port++) {
		struct ibv_port_attr pa;
		int ret = sxu_query_port_raw(context, port, &pa);

		if (ret)
			return -ret;
		for (int i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry *e;

			if (n == max_entries)
				return -EINVAL;
			e = (void *)((char *)entries + n * entry_size);
			ret = _ibv_query_gid_ex(context, port, i, e, 0,
						entry_size);
			if (ret == ENODATA)
				continue;	/* empty: not listed */
			if (ret)
				return -ret;
			n++;
		}
	}
	return n;
}

/*
 * IBVERBS_PRIVATE: Debian's ibv_devinfo prints the GID type with it, as
 * enum ibv_gid_type_sysfs (not in the public headers).
 */
enum { SXU_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, SXU_GID_TYPE_SYSFS_ROCE_V2 = 1 };

SXU_EXPORT int ibv_query_gid_type(struct ibv_context *context,
				   uint8_t port_num, unsigned int index,
				   int *type)
{
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_gid_type, -1, context, port_num,
				   index, type);
	ret = sxu_query_gid_raw(context, port_num, index, &out);
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = out.gid_type == SXRC_GID_TYPE_ROCE_V2 ?
		SXU_GID_TYPE_SYSFS_ROCE_V2 : SXU_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

SXU_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			       int index, __be16 *pkey)
{
	struct sxrc_gid_in in = { .port_num = port_num, .index = index };
	struct sxrc_pkey_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_pkey, -1, context, port_num, index,
				   pkey);
	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			  SXRC_DEVICE_QUERY_PKEY, &in, sizeof(in),
			  &out, sizeof(out));
	if (ret)
		return -1;
	*pkey = htobe16(out.pkey);
	return 0;
}

SXU_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				   uint8_t port_num, __be16 pkey)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_get_pkey_index, -1, context, port_num,
				   pkey);
	for (int i = 0;; i++) {
		__be16 p;

		if (ibv_query_pkey(context, port_num, i, &p))
			return -1;
		if (p == pkey)
			return i;
	}
}
