/* SPDX-License-Identifier: Apache-2.0 */
/* CHECK's look at the wiring: read-only, every drift from the spec recorded as a detail line. */
#ifndef VELO_NET_WIRING_CHECK_H
#define VELO_NET_WIRING_CHECK_H

#include "net/wiring_spec.h"

/* Read-only; records every drift with cni_error_detail(); -EIO-like error if any. */
int wiring_check(const struct wiring_spec *spec, const struct wiring_state *expected);

#endif
