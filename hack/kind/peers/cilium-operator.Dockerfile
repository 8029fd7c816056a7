# SPDX-License-Identifier: Apache-2.0
# Cilium's operator (the generic IPAM provider) alone on the base, as Cilium ships it.
ARG BASE
FROM ${BASE}
COPY cilium-operator-generic /usr/bin/cilium-operator-generic
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates \
	&& rm -rf /var/lib/apt/lists/*
CMD ["/usr/bin/cilium-operator-generic"]
