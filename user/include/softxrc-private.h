/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Between softxrc's two drop-in libraries, libibverbs.so.1 and
 * librdmacm.so.1, and nobody else: exported under SOFTXRC_PRIVATE_1,
 * never installed, no ABI promise.
 */
#ifndef SOFTXRC_PRIVATE_H
#define SOFTXRC_PRIVATE_H

#include <stdbool.h>

#include <infiniband/verbs.h>

/* Is @dev one of softxrc's devices (not the system library's)? */
bool softxrc_device_is_ours(const struct ibv_device *dev);

/*
 * dlmopen() @path into the link-map namespace of the system's
 * libibverbs, so that what it makes is what the drop-in forwards to;
 * NULL where the system library is not loaded (or @path fails to).
 */
void *softxrc_sys_dlopen(const char *path);

#endif /* SOFTXRC_PRIVATE_H */
