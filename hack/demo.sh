#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# velo's main job on one machine: a "node" (its own network namespace, forwarding
# off until velo turns it on per device) with pods wired by velo through the CNI
# protocol, traffic between them checked by digest, and what it measured.
# Everything it creates is named velodemo-* and removed at exit.
# Usage: sudo hack/demo.sh [--no-deps]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

if [ "${1:-}" != "--no-deps" ]; then
	hack/install-deps.sh >/tmp/velodemo-deps.log 2>&1 || { cat /tmp/velodemo-deps.log; exit 1; }
fi
make -s -j"$(nproc)" all

work=$(mktemp -d /tmp/velodemo.XXXXXX)
node=velodemo-node-$$
pods=()
cleanup() {
	set +e
	for pod in "${pods[@]}"; do ip netns del "$pod" 2>/dev/null; done
	ip netns del "$node" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

bin=$work/bin
mkdir -p "$bin"
cp build/velo "$bin/"
cp /usr/lib/cni/host-local "$bin/"

ip netns add "$node"
in_node() { nsenter --net="/run/netns/$node" "$@"; }
in_node ip link set lo up
for key in net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv4.conf.default.forwarding \
	net.ipv6.conf.all.forwarding; do
	in_node sysctl -qw "$key=0"
done

config=$(cat <<JSON
{"cniVersion":"1.0.0","name":"velodemo","type":"velo","vethPrefix":"vd",
 "stateDir":"$work/state","runDir":"$work/run","bpffsDir":"$work/bpffs","logFile":"$work/cni.log",
 "ipam":{"type":"host-local","dataDir":"$work/ipam",
  "ranges":[[{"subnet":"10.77.0.0/24"}],[{"subnet":"fd77::/120"}]]}}
JSON
)

# cni VERB ID NETNS: runs velo in the node namespace, result JSON on stdout.
cni() {
	printf '%s' "$config" | in_node env CNI_COMMAND="$1" CNI_CONTAINERID="$2" \
		CNI_NETNS="$3" CNI_IFNAME=eth0 CNI_PATH="$bin" "$bin/velo"
}

declare -A addr4 addr6 result
for name in a b; do
	pod=velodemo-pod-$name-$$
	ip netns add "$pod"
	pods+=("$pod")
	ip -n "$pod" link set lo up
	start=$(date +%s%N)
	result[$name]=$(cni ADD "velodemo-$name" "/run/netns/$pod")
	end=$(date +%s%N)
	addr4[$name]=$(jq -r '.ips[] | select(.address | contains(".")) | .address' <<<"${result[$name]}" | cut -d/ -f1)
	addr6[$name]=$(jq -r '.ips[] | select(.address | contains(":")) | .address' <<<"${result[$name]}" | cut -d/ -f1)
	printf 'pod %s: %s %s (veth %s), ADD took %d ms\n' "$name" "${addr4[$name]}" "${addr6[$name]}" \
		"$(jq -r '.interfaces[0].name' <<<"${result[$name]}")" $(((end - start) / 1000000))
done

in_pod() { local pod=velodemo-pod-$1-$$; shift; nsenter --net="/run/netns/$pod" "$@"; }

echo "node -> pod a:  $(in_node ping -c1 -W2 "${addr4[a]}" | grep -o 'time=.*')"
echo "pod a -> pod b (IPv6): $(in_pod a ping -6 -c1 -W2 "${addr6[b]}" | grep -o 'time=.*')"

# 16 MiB from pod a to pod b over TCP, checked by digest.
head -c 16777216 /dev/urandom >"$work/payload"
want=$(sha256sum <"$work/payload" | cut -d' ' -f1)
in_pod b socat -u TCP4-LISTEN:5001,reuseaddr OPEN:"$work/received",creat,trunc &
listener=$!
sleep 0.3
in_pod a socat -u OPEN:"$work/payload" TCP4:"${addr4[b]}":5001
wait "$listener"
got=$(sha256sum <"$work/received" | cut -d' ' -f1)
[ "$want" = "$got" ] && echo "TCP pod a -> pod b: 16 MiB, digest matches" || {
	echo "TCP pod a -> pod b: DIGEST MISMATCH" >&2
	exit 1
}

# Throughput on the routed path (iperf3, 3 s).
in_pod b iperf3 -s -1 -D -B "${addr4[b]}" >/dev/null
sleep 0.3
gbps=$(in_pod a iperf3 -c "${addr4[b]}" -t 3 -J | jq '.end.sum_received.bits_per_second / 1e9')
printf 'iperf3 pod a -> pod b, routed path: %.2f Gbit/s\n' "$gbps"

prev=$(jq -c '.' <<<"${result[a]}")
printf '%s' "$config" | jq -c --argjson prev "$prev" '. + {prevResult: $prev}' >"$work/check.json"
if in_node env CNI_COMMAND=CHECK CNI_CONTAINERID=velodemo-a CNI_NETNS="/run/netns/velodemo-pod-a-$$" \
	CNI_IFNAME=eth0 CNI_PATH="$bin" "$bin/velo" <"$work/check.json"; then
	echo "CHECK pod a: healthy"
fi

for name in a b; do
	cni DEL "velodemo-$name" "/run/netns/velodemo-pod-$name-$$"
done
left=$(in_node ip -o link show | grep -c ' vd' || true)
echo "after DEL: $left velo veths left, $(find "$work/ipam" -type f -name '10.*' | wc -l) leases left"
