/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A ClusterNetworkPolicy rule's protocols (cnp_ports.c): each exactly one of
 * tcp, udp, sctp (a destinationPort number or range, or none: every port) or
 * destinationNamedPort (a name, any protocol the pod gives it; port 0).
 */
#ifndef VELO_POLICY_CNP_PORTS_H
#define VELO_POLICY_CNP_PORTS_H

#include <cJSON.h>

#include "policy/objects.h"

/* protocols (NULL: none, every port) into rule->ports: 0, -EINVAL (unreadable), -ENOMEM. */
int velo_pol_cnp_ports_parse(const cJSON *list, struct velo_pol_cnp_rule *rule);

#endif
