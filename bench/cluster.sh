#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# velo against the CNIs users would pick instead (issue 42), in the same kind cluster on the same
# kernel, one CNI at a time: for each CNI, hack/kind.sh up --cni NAME, measure, (conformance),
# down; then one table of every CNI's numbers and their ratios to velo's.
#
#   bench/cluster.sh [-o OUTDIR] [-r ROUNDS] [-n PER] [-t SECONDS] [-c "CNIS"] [-C] [-N] [-P]
#
# -r ROUNDS (1): each round brings every CNI up once, in an order rotated per round, so machine
# drift hits all alike; -n PER (3): samples of each traffic class per cluster; -t SECONDS (5):
# per stream; -c CNIS ("velo velo-best cilium cilium-best flannel flannel-vxlan"); -C: also
# each CNI's [sig-network] [Conformance] run; -N: also its NetworkPolicy e2e (hack/kind.sh
# netpol; not for flannel, which implements no NetworkPolicy); -P: also a CPU profile of one
# more 128 KiB stream across nodes, outside the samples (perf, from linux-perf). Cluster
# VELO_BENCH_CLUSTER (velo-peers), never kind.sh's default. Traffic only between the cluster's
# pods (the kind nodes are containers on this machine's Docker network). Outputs in OUTDIR
# (build/bench): cluster.md, cluster_samples.csv (round, cni, class, value), cluster.log (each
# up, each step), cluster-CLASS.png (one plot per class: each CNI's median and min-max),
# conformance-CNI.txt and netpol-CNI.txt (each spec's verdict, so the skip lists can be set
# side by side), profile-CNI.txt (-P: perf's symbols by share of the machine's cycles) and
# profiles.md (cluster_profiles.py: every CNI's shares side by side).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/kind/versions.sh
. "$top/hack/kind/versions.sh"

out=$top/build/bench
rounds=1
per=3
secs=5
cnis="velo velo-best cilium cilium-best flannel flannel-vxlan"
conformance=0
netpol=0
profile=0
flags=""
while getopts o:r:n:t:c:CNP opt; do
	case $opt in
	o) out=$OPTARG ;;
	r) rounds=$OPTARG ;;
	n) per=$OPTARG ;;
	t) secs=$OPTARG ;;
	c) cnis=$OPTARG ;;
	C) conformance=1 flags+=" -C" ;;
	N) netpol=1 flags+=" -N" ;;
	P) profile=1 flags+=" -P" ;;
	*) exit 2 ;;
	esac
done
[ "$profile" = 0 ] || command -v perf >/dev/null || {
	echo "cluster.sh: -P needs perf (apt-get install linux-perf)" >&2
	exit 2
}
cluster=${VELO_BENCH_CLUSTER:-velo-peers}
[ "$cluster" != velo ] || { echo "cluster.sh: not the default cluster 'velo'" >&2; exit 2; }
export VELO_KIND_CLUSTER=$cluster VELO_KIND_TIMEOUT=${VELO_KIND_TIMEOUT:-900s}
# velo's image from this checkout under a tag of its own: a `hack/kind.sh build` elsewhere
# (the default cluster's) retags velo:dev from its own checkout, mid-run.
export VELO_IMAGE=${VELO_IMAGE:-velo-kind/velo-bench:dev}
export KUBECONFIG=$VELO_KIND_CACHE/kubeconfig-$cluster
# kind.sh's docker shim too: `kind load` runs `docker exec --privileged`, which runc refuses
# where the host lacks a capability (hack/kind/shim/docker).
export PATH=$top/hack/kind/shim:$VELO_KIND_CACHE/bin/$K8S_VERSION:$PATH
kind_sh=$top/hack/kind.sh
rr_count=20000
# Both request/response ends on one CPU (the last): with the two ends free, the scheduler puts
# them on one CPU or on two, run to run, and p50 is ~21 or ~55 us on 2 CPUs whatever the CNI
# (velo, cilium-best: docs/benchmarks.md "Request/response: where the two ends run").
rr_cpu=$(($(nproc) - 1))
# A stream's two ends on two CPUs, the same two for every CNI: unpinned, where the scheduler put
# them moved a CNI's 128 KiB streams by up to a third between samples, and decided classes
# (docs/benchmarks.md, "Sixth machine"); pinned, a few percent. 1 KiB streams spread either way.
stream_srv_cpu=$rr_cpu
stream_cli_cpu=0
conns=2000
mkdir -p "$out"
samples=$out/cluster_samples.csv
logf=$out/cluster.log
: >"$logf"
[ -f "$samples" ] && [ "${VELO_BENCH_APPEND:-0}" = 1 ] || echo "round,cni,class,value" >"$samples"

