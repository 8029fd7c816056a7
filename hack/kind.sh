#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# velo in a real Kubernetes cluster on this machine, built from source with no registry:
#
#   hack/kind.sh build             build what the cache lacks (binaries, images); up does it too
#   hack/kind.sh up [--cni NAME] [--routing MODE] [dual-stack]  build what is missing, create
#                                  the kind cluster (1 control plane + 2 workers, no default CNI,
#                                  kube-proxy iptables), install velo (manifests/; velod's
#                                  routingMode MODE: host-gw, vxlan or auto) or NAME
#                                  (kind/peers/), wait for every node Ready and CoreDNS answering
#   hack/kind.sh e2e               velo's own checks in the cluster (e2e/kind/run.sh)
#   hack/kind.sh conformance       upstream e2e.test, [sig-network] [Conformance]; prints
#                                  "conformance: N passed, N failed, N skipped" and the JUnit file
#   hack/kind.sh netpol            upstream e2e.test, NetworkPolicy specs; prints
#                                  "netpol: N passed, N failed, N skipped" and each failure and skip
#   hack/kind.sh cnp               the ClusterNetworkPolicy conformance suite (network-policy-api),
#                                  standard and experimental; prints "cnp: N passed, N failed,
#                                  N skipped", each failure and skip, and the report's path
#   hack/kind.sh down              delete the cluster
#
# Needs root, Docker, Go and debootstrap (hack/install-deps.sh). Caches under $VELO_KIND_CACHE
# (/var/cache/velo-kind). Environment: VELO_KIND_CLUSTER (velo), VELO_KIND_TIMEOUT (300s),
# VELO_KIND_SKIP_BUILD=1 (use what is built), VELO_CONFORMANCE_FOCUS, VELO_CONFORMANCE_SKIP,
# VELO_CONFORMANCE_NODES (parallel ginkgo nodes, 4), VELO_NETPOL_FOCUS, VELO_NETPOL_SKIP,
# VELO_IMAGE (velo:dev), VELO_CNP_URL, VELO_CNP_CONTACT (the report's implementation fields).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=hack/kind/versions.sh
. "$here/kind/versions.sh"
# shellcheck source=hack/kind/peers/peers.bash
. "$here/kind/peers/peers.bash"

cluster=${VELO_KIND_CLUSTER:-velo}
timeout=${VELO_KIND_TIMEOUT:-300s}
# images.sh builds it under this tag too: a second cluster's bench keeps its own velo image.
velo_image=${VELO_IMAGE:-velo:dev}
bin=$VELO_KIND_CACHE/bin/$K8S_VERSION
artifacts=${VELO_KIND_ARTIFACTS:-$VELO_KIND_CACHE/artifacts}
export PATH=$here/kind/shim:$bin:$PATH
export KUBECONFIG=$VELO_KIND_CACHE/kubeconfig-$cluster

log() { printf '== kind.sh: %s\n' "$*" >&2; }
die() {
	printf 'kind.sh: error: %s\n' "$*" >&2
	exit 1
}
kc() { kubectl "$@"; }

diagnose() {
	local pod
	kc get nodes -o wide || true
	kc get pods -A -o wide || true
	for pod in $(kc -n velo-system get pods -o name 2>/dev/null); do
		kc -n velo-system logs "$pod" --all-containers --prefix --tail=30 || true
	done
}

# The node's clock starts when docker does; wait until the apiserver answers at all.
wait_api() {
	local _
	for _ in $(seq 1 60); do
		kc get --raw /readyz >/dev/null 2>&1 && return 0
		sleep 2
	done
	return 1
}

# Builds what the cache lacks. One build at a time: hack/test.sh starts one in the background
# early, and the cluster suite's `up` waits for it here instead of building the same files.
cmd_build() {
	mkdir -p "$VELO_KIND_CACHE"
	exec 9>"$VELO_KIND_CACHE/build.lock"
	flock 9
	"$here/kind/build-bins.sh"
	"$here/kind/images.sh"
	exec 9>&-
}

