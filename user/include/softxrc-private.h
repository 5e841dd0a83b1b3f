/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Between softxrc's two drop-in libraries, libibverbs.so.1 and
 * librdmacm.so.1, and nobody else: exported under SOFTXRC_PRIVATE_1,
 * never installed, no ABI promise.
 */
#ifndef SOFTXRC_PRIVATE_H
#define SOFTXRC_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* Is @dev one of softxrc's devices (not the system library's)? */
bool softxrc_device_is_ours(const struct ibv_device *dev);

/*
 * dlmopen() @path into the link-map namespace of the system's
 * libibverbs, so that what it makes is what the drop-in forwards to;
 * NULL where the system library is not loaded (or @path fails to).
 */
void *softxrc_sys_dlopen(const char *path);

/*
 * Run one method of the softxrc ioctl ABI (uapi/rdma/softxrc-abi.h) on
 * @ctx's device file, a softxrc context's (EOPNOTSUPP for another
 * device's): 0, or the errno value the kernel returned (errno is set to
 * it too).  The connection manager drives SXRC_OBJ_CM through it.
 */
int softxrc_invoke(struct ibv_context *ctx, uint16_t object, uint16_t method,
		   const void *in, uint32_t in_len, void *out, uint32_t out_len);

#endif /* SOFTXRC_PRIVATE_H */
