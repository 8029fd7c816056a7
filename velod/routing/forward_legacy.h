/* SPDX-License-Identifier: Apache-2.0 */
/* Detecting a legacy iptables (x_tables) FORWARD chain that drops pod traffic. */
#ifndef VELOD_ROUTING_FORWARD_LEGACY_H
#define VELOD_ROUTING_FORWARD_LEGACY_H

/* For IP version 4 or 6: warns (once per change) when the legacy filter table's FORWARD policy
 * is DROP without "-i <prefix>+ -j ACCEPT" and "-o <prefix>+ -j ACCEPT"; nothing with prefix
 * "". 0 or -errno (the chain couldn't be read). */
int forward_legacy_check(int version, const char *prefix);

#endif