cmd_up() {
	local cni=velo routing="" overrides=()
	while [ "${1:-}" = --cni ] || [ "${1:-}" = --routing ]; do
		case $1 in
		--cni) cni=${2:?up --cni NAME: $peer_names} ;;
		--routing) routing=${2:?up --routing MODE: host-gw, vxlan or auto} ;;
		esac
		shift 2
	done
	case $routing in
	"" | host-gw | vxlan | auto) ;;
	*) die "up: unknown routing mode '$routing' (host-gw, vxlan, auto)" ;;
	esac
	local family=${1:-ipv4} config start
	case $family in
	ipv4) config=$top/e2e/kind/cluster.yaml ;;
	dual-stack) config=$top/e2e/kind/cluster-dual-stack.yaml ;;
	*) die "up: unknown family '$family' (ipv4, dual-stack)" ;;
	esac
	config=$(peer_config "$cni" "$family" "$config")
	start=$(date +%s)
	[ "${VELO_KIND_SKIP_BUILD:-0}" = 1 ] || cmd_build
	[ "$cni" = velo ] || [ "${VELO_KIND_SKIP_BUILD:-0}" = 1 ] || peer_build "$cni"
	log "built in $(($(date +%s) - start)) s"
	kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
	log "creating cluster $cluster ($family)"
	kind create cluster --name "$cluster" --image "velo-kind/node:$K8S_VERSION" \
		--config "$config" --kubeconfig "$KUBECONFIG" --retain
	wait_api || die "the API server does not answer"
	if [ "$cni" != velo ]; then
		peer_install "$cni" || {
			diagnose
			die "the cluster did not come up ($cni)"
		}
		coredns_answers || {
			diagnose
			die "CoreDNS does not answer"
		}
		log "up ($cni) in $(($(date +%s) - start)) s: KUBECONFIG=$KUBECONFIG"
		return 0
	fi
	kind load docker-image "$velo_image" --name "$cluster"
	log "installing velo"
	# The shipped manifest enforces NetworkPolicy: no separate profile.
	if [ -n "$routing" ]; then
		mkdir -p "$VELO_KIND_CACHE"
		printf '{"velod": {"routingMode": "%s"}}\n' "$routing" >"$VELO_KIND_CACHE/routing-$cluster.json"
		overrides=("$VELO_KIND_CACHE/routing-$cluster.json")
		log "velod's routingMode: $routing"
	fi
	"$here/kind/manifest.py" "$top/manifests/velo.yaml" "$top/e2e/kind/velo-overrides.json" \
		"$velo_image" "${overrides[@]}" | kc apply -f -
	if ! kc -n velo-system rollout status daemonset/velo --timeout="$timeout" ||
		! kc wait --for=condition=Ready node --all --timeout="$timeout" ||
		! kc -n kube-system rollout status deployment/coredns --timeout="$timeout"; then
		diagnose
		die "the cluster did not come up"
	fi
	coredns_answers || {
		diagnose
		die "CoreDNS does not answer"
	}
	log "up in $(($(date +%s) - start)) s: KUBECONFIG=$KUBECONFIG"
}

# A pod on the cluster network resolves the API's Service name through CoreDNS. CoreDNS can
# be Ready before the path to it is (kube-proxy's rules, velod's routes on a fresh node): the
# pod asks for up to a minute, once it runs (a loaded node may take minutes to start it).
coredns_answers() {
	local out ip='^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$'
	kc delete pod velo-dns-check --ignore-not-found --wait=true >/dev/null
	# Run, wait, then read its log: `kubectl run -i --rm` loses the output of a pod that ends
	# before kubectl attaches (a loaded machine), and the check then saw nothing.
	kc run velo-dns-check --restart=Never --quiet \
		--image="registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_TAG" --command -- sh -c "
		for i in \$(seq 30); do
			out=\$(dig +short kubernetes.default.svc.cluster.local 2>&1)
			echo \"\$out\" | grep -Eq '$ip' && break
			sleep 2
		done
		echo \"\$out\"" >/dev/null
	kc wait pod/velo-dns-check --for=jsonpath='{.status.phase}'=Succeeded --timeout=4m \
		>/dev/null 2>&1
	out=$(kc logs velo-dns-check 2>&1)
	kc delete pod velo-dns-check --ignore-not-found --wait=false >/dev/null
	grep -Eq "$ip" <<<"$out" || {
		printf 'velo-dns-check: %s\n' "$out" >&2
		return 1
	}
}

