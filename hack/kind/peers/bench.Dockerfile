# SPDX-License-Identifier: Apache-2.0
# The benchmark pods of bench/cluster.sh, the same under every CNI: iperf3 from Debian and
# velo's traffic tools (bench/dp_traffic.c, bench/flows_conn.c), static.
ARG BASE
FROM ${BASE}
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iperf3 procps \
	&& rm -rf /var/lib/apt/lists/*
COPY dp_traffic flows_conn /usr/local/bin/
CMD ["sleep", "infinity"]
