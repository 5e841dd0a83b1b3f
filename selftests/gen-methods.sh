#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# gen-methods.sh ABI_HEADER: print sxrc_methods.h, every method of the
# uapi header (enum sxrc_<object>_method, on the object SXRC_OBJ_<OBJECT>
# of enum sxrc_object) as SXRC_METHODS(X): X(object, method), ordered by
# object id, then method id.  These enums are what the kernel's dispatch
# tables (kernel/uctx.c) are indexed by.
set -eu
awk '
/^enum sxrc_object \{/ { in_obj = 1; next }
/^enum sxrc_[a-z]+_method \{/ {
	obj = $2; sub(/^sxrc_/, "", obj); sub(/_method$/, "", obj)
	obj = "SXRC_OBJ_" toupper(obj); in_meth = 1; next
}
/^\};/ { in_obj = 0; in_meth = 0; next }
in_obj && $1 ~ /^SXRC_OBJ_/ && $2 == "=" {
	v = $3; sub(/,$/, "", v); id[$1] = v + 0
}
in_meth && $1 ~ /^SXRC_/ && $2 == "=" {
	v = $3; sub(/,$/, "", v)
	n++; mobj[n] = obj; mname[n] = $1; mid[n] = v + 0
}
END {
	if (!n) { print "gen-methods.sh: no methods found" > "/dev/stderr"; exit 1 }
	for (i = 1; i <= n; i++) {
		if (!(mobj[i] in id)) {
			print "gen-methods.sh: no object " mobj[i] > "/dev/stderr"
			exit 1
		}
		key[i] = id[mobj[i]] * 65536 + mid[i]
	}
	for (i = 2; i <= n; i++)	# insertion sort: a few dozen entries
		for (j = i; j > 1 && key[j - 1] > key[j]; j--) {
			t = key[j]; key[j] = key[j - 1]; key[j - 1] = t
			t = mobj[j]; mobj[j] = mobj[j - 1]; mobj[j - 1] = t
			t = mname[j]; mname[j] = mname[j - 1]; mname[j - 1] = t
		}
	print "/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */"
	print "/* Made by selftests/gen-methods.sh from rdma/softxrc-abi.h. */"
	print "#ifndef SXRC_METHODS_H"
	print "#define SXRC_METHODS_H"
	print ""
	print "#define SXRC_METHODS(X) \\"
	for (i = 1; i <= n; i++)
		printf "\tX(%s, %s)%s\n", mobj[i], mname[i], i < n ? " \\" : ""
	print ""
	print "#endif /* SXRC_METHODS_H */"
}' "$1"
