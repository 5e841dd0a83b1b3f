# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
# shellcheck shell=dash disable=SC2034 # DEV_* are the caller's
#
# sxrc.sh: the shell helpers the test ground's scripts share, sourced
# (never run) by the host drivers in tools/ and bench/ and by the halves
# in tools/guest/ and bench/guest/ that run inside a guest:
#
#   REPO=<the checkout>      (before sourcing: dev_up needs it)
#   . "$REPO/tools/lib/sxrc.sh"
#
# POSIX sh plus "local" (dash has it): bash scripts and the sh ones
# (tools/guest/pair-up's callers, bench/guest/bench-wire) source it alike.
# Nothing here exits the caller or changes its shell options; every
# helper is safe under "set -eu".
#
#   script_help SCRIPT    SCRIPT's header comment: its usage text
#   kernels               the installed kernels softxrc is built and
#                         tested against (tools/kver --all, tools/check)
#   median [-f FMT]       the median of numbers
#   listening PORT        whether some socket listens on a TCP port
#   dev_up KIND IF, dev_down KIND, dev_env CMD..., dev_gid_index,
#   dev_counter NAME [DEV]
#                         a guest's RoCE device on its vm-pair link
#                         (tools/guest/check-wire, bench/guest/bench-wire)

# script_help SCRIPT: the comment at the top of SCRIPT, from the line
# after its SPDX line to the first line that is not a comment, without
# the "# " (each script's usage(), make help).
script_help() {
	awk 'NR > 2 { if (!/^#/) exit; sub(/^# ?/, ""); print }' "$1"
}

# kernels: every kernel with both /boot/vmlinuz-V and /lib/modules/V/build,
# one a line, oldest first.
kernels() {
	local img v
	for img in /boot/vmlinuz-*; do
		[ -e "$img" ] || continue
		v=${img#/boot/vmlinuz-}
		[ ! -d "/lib/modules/$v/build" ] || echo "$v"
	done | sort -V
}

# median [-f FMT]: the median of the numbers on stdin, one a line (lines
# that are not a number are left out).  An odd count prints the middle
# one as it was given, an even count the mean of the two in the middle
# through printf FMT (default %.2f); with -f, the odd count's middle one
# goes through FMT too.  "n/a" when there is no number.
median() {
	local fmt=%.2f always=0

	if [ "${1:-}" = -f ]; then
		fmt=$2 always=1
	fi
	awk '/^[0-9.eE+-]+$/' | sort -g |
		awk -v f="$fmt" -v a="$always" '{ v[NR] = $1 } END {
			if (!NR) { print "n/a"; exit }
			if (NR % 2 && !a) print v[(NR + 1) / 2]
			else if (NR % 2) printf f "\n", v[(NR + 1) / 2]
			else printf f "\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# listening PORT: some socket listens on TCP PORT, IPv4 or IPv6 (the
# local address of a line of /proc/net/tcp* ends in :PORT, its state is
# 0A).  For a server whose "waiting" message goes to a buffered stdout.
listening() {
	awk -v p="$(printf ':%04X' "$1")" '
		substr($2, length($2) - 4) == p && $4 == "0A" { f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# --- A guest's RoCE device on its tools/vm-pair link ------------------
#
# dev_up KIND IF: KIND's device on the netdev IF (the one
# tools/guest/pair-up brought up), its IPv4-mapped RoCEv2 GID found:
#   rxe  rdma_rxe's rxe0 (modules loaded here: the guest's kernel cannot
#        autoload them), programs on Debian's own libibverbs
#   sx, softxrc
#        softxrc's link softxrc1 (the module loaded by vm-run), programs
#        on this build's drop-in libibverbs
# Sets DEV_KIND, DEV and DEV_GID (the GID's index, as programs take it);
# 1, with the reason in DEV_WHY, when the device or its GID does not come.
dev_up() {
	DEV_KIND=$1 DEV="" DEV_GID="" DEV_WHY=""
	case "$1" in
	rxe)
		modprobe -a crc32_generic ib_uverbs rdma_rxe rdma_ucm ||
			{ DEV_WHY="cannot load rdma_rxe"; return 1; }
		rdma link add rxe0 type rxe netdev "$2" ||
			{ DEV_WHY="rdma link add rxe0 failed"; return 1; }
		DEV=rxe0
		;;
	sx|softxrc)
		[ -n "${VMRUN_MODULE:-}" ] ||
			{ DEV_WHY="softxrc is not loaded"; return 1; }
		"$REPO/build/bin/softxrc" link add softxrc1 netdev "$2" ||
			{ DEV_WHY="softxrc link add softxrc1 failed"; return 1; }
		DEV=softxrc1
		;;
	*)
		DEV_WHY="no device kind '$1'"
		return 1
		;;
	esac
	# The GID table follows the address a moment later.
	for _ in $(seq 100); do
		DEV_GID=$(dev_gid_index) && return 0
		sleep 0.1
	done
	DEV_WHY="no RoCEv2 GID ::ffff:$SXRC_PAIR_SELF on $DEV"
	return 1
}

# dev_down KIND: the device dev_up KIND made, gone (rxe: rdma_rxe too, so
# that the other kind can have UDP port 4791).
dev_down() {
	if [ "$1" = rxe ]; then
		rdma link delete rxe0
		rmmod rdma_rxe
	else
		"$REPO/build/bin/softxrc" link del softxrc1
	fi
}

# dev_env CMD...: CMD on the libibverbs of DEV_KIND's device.
dev_env() {
	if [ "$DEV_KIND" = rxe ]; then
		env -u LD_LIBRARY_PATH "$@"
	else
		env LD_LIBRARY_PATH="$REPO/build/lib" "$@"
	fi
}

# dev_counter NAME [DEV]: counter NAME of the device DEV (default $DEV):
# a softxrc device's counters/NAME, an rdma_rxe device's port 1
# hw_counters/NAME; 0 when it has none.
dev_counter() {
	local d=${2:-$DEV}

	case "$d" in
	softxrc*) cat "/sys/class/misc/$d/counters/$1" 2>/dev/null || echo 0 ;;
	*) cat "/sys/class/infiniband/$d/ports/1/hw_counters/$1" 2>/dev/null || echo 0 ;;
	esac
}

# dev_gid_index: the index of DEV's GID ::ffff:SXRC_PAIR_SELF of type
# RoCE v2, as "ibv_devinfo -v" shows it (softxrc has no
# /sys/class/infiniband: the library is where both kinds show it).
dev_gid_index() {
	local self

	self=$(printf '%s' "$SXRC_PAIR_SELF" | sed 's/\./\\./g')
	dev_env ibv_devinfo -v -d "$DEV" 2>/dev/null |
		sed -n "s/^[[:space:]]*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:$self, RoCE v2\$/\1/p" |
		head -n 1 | grep .
}

# pair_failure LOG: of a tools/vm-pair run that failed, whose output
# ("[a] ..." and "[b] ..." lines) is in LOG, as "#" lines: what the
# guests' vm-run said (its errors, their kernels' reports and console
# lines) and the last lines of each guest's own output.
pair_failure() {
	local g

	grep -E '^\[[ab]\] (vm-run(\(guest\))?: error|  \| )' "$1" | head -n 80 |
		sed 's/^/#   /' || true
	for g in a b; do
		grep "^\[$g\] " "$1" | grep -v '^\[.\]   | ' | tail -n 15 | sed 's/^/#   /' || true
	done
}
