// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftest: the adversary's victim (sxrc_adversary_test.c) after
 * each round: its violations and whom they blame, the checks of its CQs,
 * QP states, memory and counts and of what the attacker saw, and the
 * report at the end.
 */
#include "sxrc_adv.h"

const char *qp_name(struct victim *vi, uint32_t qpn)
{
	int i;

	for (i = 0; i < NVQP; i++)
		if (vi->s.qpn[i] == qpn)
			return qp_defs[i].name;
	return "(not the victim's)";
}

int qp_obj(struct victim *vi, uint32_t qpn)
{
	int i;

	for (i = 0; i < NVQP; i++)
		if (vi->s.qpn[i] == qpn)
			return i;
	return OBJ_NONE;
}

/*
 * Count a violation concerning @obj; print the first few of each
 * category and the first on each object.  True if printed.
 */
static bool vviol(struct victim *vi, int cat, int obj, const char *fmt,
		  va_list ap)
{
	vi->round_viol++;
	vi->printed = vi->viol[cat] < PRINT_MAX ||
		      (obj != OBJ_NONE && !vi->vobj[cat][obj] &&
		       vi->nprinted[cat] < PRINT_OBJ_MAX);
	vi->viol[cat]++;
	vi->vobj[cat][obj]++;
	if (!vi->printed)
		return false;
	vi->nprinted[cat]++;
	if (vi->ctx_round != vi->round + 1) {
		vi->ctx_round = vi->round + 1;
		printf("# round %u: the attacker's newest QPN %#x, MR index %#x, SRQ %u; it swept with %s\n",
		       vi->round, vi->sh->probe[0], vi->sh->probe[1],
		       vi->sh->probe[2],
		       kinds[sweep_kinds[vi->round % NSWEEP]].name);
	}
	printf("# VIOLATION round %u [%s]: ", vi->round, viol_name[cat]);
	vprintf(fmt, ap);
	printf("\n");
	return true;
}

bool viol_on(struct victim *vi, int cat, int obj, const char *fmt,
	     ...)
{
	va_list ap;
	bool ret;

	va_start(ap, fmt);
	ret = vviol(vi, cat, obj, fmt, ap);
	va_end(ap);
	return ret;
}

bool viol(struct victim *vi, int cat, const char *fmt, ...)
{
	va_list ap;
	bool ret;

	va_start(ap, fmt);
	ret = vviol(vi, cat, OBJ_NONE, fmt, ap);
	va_end(ap);
	return ret;
}

/* A victim object's short name: up to the first space. */
static int obj_name(int obj, char *buf, size_t len)
{
	const char *n = obj < NVQP ? qp_defs[obj].name :
			obj < OBJ_NONE ? mr_defs[obj - NVQP].name : "other";

	return snprintf(buf, len, "%.*s", (int)strcspn(n, " "), n);
}

static void print_attempt(const struct attempt *at, const char *pfx)
{
	char ob[32];

	printf("#   %s%s (%s) QPN %#x", pfx, kinds[at->kind].name,
	       src_name[at->src], at->qpn);
	if (at->kind == A_HANDLE_EMPTY || at->kind == A_HANDLE_OTHER)
		printf(" [handle %u, %s]", at->qpn, hms[at->aux % NHM].name);
	else if (at->kind == A_UD_SEND)
		printf(" Q_Key %#x", at->key);
	else if (at->key || at->srqn)
		printf(" rkey %#x SRQ %u", at->key, at->srqn);
	printf(" -> %s\n", out_name(at->out, ob, sizeof(ob)));
}

