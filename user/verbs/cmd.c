// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: the one way into the kernel.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "sxu.h"
#include "softxrc-private.h"

/**
 * sxu_invoke - run one method of the softxrc ioctl ABI
 * @fd: the device fd of the context
 * @object: SXRC_OBJ_*
 * @method: the object's method
 * @in: input structure (may be NULL when @in_len is 0)
 * @in_len: its size
 * @out: output structure (may be NULL when @out_len is 0)
 * @out_len: its size
 *
 * Return: 0, or the errno value the kernel returned.  errno is left set
 * to the same value, so callers that return NULL need not touch it.
 */
int sxu_invoke(int fd, uint16_t object, uint16_t method, const void *in,
		uint32_t in_len, void *out, uint32_t out_len)
{
	struct sxrc_ioctl_hdr hdr = {
		.size = sizeof(hdr),
		.object_id = object,
		.method_id = method,
		.in_len = in_len,
		.out_len = out_len,
		.in = (uintptr_t)in,
		.out = (uintptr_t)out,
	};

	if (ioctl(fd, SXRC_IOCTL_INVOKE, &hdr))
		return errno;
	return 0;
}

/*
 * Destroy the object @handle names.  Destroy methods of objects that
 * report event counts (CQ, QP, SRQ) want room for them; the others take
 * the longer buffer too, and leave it zeroed.
 */
int sxu_destroy_handle(int fd, uint16_t object, uint16_t method,
			uint32_t handle)
{
	struct sxrc_handle_in in = { .handle = handle };
	struct sxrc_destroy_out out;

	return sxu_invoke(fd, object, method, &in, sizeof(in),
			   &out, sizeof(out));
}

/* sxu_invoke() for the drop-in librdmacm (softxrc-private.h). */
SXU_EXPORT int softxrc_invoke(struct ibv_context *ctx, uint16_t object,
			      uint16_t method, const void *in, uint32_t in_len,
			      void *out, uint32_t out_len)
{
	if (!ctx || sxu_foreign(ctx)) {
		errno = EOPNOTSUPP;
		return EOPNOTSUPP;
	}
	return sxu_invoke(ctx->cmd_fd, object, method, in, in_len, out,
			  out_len);
}
