/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc userspace library: private definitions.
 *
 * The library is a drop-in libibverbs.so.1.  Its public API is exactly
 * rdma-core's <infiniband/verbs.h>; behind it, every verb is marshalled
 * into SXRC_IOCTL_INVOKE calls on /dev/softxrcN (uapi/rdma/softxrc-abi.h).
 */
#ifndef SXRC_USER_H
#define SXRC_USER_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/softxrc-abi.h>

#define SXRC_EXPORT __attribute__((visibility("default")))

#define sxrc_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define SXRC_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * struct sxrc_device - one /dev/softxrcN, as ibv_get_device_list() sees it
 * @ibdev: what the application holds
 * @index: N
 * @node_guid: from sysfs, network byte order
 */
struct sxrc_device {
	struct ibv_device ibdev;
	uint32_t index;
	__be64 node_guid;
};

/**
 * struct sxrc_context - an open device
 * @num_ports: ports of the device
 * @features: SXRC_FEATURE_* reported by the module
 * @vctx: rdma-core's extended context; its ibv_context must be last
 */
struct sxrc_context {
	uint32_t num_ports;
	uint64_t features;
	struct verbs_context vctx;
};

struct sxrc_pd {
	struct ibv_pd ibpd;
	uint32_t handle;
};

static inline struct sxrc_context *to_sxrc_ctx(struct ibv_context *ctx)
{
	return sxrc_container_of(ctx, struct sxrc_context, vctx.context);
}

static inline struct sxrc_device *to_sxrc_dev(struct ibv_device *dev)
{
	return sxrc_container_of(dev, struct sxrc_device, ibdev);
}

static inline struct sxrc_pd *to_sxrc_pd(struct ibv_pd *pd)
{
	return sxrc_container_of(pd, struct sxrc_pd, ibpd);
}

/* cmd.c */
int sxrc_invoke(int fd, uint16_t object, uint16_t method, const void *in,
		uint32_t in_len, void *out, uint32_t out_len);
int sxrc_destroy_handle(int fd, uint16_t object, uint16_t method,
			uint32_t handle);

/* util.c */
void sxrc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int sxrc_read_sysfs(const char *dir, const char *file, char *buf,
		    size_t size);

/* device.c */
int sxrc_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_size);
int sxrc_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);

#endif /* SXRC_USER_H */
