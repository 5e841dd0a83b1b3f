// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_cm_delay.so: LD_PRELOADed into a perftest -R client by
 * tools/guest/check-wire, it waits SXRC_CM_DELAY_MS (default 200 ms)
 * before each rdma_connect(), then calls the real one (Debian's
 * librdmacm or softxrc's, whichever the process has).
 *
 * Why: perftest -R's server listens twice on one port, for its
 * handshake and then for the data connections, and its client connects
 * again as soon as the handshake is over.  A REQ that comes before the
 * second listen is refused at once (REJ 8, as ib_cm refuses it), and
 * perftest 4.5-0.17's retry then uses the ids it destroyed and dies
 * (Debian's librdmacm as well as softxrc's).  Both devices' servers
 * lost that race between the test guests (3 runs in about 60).  The
 * wait gives the server its second listen; nothing else is changed.
 * Test ground only, not part of the product.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);
	const char *ms = getenv("SXRC_CM_DELAY_MS");

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct rdma_conn_param *))
			dlsym(RTLD_NEXT, "rdma_connect");
	if (!real) {
		errno = EOPNOTSUPP;
		return -1;
	}
	usleep((ms ? atoi(ms) : 200) * 1000);
	return real(id, param);
}
