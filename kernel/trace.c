// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc tracepoints: instantiated here, declared in sxrc_trace.h.
 */
#define CREATE_TRACE_POINTS
#include "sxrc_trace.h"