log() { printf '== cluster.sh: %s\n' "$*" | tee -a "$logf" >&2; }
kc() { kubectl "$@"; }
sample() { echo "$1,$2,$3,$4" >>"$samples"; }

up=0
cleanup() {
	[ "$up" = 1 ] && "$kind_sh" down >>"$logf" 2>&1
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The benchmark pods: a server and a client on worker, a client on worker2, a ClusterIP in
# front of the server (iperf3 5201, dp_traffic's echo 7000, flows_conn's accept-close 7001).
bench_pods() {
	local pod node
	kc create namespace velobench >/dev/null
	for pod in srv:worker cli-same:worker cli-cross:worker2; do
		node=$cluster-${pod#*:}
		kc -n velobench apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: ${pod%%:*}
  labels: {app: velobench-${pod%%:*}}
spec:
  nodeName: $node
  terminationGracePeriodSeconds: 0
  containers:
    - name: bench
      image: velo-kind/bench:dev
      imagePullPolicy: Never
      command: [sh, -c, "taskset -c $stream_srv_cpu iperf3 -s -p 5201 & taskset -c $rr_cpu dp_traffic rr-server 7000 & flows_conn server 7001 & wait"]
EOF
	done
	kc -n velobench apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: srv
spec:
  selector: {app: velobench-srv}
  ports:
    - {name: iperf, port: 5201}
    - {name: rr, port: 7000}
    - {name: crr, port: 7001}
EOF
	kc -n velobench wait --for=condition=Ready pod --all --timeout=300s >/dev/null
}

# node_cpu: CPU nanoseconds the two workers' containers have used (Docker's cpuacct cgroup).
node_cpu() {
	local n id total=0 f
	for n in worker worker2; do
		id=$(docker inspect -f '{{.Id}}' "$cluster-$n")
		for f in /sys/fs/cgroup/cpuacct/docker/"$id"/cpuacct.usage \
			/sys/fs/cgroup/cpu,cpuacct/docker/"$id"/cpuacct.usage; do
			[ -f "$f" ] && total=$((total + $(cat "$f"))) && break
		done
	done
	echo "$total"
}

# traffic ROUND CNI: every class, PER times, alternating classes within each repetition.
traffic() {
	local round=$1 cni=$2 srv svc rep dst ip from v c0 c1 t0 t1
	srv=$(kc -n velobench get pod srv -o jsonpath='{.status.podIP}')
	svc=$(kc -n velobench get service srv -o jsonpath='{.spec.clusterIP}')
	log "$cni: server $srv, ClusterIP $svc"
	for rep in $(seq "$per"); do
		for dst in pod svc; do
			ip=$srv
			[ "$dst" = pod ] || ip=$svc
			for from in same cross; do
				c0=$(node_cpu)
				t0=$(date +%s%N)
				v=$(kc -n velobench exec "cli-$from" -- taskset -c "$stream_cli_cpu" \
					iperf3 -c "$ip" -p 5201 -t "$secs" -l 128K -J |
					jq '.end.sum_received.bits_per_second / 1e9')
				t1=$(date +%s%N)
				c1=$(node_cpu)
				sample "$round" "$cni" "tcp128k-$from-$dst" "$v"
				# Both workers' CPU over the stream, per Gbit/s moved.
				sample "$round" "$cni" "cpu128k-$from-$dst" \
					"$(awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) -v g="$v" \
						'BEGIN { printf "%.4f", c / t / g }')"
				v=$(kc -n velobench exec "cli-$from" -- taskset -c "$stream_cli_cpu" \
					iperf3 -c "$ip" -p 5201 -t "$secs" -l 1K -J |
					jq '.end.sum_received.bits_per_second / 1e9')
				sample "$round" "$cni" "tcp1k-$from-$dst" "$v"
				read -r p50 p99 < <(kc -n velobench exec "cli-$from" -- \
					taskset -c "$rr_cpu" dp_traffic rr-client tcp "$ip" 7000 "$rr_count")
				sample "$round" "$cni" "rr50-$from-$dst" "$p50"
				sample "$round" "$cni" "rr99-$from-$dst" "$p99"
				v=$(kc -n velobench exec "cli-$from" -- flows_conn client "$ip" 7001 "$conns")
				sample "$round" "$cni" "crr-$from-$dst" "$v"
				log "$cni rep $rep $from $dst: done"
			done
		done
	done
}

# profile_stream CNI: one more 128 KiB stream across nodes, not a sample, with `perf record -a`
# over its middle: where every CPU's cycles went (kind's nodes share this machine's kernel).
profile_stream() {
	local cni=$1 srv stream
	srv=$(kc -n velobench get pod srv -o jsonpath='{.status.podIP}')
	kc -n velobench exec cli-cross -- taskset -c "$stream_cli_cpu" \
		iperf3 -c "$srv" -p 5201 -t "$secs" -l 128K >>"$logf" 2>&1 &
	stream=$!
	sleep 1
	perf record -a -g -q -o "$out/profile-$cni.data" -- sleep $((secs > 3 ? secs - 2 : 1)) \
		>>"$logf" 2>&1
	wait "$stream" || log "$cni: the profiled stream failed"
	perf report -i "$out/profile-$cni.data" --no-children -g none --sort dso,symbol \
		--percent-limit 0.3 --stdio 2>/dev/null | grep "%" | sed "s/[ -]*$//" \
		>"$out/profile-$cni.txt" || true
}

# kubelet_hist NODE METRIC: "sum count" of a kubelet histogram (summed over its labels).
kubelet_hist() {
	kc get --raw "/api/v1/nodes/$1/proxy/metrics" |
		awk -v m="$2" '$1 ~ "^"m"_sum" { s += $2 } $1 ~ "^"m"_count" { c += $2 }
			END { printf "%s %s\n", s + 0, c + 0 }'
}

# pod_start ROUND CNI: 50 pods created in one request, spread by the scheduler over the
# workers; each pod's time from the request to a watch seeing it Ready (p50, p99), and the
# kubelets' own histograms over the same pods (means).
pod_start() {
	local round=$1 cni=$2 n m i p50 p99
	kc create namespace velobench-start >/dev/null
	for _ in $(seq 60); do
		kc -n velobench-start get serviceaccount default >/dev/null 2>&1 && break
		sleep 1
	done
	local -A before after
	for n in worker worker2; do
		for m in kubelet_pod_start_sli_duration_seconds kubelet_run_podsandbox_duration_seconds; do
			before[$n-$m]=$(kubelet_hist "$cluster-$n" "$m")
		done
	done
	for i in $(seq 50); do
		cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: start-$i}
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - {name: c, image: velo-kind/bench:dev, imagePullPolicy: Never, command: [sleep, infinity]}
---
EOF
	done >"$out/start-pods.yaml"
	# The watch prints each pod's Ready time as it sees it; started before the create. It ends
	# (and stops kubectl's watch) after the 50th pod.
	python3 "$top/bench/cluster_start.py" 50 timeout 900 kubectl -n velobench-start get pods \
		--watch -o json >"$out/start-ready.txt" &
	local watch=$! t0
	sleep 2
	t0=$(date +%s.%N)
	kc -n velobench-start create -f "$out/start-pods.yaml" >/dev/null
	kc -n velobench-start wait --for=condition=Ready pod --all --timeout=600s >/dev/null
	for _ in $(seq 50); do
		[ "$(wc -l <"$out/start-ready.txt")" -ge 50 ] && break
		sleep 0.2
	done
	# It has ended by itself after the 50th pod; if it missed one, it stops its kubectl on TERM.
	kill "$watch" 2>/dev/null || true
	wait "$watch" 2>/dev/null || true
	read -r p50 p99 < <(awk -v t0="$t0" '{ print $2 - t0 }' "$out/start-ready.txt" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.3f %.3f\n", v[int((NR + 1) / 2)], v[int((NR * 99 + 99) / 100)] }')
	sample "$round" "$cni" start50 "$p50"
	sample "$round" "$cni" start99 "$p99"
	for n in worker worker2; do
		for m in kubelet_pod_start_sli_duration_seconds kubelet_run_podsandbox_duration_seconds; do
			after[$n-$m]=$(kubelet_hist "$cluster-$n" "$m")
		done
	done
	for m in kubelet_pod_start_sli_duration_seconds kubelet_run_podsandbox_duration_seconds; do
		sample "$round" "$cni" "${m#kubelet_}" "$(
			for n in worker worker2; do echo "${before[$n-$m]} ${after[$n-$m]}"; done |
				awk '{ s += $3 - $1; c += $4 - $2 } END { printf "%.4f", c ? s / c : 0 }')"
	done
	kc delete namespace velobench-start --wait=false >/dev/null
}

# agent_rss ROUND CNI: the CNI's node agent's resident memory on the server's node (kB).
agent_rss() {
	local procs
	case $2 in
	velo*) procs="velod" ;;
	cilium*) procs="cilium-agent cilium-health-responder" ;;
	flannel*) procs="flanneld" ;;
	esac
	sample "$1" "$2" agent_rss_kb "$(docker exec "$cluster-worker" sh -c "
		for p in \$(pgrep -d ' ' -x '$(echo "$procs" | tr ' ' '|')'); do
			awk '/^VmRSS/ { print \$2 }' /proc/\$p/status
		done" | awk '{ s += $1 } END { print s + 0 }')"
}

