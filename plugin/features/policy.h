/* SPDX-License-Identifier: Apache-2.0 */
/*
 * NetworkPolicy at ADD (the conflist's "policy": true). velod decides which
 * pods policies select and attaches or detaches their programs as policies
 * change; ADD attaches them up front, so a pod is isolated before its first
 * packet, when velod's <runDir>/policy/namespaces lists the pod's namespace
 * (some policy there may select it) or is missing (velod hasn't synced: fail
 * closed). DEL always removes them, whoever attached them.
 */
#ifndef VELO_FEATURES_POLICY_H
#define VELO_FEATURES_POLICY_H

#include "features/feature.h"

/* velod's list of namespaces with NetworkPolicies, under runDir. */
#define VELO_POLICY_NAMESPACES_FILE "policy/namespaces"

extern const struct velo_feature velo_feature_policy;

#endif