cmd_e2e() {
	VELO_E2E_KUBECONFIG=$KUBECONFIG \
		VELO_E2E_TEST_IMAGE="registry.k8s.io/e2e-test-images/busybox:$BUSYBOX_TAG" \
		"$top/e2e/kind/run.sh"
}

# run_e2e_test NAME FOCUS SKIP: upstream e2e.test through ginkgo against the cluster; prints
# "NAME: N passed, N failed, N skipped" over the specs FOCUS matches (SKIP's are skipped).
run_e2e_test() {
	local name=$1 focus=$2 skip=$3 dir passed failed skipped
	dir=$artifacts/$name
	rm -rf "$dir"
	mkdir -p "$dir"
	log "$name: focus '$focus', skip '$skip'"
	ginkgo --nodes="${VELO_CONFORMANCE_NODES:-4}" --focus="$focus" --skip="$skip" \
		--junit-report=junit.xml --output-dir="$dir" --timeout=60m --no-color \
		"$bin/e2e.test" -- --kubeconfig="$KUBECONFIG" --provider=skeleton \
		--report-dir="$dir" --disable-log-dump=true --num-nodes=2 >"$dir/e2e.log" 2>&1 || true
	grep -E '^\s*\[FAIL\]|^(Ran|FAIL|SUCCESS)' "$dir/e2e.log" >&2 || true
	[ -f "$dir/junit.xml" ] || die "$name: no JUnit report (see $dir/e2e.log)"
	"$here/kind/junit.py" "$dir/junit.xml" "$focus" >"$dir/verdicts"
	passed=$(grep -c '^passed' "$dir/verdicts" || true)
	failed=$(grep -c '^failed' "$dir/verdicts" || true)
	skipped=$(grep -c '^skipped' "$dir/verdicts" || true)
	sed -n 's/^failed\t/    failed: /p' "$dir/verdicts"
	sed -n 's/^skipped\t/    skipped: /p' "$dir/verdicts"
	printf '%s: %d passed, %d failed, %d skipped\n' "$name" "$passed" "$failed" "$skipped"
	printf 'JUnit: %s\n' "$dir/junit.xml"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
}

cmd_conformance() {
	local focus=${VELO_CONFORMANCE_FOCUS:-'\[sig-network\].*\[Conformance\]'}
	local skip=${VELO_CONFORMANCE_SKIP:-'\[Serial\]|\[Disruptive\]'}
	run_e2e_test conformance "$focus" "$skip"
}

# NetworkPolicy: the specs of test/e2e/network/netpol, 50 in 1.34.4 (42 over TCP, 3 UDP, 3 SCTP,
# 2 API). Skipped: Serial and Disruptive as in conformance, and [Feature:SCTPConnectivity] (its
# servers need SCTP in the nodes' kernel, which these machines' kernel lacks; the two TCP specs
# about SCTP policies run). Each probe is agnhost connect to the target pod's Service ClusterIP,
# so kube-proxy DNATs it before the backend's policy sees it. A peer CNI's cluster (up --cni)
# runs the same specs; only velo's own configuration is checked first.
cmd_netpol() {
	if kc get namespace velo-system >/dev/null 2>&1; then
		kc -n velo-system get configmap velo-config -o jsonpath='{.data.velod\.json}' |
			grep -q '"policySource": "api"' ||
			die "the cluster's velod has NetworkPolicy off (policySource is not \"api\")"
	fi
	local focus=${VELO_NETPOL_FOCUS:-'\[Feature:NetworkPolicy\]|NetworkPolicy'}
	local skip=${VELO_NETPOL_SKIP:-'\[Serial\]|\[Disruptive\]|\[Feature:SCTPConnectivity\]'}
	local start=$SECONDS
	run_e2e_test netpol "$focus" "$skip" || {
		log "netpol: $((SECONDS - start)) s"
		return 1
	}
	log "netpol: $((SECONDS - start)) s"
}

