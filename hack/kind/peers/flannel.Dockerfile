# SPDX-License-Identifier: Apache-2.0
# flanneld on the base with what its daemon runs (iptables with the nft backend, as the node,
# for its masquerade and forward rules), and Debian's reference plugins, whose bridge and
# host-local flannel-cni-conf installs in place of the flannel CNI plugin (not on the proxy).
ARG BASE
FROM ${BASE}
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		iptables iproute2 containernetworking-plugins ca-certificates \
	&& rm -rf /var/lib/apt/lists/* \
	&& update-alternatives --set iptables /usr/sbin/iptables-nft \
	&& update-alternatives --set ip6tables /usr/sbin/ip6tables-nft
COPY flanneld /opt/bin/flanneld
COPY flannel-cni-conf /usr/local/bin/flannel-cni-conf
ENTRYPOINT ["/opt/bin/flanneld"]