/* The attacker's attempts of this round that @match (after a printed one). */
void blame(struct victim *vi, bool (*match)(const struct attempt *,
					     uint32_t), uint32_t v)
{
	struct shared *sh = vi->sh;
	uint32_t i, n = 0, total = 0;
	int pass;

	if (!vi->printed)
		return;
	/* those that went through first */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < sh->nlog; i++) {
			if (!match(&sh->log[i], v) ||
			    (sh->log[i].out == O_WC(IBV_WC_SUCCESS)) == pass)
				continue;
			if (n++ < BLAME_MAX)
				print_attempt(&sh->log[i], "attacker tried: ");
			total++;
		}
	}
	if (total > BLAME_MAX)
		printf("#   ... and %u more such attempts this round\n",
		       total - BLAME_MAX);
	if (!total)
		printf("#   (no attempt of this round named it directly)\n");
}

bool match_qpn(const struct attempt *at, uint32_t qpn)
{
	return qpn_kind(at->kind) && at->qpn == qpn;
}

bool match_key(const struct attempt *at, uint32_t key)
{
	return connected_kind(at->kind) && at->key == key;
}

bool match_srqn(const struct attempt *at, uint32_t srqn)
{
	return (connected_kind(at->kind) ||
		at->kind == A_XRC_FOREIGN_SRQ) && at->srqn == srqn;
}

/* ---- the checks ---- */

const char *wcs(int status)
{
	return status >= 0 && status < (int)NWC ? wc_name[status] : "?";
}

/* UD deliveries the attacker earned by guessing the Q_Key itself. */
static long ud_earned(struct victim *vi, uint32_t qpn)
{
	struct shared *sh = vi->sh;
	long n = 0;
	uint32_t i;

	for (i = 0; i < sh->nlog; i++)
		if (sh->log[i].kind == A_UD_SEND && sh->log[i].qpn == qpn &&
		    sh->log[i].key == vi->s.qkey &&
		    sh->log[i].out == O_WC(IBV_WC_SUCCESS))
			n++;
	return n;
}

/* Nothing may have reached the victim's CQs since its last traffic. */
void check_cqs(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_cq *cqs[3] = { s->scq, s->rcq, s->xcq };
	static const char *const cq_names[3] = {
		"the send CQ", "the receive CQ", "the XRC SRQ's CQ",
	};
	long earned[2] = {
		ud_earned(vi, s->qpn[Q_U0]), ud_earned(vi, s->qpn[Q_U1]),
	};
	bool rcq_hit = false;
	struct ibv_wc wc;
	int i, rq, slot, u, n;

	for (i = 0; i < 3; i++) {
		while (ibv_poll_cq(cqs[i], 1, &wc) == 1) {
			rq = wc.wr_id >> 8;
			slot = wc.wr_id & 0xff;
			u = wc.qp_num == s->qpn[Q_U0] ? 0 :
			    wc.qp_num == s->qpn[Q_U1] ? 1 : -1;
			if (i == 1 && u >= 0 && earned[u] > 0 &&
			    wc.status == IBV_WC_SUCCESS &&
			    wc.src_qp != s->qpn[Q_U0] &&
			    wc.src_qp != s->qpn[Q_U1] &&
			    rq < NVRQ && slot == s->head[rq]) {
				/* it had the Q_Key: the message is its own */
				earned[u]--;
				vi->foreign_ud_ok++;
				memcpy(vi->shadow + slot_off(rq, slot),
				       vi->buf + slot_off(rq, slot), SLOT);
				s->head[rq] = (slot + 1) % NRECV;
				post_rq(vi, rq, slot);
				continue;
			}
			if (i == 1)
				rcq_hit = true;
			/* what it wrote there is this report, not another */
			if (rq < NVRQ && slot < NRECV)
				memcpy(vi->shadow + slot_off(rq, slot),
				       vi->buf + slot_off(rq, slot), SLOT);
			viol_on(vi, V_FOREIGN_CQE, qp_obj(vi, wc.qp_num),
			     "%s: %s of %s (wr_id %#llx: %s slot %d), status %s, %u bytes, opcode %d, src QPN %#x",
			     cq_names[i],
			     wc.opcode & IBV_WC_RECV ? "a receive" :
			     "a send completion", qp_name(vi, wc.qp_num),
			     (unsigned long long)wc.wr_id,
			     rq < NVRQ ? rq_defs[rq].name : "?", slot,
			     wcs(wc.status), wc.byte_len, wc.opcode,
			     wc.src_qp);
			blame(vi, match_qpn, wc.qp_num);
			if (i == 2)
				blame(vi, match_srqn, s->xsrqn);
		}
	}
	n = drain_channel(vi);
	if (n && !rcq_hit)
		viol(vi, V_CHANNEL,
		     "the receive CQ's channel had an event, with no completion behind it");
	if (n || rcq_hit)
		ibv_req_notify_cq(s->rcq, 0);
}