# ClusterNetworkPolicy: the conformance suite of sigs.k8s.io/network-policy-api at the pinned
# version, run by hack/kind/cnp/cnp_test.go (built by build-bins.sh), profile
# ClusterNetworkPolicy with the features velo claims: the standard channel, named ports and
# node peers. Its ConformanceReport (report.yaml) and the go test output (cnp.log) go to the
# artifacts; the summary counts come from the report. Where the kernel has no SCTP sockets the
# runner skips the tests that connect over SCTP, and says so in cnp.log.
cmd_cnp() {
	local dir=$artifacts/cnp test=$bin/cnp-$NETPOL_API_VERSION.test image local_image reason existing
	local start=$SECONDS commit
	local features=ClusterNetworkPolicy,ClusterNetworkPolicyNamedPorts
	features+=,ClusterNetworkPolicyEgressNodePeers
	[ -x "$test" ] || die "cnp: no $test (hack/kind.sh build makes it)"
	kc get crd clusternetworkpolicies.policy.networking.k8s.io >/dev/null ||
		die "cnp: the cluster has no ClusterNetworkPolicy CRD (manifests/velo.yaml ships it)"
	# The suite creates and deletes its own policies (one is named "default"): others would
	# change its verdicts, or be replaced and deleted by it.
	existing=$(kc get clusternetworkpolicies -o name | tr '\n' ' ')
	[ -z "$existing" ] || die "cnp: the cluster has ClusterNetworkPolicies: $existing"
	# A previous run's namespaces (labelled by house) may still be terminating.
	kc delete namespace -l conformance-house --wait=true --timeout="$timeout" >/dev/null
	rm -rf "$dir"
	mkdir -p "$dir"
	# The suite's pods name an agnhost release of their own: the cluster's agnhost under it.
	local_image=registry.k8s.io/e2e-test-images/agnhost:$AGNHOST_TAG
	while read -r image; do
		case $image in
		registry.k8s.io/e2e-test-images/agnhost:*) ;;
		*) die "cnp: the suite's manifests name $image, which the cluster can't build" ;;
		esac
		[ "$image" = "$local_image" ] || docker tag "$local_image" "$image"
		kind load docker-image "$image" --name "$cluster" >>"$dir/load.log" 2>&1 ||
			die "cnp: kind load $image failed (see $dir/load.log)"
	done <"$test.images"
	commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)
	log "cnp: network-policy-api $NETPOL_API_VERSION conformance, velo $commit"
	(cd "$dir" && "$test" -test.run '^TestCNP$' -test.v -test.timeout 120m \
		-conformance-profiles=ClusterNetworkPolicy \
		-supported-features="$features" \
		-organization=velo -project=velo \
		-url="${VELO_CNP_URL:-$(git -C "$top" remote get-url origin 2>/dev/null || echo "file://$top")}" \
		-contact="${VELO_CNP_CONTACT:-velo maintainers}" -version="$commit" \
		-additional-info="hack/kind.sh cnp, kind cluster $cluster, Kubernetes $K8S_VERSION" \
		-report-output="$dir/report.yaml") >"$dir/cnp.log" 2>&1 || true
	log "cnp: $((SECONDS - start)) s"
	[ -f "$dir/report.yaml" ] || {
		grep -E '^\s*(--- FAIL|FAIL|panic)|Error|error' "$dir/cnp.log" | head -20 >&2 || true
		die "cnp: no report (see $dir/cnp.log)"
	}
	reason="not run"
	grep -q 'no SCTP sockets in this kernel' "$dir/cnp.log" &&
		reason="connects over SCTP; this kernel has no SCTP sockets"
	"$here/kind/cnp_report.py" "$dir/report.yaml" "$reason" | tee "$dir/summary"
	printf 'report: %s\nlog: %s\n' "$dir/report.yaml" "$dir/cnp.log"
	grep -q '^cnp: [0-9]* passed, 0 failed' "$dir/summary"
}

cmd_down() {
	kind delete cluster --name "$cluster"
	rm -f "$KUBECONFIG"
}

case ${1:-} in
build) cmd_build ;;
up) shift && cmd_up "$@" ;;
e2e) cmd_e2e ;;
conformance) cmd_conformance ;;
netpol) cmd_netpol ;;
cnp) cmd_cnp ;;
down) cmd_down ;;
*)
	sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
