/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names of flow events' kinds, reasons and paths (bpf/lib/velo_flow.h):
 * one vocabulary for velod's JSON and metrics, veloctl's filters and output,
 * and docs/flows.md.
 */
#ifndef VELO_DATAPATH_FLOW_NAMES_H
#define VELO_DATAPATH_FLOW_NAMES_H

#include <stdint.h>

/* A reason's name ("policy-ingress-denied"), "" for none; "unknown" out of range. */
const char *velo_flow_reason_name(unsigned reason);
/* What the reason means, one line (veloctl, docs). */
const char *velo_flow_reason_help(unsigned reason);
/* The reason of a name; -EINVAL when none has it. */
int velo_flow_reason_parse(const char *name);
const char *velo_flow_kind_name(unsigned kind);
const char *velo_flow_path_name(unsigned path);
/* "dropped" for drops, "audit" for what an audited policy would have dropped, else "forwarded". */
const char *velo_flow_verdict(unsigned kind);
/* "tcp", "udp", "icmp", ... or the number in buf. */
const char *velo_flow_proto_name(uint8_t proto, char *buf, unsigned len);
/* The protocol of a name or a number; -EINVAL otherwise. */
int velo_flow_proto_parse(const char *name);

#endif