void check_states(struct victim *vi)
{
	struct vset *s = &vi->s;
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	enum ibv_qp_state want;
	int q, ret;

	for (q = 0; q < NVQP; q++) {
		want = qp_defs[q].type == IBV_QPT_XRC_RECV ? IBV_QPS_RTR :
							    IBV_QPS_RTS;
		memset(&qa, 0, sizeof(qa));
		if (s->qp[q])
			ret = ibv_query_qp(s->qp[q], &qa, IBV_QP_STATE, &qia);
		else
			ret = ibv_query_xrc_rcv_qp(s->lx, s->qpn[q], &qa,
						   IBV_QP_STATE, &qia);
		if (ret) {
			viol_on(vi, q == Q_XR2 ? V_XRC_REG : V_QP_STATE, q,
			     "querying %s (QPN %#x) failed: %s",
			     qp_defs[q].name, s->qpn[q], strerror(ret));
			blame(vi, match_qpn, s->qpn[q]);
			continue;
		}
		if (qa.qp_state != want) {
			viol_on(vi, V_QP_STATE, q,
				"%s (QPN %#x) is in state %d",
			     qp_defs[q].name, s->qpn[q], qa.qp_state);
			blame(vi, match_qpn, s->qpn[q]);
		}
	}
	/* XR is in the domain too, whatever handle the victim holds */
	if (ibv_query_xrc_rcv_qp(s->lx, s->qpn[Q_XR], &qa, IBV_QP_STATE,
				 &qia)) {
		viol_on(vi, V_XRC_REG, Q_XR,
			"XR (QPN %#x) is no longer in the domain",
		     s->qpn[Q_XR]);
		blame(vi, match_qpn, s->qpn[Q_XR]);
	}
}

void check_memory(struct victim *vi)
{
	size_t i, j, end;
	int m;

	if (!memcmp(vi->buf, vi->shadow, VBUF))
		return;
	for (m = 0; m < NVMR; m++) {
		end = mr_defs[m].off + mr_defs[m].len;
		for (i = mr_defs[m].off; i < end; i++)
			if (vi->buf[i] != vi->shadow[i])
				break;
		if (i == end)
			continue;
		for (j = end; j > i && vi->buf[j - 1] == vi->shadow[j - 1]; j--)
			;
		viol_on(vi, V_MR_DATA, OBJ_MR(m),
		     "MR %s: bytes %#zx..%#zx changed (first: %#x, expected %#x)",
		     mr_defs[m].name, i - mr_defs[m].off,
		     j - 1 - mr_defs[m].off, vi->buf[i], vi->shadow[i]);
		blame(vi, match_key, vi->s.mr[m]->rkey);
		/* report each change once */
		memcpy(vi->shadow + mr_defs[m].off, vi->buf + mr_defs[m].off,
		       mr_defs[m].len);
	}
}

void check_counts(struct victim *vi)
{
	long v, want;
	int i;

	for (i = 0; i < NCNT_OBJ; i++) {
		want = vi->base[i] + vi->att_own[i];
		v = sxrc_sysfs_long(cnt_attr[i]);
		if (v != want)
			viol(vi, V_COUNTS,
			     "%s is %ld: the victim's %ld plus the attacker's %ld",
			     cnt_attr[i], v, vi->base[i], vi->att_own[i]);
	}
}

