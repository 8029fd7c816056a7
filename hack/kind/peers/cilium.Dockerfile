# SPDX-License-Identifier: Apache-2.0
# The Cilium agent's image on the debootstrap'd base (Cilium's own is its cilium-runtime image):
# clang and llc from Debian's LLVM 19, the LLVM Cilium ships, for the BPF it compiles at runtime;
# iptables (nft, as the node and kube-proxy), ipset and iproute2; the programs of
# build-cilium.sh and the scripts its chart's init containers run, where Cilium puts them.
ARG BASE
FROM ${BASE}
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		clang-19 llvm-19 iproute2 iptables ipset kmod ca-certificates procps \
	&& rm -rf /var/lib/apt/lists/* \
	&& ln -s /usr/bin/clang-19 /usr/local/bin/clang \
	&& ln -s /usr/bin/llc-19 /usr/local/bin/llc \
	&& update-alternatives --set iptables /usr/sbin/iptables-nft \
	&& update-alternatives --set ip6tables /usr/sbin/ip6tables-nft
COPY bin/ /usr/bin/
# install-plugin.sh (the install-cni-binaries init container) copies the plugin from here.
RUN mkdir -p /opt/cni/bin && cp /usr/bin/cilium-cni /opt/cni/bin/cilium-cni
COPY bpf /var/lib/cilium/bpf
COPY init-container.sh install-plugin.sh cni-uninstall.sh /
ENV INITSYSTEM=SYSTEMD
WORKDIR /home/cilium
CMD ["/usr/bin/cilium-dbg"]