# e2e_suite ROUND CNI SUITE: hack/kind.sh SUITE (conformance or netpol) against the cluster;
# its counts as samples, each spec's verdict kept as SUITE-CNI.txt.
e2e_suite() {
	local round=$1 cni=$2 suite=$3 res passed failed skipped
	res=$("$kind_sh" "$suite" 2>>"$logf" | grep "^$suite:" || true)
	log "$cni $res"
	# "SUITE: N passed, N failed, N skipped"; NA where the suite printed no such line.
	read -r _ passed _ failed _ skipped _ <<<"${res:-x NA x NA x NA}"
	sample "$round" "$cni" "${suite}_passed" "$passed"
	sample "$round" "$cni" "${suite}_failed" "$failed"
	sample "$round" "$cni" "${suite}_skipped" "$skipped"
	local verdicts=${VELO_KIND_ARTIFACTS:-$VELO_KIND_CACHE/artifacts}/$suite/verdicts
	cp "$verdicts" "$out/$suite-$cni.txt" 2>/dev/null || true
}

measure() {
	local round=$1 cni=$2 t0
	t0=$(date +%s)
	if ! "$kind_sh" up --cni "$cni" >>"$logf" 2>&1; then
		up=1
		log "$cni: up failed (see $logf)"
		sample "$round" "$cni" up_failed 1
		"$kind_sh" down >>"$logf" 2>&1 || true
		up=0
		return 0
	fi
	up=1
	sample "$round" "$cni" up_s "$(($(date +%s) - t0))"
	log "$cni up in $(($(date +%s) - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
	kind load docker-image velo-kind/bench:dev --name "$cluster" >>"$logf" 2>&1
	bench_pods
	sample "$round" "$cni" load1 "$(cut -d' ' -f1 /proc/loadavg)"
	traffic "$round" "$cni"
	[ "$profile" = 0 ] || profile_stream "$cni"
	agent_rss "$round" "$cni"
	pod_start "$round" "$cni"
	[ "$conformance" = 0 ] || e2e_suite "$round" "$cni" conformance
	if [ "$netpol" = 1 ]; then
		case $cni in
		flannel*) log "$cni: no NetworkPolicy e2e (flannel implements no NetworkPolicy)" ;;
		*) e2e_suite "$round" "$cni" netpol ;;
		esac
	fi
	"$kind_sh" down >>"$logf" 2>&1
	up=0
}

