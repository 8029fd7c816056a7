/* SPDX-License-Identifier: Apache-2.0 */
/* IPAM knobs for tests only; the plugin itself never calls these. */
#ifndef VELO_IPAM_INTERNAL_H
#define VELO_IPAM_INTERNAL_H

#define IPAM_TIMEOUT_MS_DEFAULT 30000U

/* How long one IPAM plugin run may take before it is killed; 0 restores the default. */
void ipam_set_timeout_ms(unsigned timeout_ms);

#endif
