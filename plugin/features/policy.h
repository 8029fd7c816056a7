/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy at ADD, for a Kubernetes pod (CNI_ARGS name its namespace)
 * while velod's switch (state/policy_switch.h) is on. velod
 * decides which pods policies select and attaches or detaches their programs
 * as policies change; ADD attaches them up front, so a pod is isolated before
 * its first packet, when velod's <runDir>/policy/namespaces lists the pod's
 * namespace (some policy there may select it) or is missing (velod hasn't
 * synced since it turned policy on: fail closed). DEL always removes them,
 * whoever attached them, and CHECK looks whatever the record's bit says
 * (velod attaches to pods wired while policy was off). The conflist's
 * "policy" is no longer read.
 */
#ifndef VELO_FEATURES_POLICY_H
#define VELO_FEATURES_POLICY_H

#include "features/feature.h"

/* velod's list of namespaces with NetworkPolicies, under runDir. */
#define VELO_POLICY_NAMESPACES_FILE "policy/namespaces"

extern const struct velo_feature velo_feature_policy;

#endif