# Everything built once, under the build lock; each up then uses it (kind.sh's build would
# rebuild velo:dev every time).
"$kind_sh" build >>"$logf" 2>&1
(
	exec 9>"$VELO_KIND_CACHE/build.lock"
	flock 9
	# shellcheck disable=SC2086 # the CNIs' names
	"$top/hack/kind/peers/build.sh" $cnis bench
) >>"$logf" 2>&1
export VELO_KIND_SKIP_BUILD=1
read -ra order <<<"$cnis"
for round in $(seq "$rounds"); do
	for i in "${!order[@]}"; do
		cni=${order[$(((i + round - 1) % ${#order[@]}))]}
		log "round $round: $cni"
		measure "$round" "$cni"
	done
done
{
	printf '%s UTC, commit %s, kernel %s, %s CPUs, Kubernetes %s; load average %s at the end.\n' \
		"$(date -u '+%Y-%m-%d %H:%M')" "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo ?)" \
		"$(uname -r)" "$(nproc)" "$K8S_VERSION" "$(cut -d' ' -f1-3 /proc/loadavg)"
	# shellcheck disable=SC2016 # backquotes for markdown
	printf 'Command: `bench/cluster.sh -r %s -n %s -t %s -c "%s"%s`.\n\n' "$rounds" "$per" \
		"$secs" "$cnis" "$flags"
	python3 "$top/bench/cluster_report.py" "$samples"
} >"$out/cluster.md"
# One PNG per class (cluster_plot.py): every CNI's median and min-max side by side.
python3 "$top/bench/cluster_plot.py" "$samples" "$out" >>"$logf" 2>&1 || log "plots failed"
[ "$profile" = 0 ] || python3 "$top/bench/cluster_profiles.py" "$out" >"$out/profiles.md" ||
	log "profiles table failed"
log "results: $out/cluster.md, $out/cluster-*.png"