/* What the attacker saw itself, and whether it saw the victim at all. */
void check_attacker(struct victim *vi)
{
	struct shared *sh = vi->sh;
	bool named[NVQP] = { false };
	const struct attempt *at;
	uint32_t i;
	int q, n = 0;

	for (i = 0; i < sh->nbad; i++) {
		at = &sh->bad[i].at;
		if (at->kind >= NKIND) {
			viol(vi, sh->bad[i].cat, "%s", sh->bad[i].msg);
			continue;
		}
		if (!viol_on(vi, sh->bad[i].cat, qpn_kind(at->kind) ?
			     qp_obj(vi, at->qpn) : OBJ_NONE,
			     "%s", sh->bad[i].msg))
			continue;
		print_attempt(at, "");
		if (qpn_kind(at->kind))
			printf("#   (QPN %#x is %s)\n", at->qpn,
			       qp_name(vi, at->qpn));
	}
	if (sh->nlog == LOG_MAX)
		printf("# round %u: the attempt log overflowed\n", vi->round);

	/* a sweep of QP numbers must have named every victim QP */
	for (i = 0; i < sh->nlog; i++)
		for (q = 0; q < NVQP; q++)
			if (sh->log[i].src == S_WINDOW &&
			    qpn_kind(sh->log[i].kind) &&
			    sh->log[i].qpn == vi->s.qpn[q])
				named[q] = true;
	for (q = 0; q < NVQP; q++)
		n += named[q];
	vi->named_all += n;
	vi->named_rounds++;
	if (qpn_kind(sweep_kinds[vi->round % NSWEEP]) && n != NVQP)
		viol(vi, V_ATTACKER,
		     "the attacker's window named %d of the victim's %d QPNs",
		     n, NVQP);
}

void report(struct victim *vi, double secs, uint32_t rounds)
{
	struct shared *sh = vi->sh;
	char ob[32];
	int k, o, s;
	long t;

	printf("# sxrc_adversary: seed=%llu, %u rounds in %.1f s, %u attackers, %ld rebuilds of the victim, %ld own WRs, %ld UD messages the attacker earned with a guessed Q_Key\n",
	       (unsigned long long)vi->seed, rounds, secs, vi->epoch,
	       vi->rebuilds, vi->own_ops, vi->foreign_ud_ok);
	printf("# victim QPNs named by the attacker's window: %.1f of %d per round\n",
	       vi->named_rounds ? (double)vi->named_all / vi->named_rounds : 0,
	       NVQP);
	printf("# %-28s %7s %7s %7s %7s %7s  outcomes\n", "attempt", "tries",
	       "window", "random", "leaked", "own");
	for (k = 0; k < NKIND; k++) {
		for (t = 0, s = 0; s < NSRC; s++)
			t += sh->tries[k][s];
		if (!t)
			continue;
		printf("# %-28s %7ld %7ld %7ld %7ld %7ld ", kinds[k].name, t,
		       sh->tries[k][S_WINDOW], sh->tries[k][S_RANDOM],
		       sh->tries[k][S_LEAKED], sh->tries[k][S_OWN]);
		for (o = 0; o < NOUT; o++)
			if (sh->outs[k][o])
				printf(" %s=%ld", out_name(o, ob, sizeof(ob)),
				       sh->outs[k][o]);
		printf("\n");
	}
	printf("# violations (by victim object):\n");
	for (k = 0, t = 0; k < NV; k++) {
		if (!vi->viol[k])
			continue;
		t++;
		printf("#   %-5ld %s:", vi->viol[k], viol_name[k]);
		for (o = 0; o < NOBJ; o++) {
			if (!vi->vobj[k][o])
				continue;
			obj_name(o, ob, sizeof(ob));
			printf(" %s=%ld", ob, vi->vobj[k][o]);
		}
		printf("\n");
	}
	if (!t)
		printf("#   none\n");
	fflush(stdout);
}
