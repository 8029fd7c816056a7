# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Shared helpers for velo's node tests (run as root: `bats -r tests/node`).
#
# Topology per .bats file: a "node" network namespace velotest-node-<tag> whose
# forwarding sysctls start at 0 (the machine's root namespace has forwarding on,
# which hides bugs). The plugin runs inside it via nsenter, driven through the
# CNI protocol (env + config on stdin). Pods are namespaces velotest-pod-<tag>-N.
# Per test: a temp dir $VT (/tmp/velotest-XXXXXX) with the CNI bin dir, IPAM
# data, velo's state/run dirs and log. Everything is removed, pass or fail.
#
# VELOTEST_PLUGIN selects the plugin under test: "velo" (default; $VELO_BIN or
# <repo>/build/velo) or "ptp" (the reference plugin, to check the harness;
# tests of velo-only behaviour skip). VELOTEST_KEEP=1 keeps $VT for debugging.

VELOTEST_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# What the kernel matrix's guest shares with these tests (CNI invocation, cgroups, the policy grid).
# shellcheck source=tests/node/lib/guest_shared.bash
. "$(dirname "${BASH_SOURCE[0]}")/guest_shared.bash"
VELOTEST_PLUGIN="${VELOTEST_PLUGIN:-velo}"
VELOTEST_REF_CNI_DIR="${VELOTEST_REF_CNI_DIR:-/usr/lib/cni}"
VT_NETWORK=velotest
VT_SUBNET4=10.99.0.0/24
VT_SUBNET6=fd99::/120
# The node's own addresses (on its lo: a real node has one on its uplink; the
# node needs a source address to reach pods, and pods reach it there).
VT_NODE_ADDR4=10.98.0.1
VT_NODE_ADDR6=fd98::1
# The MAC velo gives every host veth (the pods' gateway); read by the .bats files.
# shellcheck disable=SC2034
VT_HOST_MAC=ee:ee:ee:ee:ee:ee

# ---------------------------------------------------------------- file level

# Why this file's tests skip ("" = they run). bats 1.8 can't skip in setup_file.
vt_prereq_missing() {
	local cmd

	[ "$(id -u)" -eq 0 ] || { echo "needs root (creates namespaces, veths and routes)"; return; }
	for cmd in ip nsenter jq socat sha256sum iptables ss; do
		command -v "$cmd" >/dev/null 2>&1 ||
			{ echo "$cmd not installed (hack/install-deps.sh)"; return; }
	done
	command -v ping >/dev/null 2>&1 || command -v busybox >/dev/null 2>&1 ||
		{ echo "no ping (iputils-ping or busybox)"; return; }
	for cmd in host-local portmap; do
		[ -x "$VELOTEST_REF_CNI_DIR/$cmd" ] ||
			{ echo "$VELOTEST_REF_CNI_DIR/$cmd missing (containernetworking-plugins)"; return; }
	done
	[ -x "$1" ] || echo "plugin $1 not found (run make, or set VELO_BIN)"
}

# ping, else busybox's.
if command -v ping >/dev/null 2>&1; then
	VT_PING=(ping)
else
	VT_PING=(busybox ping)
fi

# Called from setup_file: checks prerequisites, creates the node netns.
vt_setup_file() {
	local plugin_bin

	case "$VELOTEST_PLUGIN" in
	velo) plugin_bin="${VELO_BIN:-$VELOTEST_REPO/build/velo}" ;;
	ptp) plugin_bin="$VELOTEST_REF_CNI_DIR/ptp" ;;
	*)
		echo "VELOTEST_PLUGIN must be velo or ptp, not '$VELOTEST_PLUGIN'" >&2
		return 1
		;;
	esac
	VT_SKIP="$(vt_prereq_missing "$plugin_bin")"
	export VT_SKIP
	[ -z "$VT_SKIP" ] || return 0
	export VT_PLUGIN_BIN="$plugin_bin"
	export VT_TAG="${RANDOM}${RANDOM}"
	export VT_NODE="velotest-node-$VT_TAG"
	# What the shipped conflist lets a runtime pass velo (vt_runtime_config); empty on failure,
	# so the first use fails and says why.
	VT_VELO_CAPS="$(vt_velo_capabilities)" || VT_VELO_CAPS=""
	export VT_VELO_CAPS
	ip netns add "$VT_NODE"
	vt_node ip link set lo up
	vt_node ip addr add "$VT_NODE_ADDR4/32" dev lo
	vt_node ip addr add "$VT_NODE_ADDR6/128" dev lo nodad
	# Forwarding off, as on a fresh node: the plugin must turn on what it needs.
	vt_node sysctl -qw net.ipv4.ip_forward=0 net.ipv4.conf.all.forwarding=0 \
		net.ipv4.conf.default.forwarding=0 net.ipv6.conf.all.forwarding=0 \
		net.ipv6.conf.default.forwarding=0
}

# Called from teardown_file: removes the node and every namespace of this file.
vt_teardown_file() {
	local ns

	[ -n "${VT_TAG:-}" ] || return 0
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^velotest-.*-$VT_TAG(-|$)"); do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# Every .bats file's own hooks: bats runs these unless the file (or a helper it loads after this
# one, such as cgroup_lib.bash or policy_lib.bash) defines its own.
setup_file() { vt_setup_file; }
teardown_file() { vt_teardown_file; }
setup() { vt_setup; }
teardown() { vt_teardown; }

# ---------------------------------------------------------------- test level

# Called from setup: the per-test dir and CNI bin dir.
vt_setup() {
	local name

	[ -z "${VT_SKIP:-}" ] || skip "$VT_SKIP"
	VT="$(mktemp -d /tmp/velotest-XXXXXX)"
	VT_BIN="$VT/bin"
	VT_IPAM="$VT/ipam"
	VT_STATE="$VT/state"
	VT_LOG="$VT/log/cni.log"
	VT_PODS=0
	VT_PIDS=()
	mkdir -p "$VT_BIN" "$VT_IPAM" "$VT/log" "$VT/work"
	install -m 0755 "$VT_PLUGIN_BIN" "$VT_BIN/$VELOTEST_PLUGIN"
	for name in host-local portmap; do
		install -m 0755 "$VELOTEST_REF_CNI_DIR/$name" "$VT_BIN/$name"
	done
}

# Called from teardown: stops helpers, removes pods, leftovers in the node, $VT.
vt_teardown() {
	local pid ns link

	[ -n "${VT:-}" ] || return 0
	for pid in "${VT_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^velotest-pod-$VT_TAG-"); do
		# What still runs in the pod: a server a test started with `vt_pod NS timeout N CMD &`
		# left its subshell's pid in VT_PIDS, not the server's, and the server would hold bats'
		# output open until its timeout ends (300 s in one file).
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
	for link in $(vt_host_links); do
		vt_node ip link del "$link" 2>/dev/null || true
	done
	if [ -n "${VT:-}" ] && [ -d "$VT" ]; then
		if [ "${VELOTEST_KEEP:-0}" = 1 ]; then
			echo "# kept $VT" >&3
		else
			rm -rf "$VT"
		fi
	fi
}

# ---------------------------------------------------------------- plumbing

vt_is_velo() { [ "$VELOTEST_PLUGIN" = velo ]; }

vt_velo_only() {
	vt_is_velo || skip "velo-specific behaviour (plugin under test: $VELOTEST_PLUGIN)"
}

# vt_setup_velo: vt_setup for a test of velo's own behaviour (skips for the ptp plugin).
vt_setup_velo() {
	vt_setup
	vt_velo_only
}

# vt_need_velod VAR, vt_need_veloctl VAR: VAR names the binary under test ($VELOD_BIN or
# $VELOCTL_BIN, else the build's); the test skips if it is not built.
vt_need_velod() {
	printf -v "$1" '%s' "${VELOD_BIN:-$VELOTEST_REPO/build/velod}"
	[ -x "${!1}" ] || skip "velod not built (make)"
}
vt_need_veloctl() {
	printf -v "$1" '%s' "${VELOCTL_BIN:-$VELOTEST_REPO/build/veloctl}"
	[ -x "${!1}" ] || skip "veloctl not built (make)"
}

# Runs a command in the node netns.
vt_node() { nsenter --net="/run/netns/$VT_NODE" "$@"; }

# vt_pod_new: creates a pod netns, prints its name.
vt_pod_new() {
	local ns="velotest-pod-$VT_TAG-$BATS_TEST_NUMBER-$((VT_PODS++))-$BASHPID$RANDOM"

	ip netns add "$ns" || return 1
	ip -n "$ns" link set lo up
	echo "$ns"
}

# vt_pod NAME CMD...: runs CMD in pod NAME.
vt_pod() {
	local ns="$1"
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# The host-side link prefix of the plugin under test.
vt_host_prefix() {
	if vt_is_velo; then echo vt; else echo veth; fi
}

# Host-side links of pods in the node netns.
vt_host_links() {
	vt_node ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
		grep "^$(vt_host_prefix)" || true
}

# velo's host veth name: prefix + hex FNV-1a 64 of "<container_id>\0<ifname>".
vt_host_ifname() {
	local prefix="$1" data="$2" ifname="$3" hash i byte hex
	local -i h=0xcbf29ce484222325

	data="$data"$'\x01'"$ifname" # \x01 marks the NUL, hashed as 0 below
	for ((i = 0; i < ${#data}; i++)); do
		printf -v byte '%d' "'${data:i:1}"
		[ "$byte" -eq 1 ] && byte=0
		h=$(((h ^ byte) * 0x100000001b3))
	done
	printf -v hex '%016x' "$h"
	hash="$prefix$hex"
	echo "${hash:0:15}"
}

# ---------------------------------------------------------------- configs

# vt_config [-v VERSION] [-f 4|6|dual] [-r RANGE_START-RANGE_END] [-i host-local|velo]: the
# network config; -i (default $VELOTEST_IPAM, else host-local) picks the IPAM, both keeping
# their data in $VT_IPAM.
vt_config() {
	local version=1.0.0 family=4 range="" ipam_type="${VELOTEST_IPAM:-host-local}" OPTIND opt
	local ranges ipam
	while getopts "v:f:r:i:" opt; do
		case "$opt" in
		v) version="$OPTARG" ;;
		f) family="$OPTARG" ;;
		r) range="$OPTARG" ;;
		i) ipam_type="$OPTARG" ;;
		*) return 2 ;;
		esac
	done
	case "$family" in
	4) ranges="$(jq -cn --arg s "$VT_SUBNET4" '[[{subnet: $s}]]')" ;;
	6) ranges="$(jq -cn --arg s "$VT_SUBNET6" '[[{subnet: $s}]]')" ;;
	dual) ranges="$(jq -cn --arg s "$VT_SUBNET4" --arg s6 "$VT_SUBNET6" \
		'[[{subnet: $s}], [{subnet: $s6}]]')" ;;
	*) return 2 ;;
	esac
	if [ -n "$range" ]; then
		ranges="$(jq -c --arg a "${range%-*}" --arg b "${range#*-}" \
			'.[0][0] += {rangeStart: $a, rangeEnd: $b}' <<<"$ranges")"
	fi
	ipam="$(jq -cn --argjson r "$ranges" --arg d "$VT_IPAM" --arg t "$ipam_type" \
		'{type: $t, dataDir: $d, ranges: $r}')"
	if vt_is_velo; then
		jq -cn --arg v "$version" --arg n "$VT_NETWORK" --arg t "$VT" --argjson ipam "$ipam" '{
			cniVersion: $v, name: $n, type: "velo", vethPrefix: "vt",
			stateDir: ($t + "/state"), runDir: ($t + "/run"),
			bpffsDir: ($t + "/bpffs-unused"), logFile: ($t + "/log/cni.log"),
			logLevel: "debug", ipam: $ipam}'
	else
		jq -cn --arg v "$version" --arg n "$VT_NETWORK" --argjson ipam "$ipam" '{
			cniVersion: $v, name: $n, type: "ptp", ipMasq: false,
			ipam: ($ipam + {routes: [{dst: "0.0.0.0/0"}, {dst: "::/0"}]})}'
	fi
}

# vt_velo_capabilities: the "capabilities" of velo's entry in the shipped conflist (the
# ConfigMap's 10-velo.conflist in manifests/velo.yaml), as one JSON object.
vt_velo_capabilities() {
	python3 -c 'import json, sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc.get("kind") == "ConfigMap" and "10-velo.conflist" in doc.get("data", {}):
        conf = json.loads(doc["data"]["10-velo.conflist"])
        velo = [p for p in conf["plugins"] if p.get("type") == "velo"]
        print(json.dumps(velo[0].get("capabilities", {}), separators=(",", ":")))
        sys.exit(0)
sys.exit("no 10-velo.conflist with a velo plugin in " + sys.argv[1])' \
		"$VELOTEST_REPO/manifests/velo.yaml"
}

# vt_runtime_config CONFIG RUNTIME_JSON: CONFIG as a runtime (libcni) hands it to velo under the
# shipped conflist: velo's capabilities from it, and runtimeConfig with only the keys of
# RUNTIME_JSON velo declares true there (libcni drops the others, and sets no runtimeConfig
# when none is left). Read once per file (vt_setup_file), else on first use.
vt_runtime_config() {
	[ -n "${VT_VELO_CAPS:-}" ] || VT_VELO_CAPS="$(vt_velo_capabilities)" || return 1
	jq -c --argjson caps "$VT_VELO_CAPS" --argjson rt "$2" '
		($rt | with_entries(select($caps[.key] == true))) as $rc |
		.capabilities = $caps |
		if ($rc | length) > 0 then .runtimeConfig = $rc else . end' <<<"$1"
}

# vt_annotated CONFIG ANNOTATIONS_JSON: CONFIG as a runtime hands it to velo for a pod with these
# annotations (the CRI pod-annotations capability, through vt_runtime_config).
vt_annotated() {
	vt_runtime_config "$1" "{\"io.kubernetes.cri.pod-annotations\": $2}"
}

# vt_with_prev CONFIG RESULT: CONFIG with prevResult = RESULT.
vt_with_prev() {
	jq -c --argjson r "$2" '.prevResult = $r' <<<"$1"
}

# ---------------------------------------------------------------- invoking

# vt_cni_env CONFIG [VAR=VALUE | -u VAR]...: runs the plugin in the node with
# exactly the given CNI_* environment. Sets VT_RC, VT_OUT, VT_ERR. VT_EXEC, when
# set, names another plugin binary to run (e.g. portmap in a chain).
vt_cni_env() {
	local config="$1" out="$VT/work/out.$BASHPID.$RANDOM" err="$VT/work/err.$BASHPID.$RANDOM"
	shift
	VT_RC=0
	vs_cni "$VT_NODE" "${VT_EXEC:-$VT_BIN/$VELOTEST_PLUGIN}" "$config" "$out" "$err" "$@" ||
		VT_RC=$?
	VT_OUT="$(cat "$out")"
	VT_ERR="$(cat "$err")"
	rm -f "$out" "$err"
	# Without velod, velo leaves the veths it retired to a child that outlives it by the delete's
	# ~20 ms; the tests check the state after it, unless VT_NO_REAP_WAIT=1 (reap.bats).
	if [ "${VT_NO_REAP_WAIT:-0}" != 1 ] && vt_is_velo && ! vt_velod_running; then
		vt_retired_wait || true
	fi
}

# 0 when a velod holds velo's agent lock (runDir/velod.lock), as velo_agent_running sees it.
vt_velod_running() {
	[ -e "$VT/run/velod.lock" ] && ! flock -n -s "$VT/run/velod.lock" true
}

# Links of velo's retired group (0x76656c6f) in the node: "NAME" lines.
vt_retired_links() {
	vt_node ip -o link show group 1986358383 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//'
}

# Waits up to 5 s for the node's retired veths to be deleted; fails if some are left.
vt_retired_wait() {
	local i
	for i in $(seq 100); do
		[ -n "$(vt_retired_links)" ] || return 0
		sleep 0.05
	done
	[ -z "$(vt_retired_links)" ]
}

# vt_cni VERB CONTAINER NETNS IFNAME CONFIG [VAR=VALUE | -u VAR]...
# NETNS is a pod name, a path, or "" (empty CNI_NETNS). Overrides come last.
vt_cni() {
	local verb="$1" cid="$2" netns="$3" ifname="$4" config="$5"
	local -a envs=()
	local -A omit=()
	shift 5

	case "$netns" in
	"" | /*) ;;
	*) netns="/run/netns/$netns" ;;
	esac
	while [ $# -gt 0 ]; do
		if [ "$1" = -u ]; then
			omit[$2]=1
			shift 2
		else
			envs+=("$1")
			shift
		fi
	done
	local -a base=(
		"CNI_COMMAND=$verb" "CNI_CONTAINERID=$cid" "CNI_NETNS=$netns" "CNI_IFNAME=$ifname"
		"CNI_PATH=$VT_BIN"
		"CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=velotest;K8S_POD_NAME=pod-$cid;K8S_POD_INFRA_CONTAINER_ID=$cid"
	)
	local -a final=() kv
	for kv in "${base[@]}"; do
		[ -n "${omit[${kv%%=*}]:-}" ] || final+=("$kv")
	done
	vt_cni_env "$config" "${final[@]}" "${envs[@]}"
}

# vt_gc CONFIG VALID_JSON: GC with cni.dev/valid-attachments = VALID_JSON.
vt_gc() {
	vt_cni_env "$(jq -c --argjson v "$2" '.["cni.dev/valid-attachments"] = $v' <<<"$1")" \
		CNI_COMMAND=GC "CNI_PATH=$VT_BIN"
}

# Shows what the plugin said (bats prints it when the test fails).
vt_show() {
	echo "rc=$VT_RC"
	echo "stdout: $VT_OUT"
	echo "stderr: $VT_ERR"
	if [ -f "${VT_LOG:-/nonexistent}" ]; then
		echo "log (last 15 lines):"
		tail -n 15 "$VT_LOG"
	fi
}

# Fails unless the last invocation succeeded.
vt_assert_ok() {
	if [ "$VT_RC" -ne 0 ]; then
		echo "expected success"
		vt_show
		return 1
	fi
}

# vt_assert_error CODE [REGEX]: the last invocation failed with the spec's
# error JSON (only that on stdout), the given code, and msg+details matching REGEX.
vt_assert_error() {
	local code="$1" regex="${2:-}" got text
	if [ "$VT_RC" -eq 0 ]; then
		echo "expected failure with code $code, got success"
		vt_show
		return 1
	fi
	# (The reference plugins 1.1.1 leave cniVersion out; velo must not.)
	if ! jq -e --argjson strict "$(vt_is_velo && echo true || echo false)" '
		type == "object" and (.code | type) == "number" and (.msg | type) == "string" and
		((.cniVersion | type) == "string" or ($strict | not)) and
		((.details // "") | type) == "string" and
		((keys - ["cniVersion", "code", "msg", "details"]) | length) == 0' \
		<<<"$VT_OUT" >/dev/null 2>&1; then
		echo "stdout is not exactly one CNI error object"
		vt_show
		return 1
	fi
	got="$(jq -r .code <<<"$VT_OUT")"
	if [ "$got" != "$code" ]; then
		echo "expected code $code, got $got"
		vt_show
		return 1
	fi
	text="$(jq -r '.msg + " " + (.details // "")' <<<"$VT_OUT")"
	if [ -n "$regex" ] && ! grep -Eq -- "$regex" <<<"$text"; then
		echo "error text does not match /$regex/: $text"
		vt_show
		return 1
	fi
}

# Fails unless the last invocation failed (any code) with an error object.
vt_assert_failed() {
	if [ "$VT_RC" -eq 0 ] || ! jq -e '.code | type == "number"' <<<"$VT_OUT" >/dev/null 2>&1; then
		echo "expected a CNI error"
		vt_show
		return 1
	fi
}

# vt_add POD CONTAINER CONFIG [IFNAME]: ADD that must succeed; result in VT_RESULT.
vt_add() {
	vt_cni ADD "$2" "$1" "${4:-eth0}" "$3"
	vt_assert_ok || return 1
	# shellcheck disable=SC2034
	VT_RESULT="$VT_OUT"
}

# vt_pod_add POD_VAR IP_VAR CONFIG CONTAINER [4|6]: a new pod added as CONTAINER (eth0) with
# CONFIG; its netns name goes into the caller's variable POD_VAR, its address of that family
# (default 4) into IP_VAR (unless IP_VAR is -), the ADD's result into VT_RESULT.
vt_pod_add() {
	local vt_new_pod
	vt_new_pod="$(vt_pod_new)" || return 1
	vt_add "$vt_new_pod" "$4" "$3" || return 1
	printf -v "$1" '%s' "$vt_new_pod"
	[ "$2" = - ] || printf -v "$2" '%s' "$(vt_ip "$VT_RESULT" "${5:-4}")"
}

# vt_run_ok CMD...: bats' run of CMD, its output printed (shown if the test fails); fails unless
# CMD exited 0. $output and $lines stay set for the checks that follow.
vt_run_ok() {
	run "$@"
	echo "$output"
	[ "$status" -eq 0 ]
}

# vt_ip RESULT [4|6]: the first address (without prefix) of that family, or "".
vt_ip() {
	local sel='test(":") | not'
	[ "${2:-4}" = 6 ] && sel='test(":")'
	jq -r "([.ips[].address | select($sel)][0] // \"\") | split(\"/\") | .[0] // \"\"" <<<"$1"
}

# vt_assert_calls_ok VERB N: N CNI calls run in the background, each writing its code to
# $VT/work/rc.I and its answer to $VT/work/res.I, all answered 0; else fails naming the first
# that did not, with its answer.
vt_assert_calls_ok() {
	local i rc
	for i in $(seq "$2"); do
		rc="$(cat "$VT/work/rc.$i")"
		[ "$rc" = 0 ] || { echo "$1 $i failed: $(cat "$VT/work/res.$i")"; false; }
	done
}

# ---------------------------------------------------------------- observations

# vt_pool_leases FILE: "ADDRESS CONTAINER IFNAME" per lease of one of velo's IPAM allocation
# files (ipam/pool.h: a 256-byte header, then 288-byte slots).
vt_pool_leases() {
	python3 - "$1" <<'PY'
import ipaddress, struct, sys
data = open(sys.argv[1], "rb").read()
family, n_slots = struct.unpack_from("<II", data, 16)
size = 4 if family == 2 else 16
start = int.from_bytes(data[32:32 + size], "big")
for i in range(n_slots):
    off = 256 + i * 288
    if data[off] != 0:
        addr = ipaddress.ip_address(start + i) if size == 4 else ipaddress.IPv6Address(start + i)
        ifname = data[off + 16:off + 32].split(b"\0")[0].decode()
        cid = data[off + 32:off + 288].split(b"\0")[0].decode()
        print(addr, cid, ifname)
PY
}

# Addresses leased in $VT_IPAM, one a line: host-local's lease files and the leases in
# velo's IPAM allocation files.
vt_leases() {
	local dir="$VT_IPAM/$VT_NETWORK" file
	[ -d "$dir" ] || return 0
	for file in "$dir"/*; do
		[ -f "$file" ] || continue
		if [ "$(head -c 8 "$file")" = VELOPOOL ]; then
			vt_pool_leases "$file" | cut -d' ' -f1
			continue
		fi
		case "${file##*/}" in
		last_reserved_ip* | lock) ;;
		*.*.*.* | *:*) echo "${file##*/}" ;;
		esac
	done | sort
}

vt_lease_exists() { vt_leases | grep -qxF "$1"; }

# velo's endpoint records: ready ones as NETWORK/FILE, those of ADDs in progress (in runDir)
# as pending/NETWORK/FILE.
vt_records() {
	[ ! -d "$VT_STATE" ] || find "$VT_STATE" -type f -name '*.json' -printf '%P\n' | sort
	[ ! -d "$VT/run/pending" ] || find "$VT/run/pending" -type f -printf 'pending/%P\n' | sort
}

# Fails when anything of the given attachment remains; with no args, when anything at all does.
vt_assert_nothing_left() {
	local links leases records
	links="$(vt_host_links)"
	leases="$(vt_leases)"
	records=""
	if vt_is_velo; then records="$(vt_records)"; fi
	if [ -n "$links$leases$records" ]; then
		echo "left behind:"
		echo "  host links: $links"
		echo "  leases: $leases"
		echo "  records: $records"
		return 1
	fi
}

# vt_cgroup_kill CGROUP [SECONDS]: a pod's processes ended as a runtime does (vs_cgroup_kill).
vt_cgroup_kill() { vs_cgroup_kill "$@"; }

# vt_splats: how many kernel warnings and oopses the kernel log holds (compared before and after
# a test). Fails when dmesg can't be read: a count of 0 then would hide any splat.
vt_splats() {
	local log
	log="$(dmesg)" || { echo "dmesg unreadable: can't check for kernel splats" >&2; return 1; }
	grep -cE 'WARNING:|BUG:|Oops|general protection|Call Trace' <<<"$log" || true
}

# vt_ping FROM_CMD... ADDR: one ping, 2 s, repeated up to 3 times.
vt_ping_from_node() {
	local addr="$1" _
	for _ in 1 2 3; do
		vt_node "${VT_PING[@]}" -q -c 1 -W 2 "$addr" >/dev/null 2>&1 && return 0
	done
	echo "node cannot ping $addr"
	return 1
}

vt_ping_from_pod() {
	local pod="$1" addr="$2" _
	for _ in 1 2 3; do
		vt_pod "$pod" "${VT_PING[@]}" -q -c 1 -W 2 "$addr" >/dev/null 2>&1 && return 0
	done
	echo "pod $pod cannot ping $addr"
	return 1
}

# vt_tcp_transfer SERVER_POD SERVER_ADDR CLIENT_POD [PORT [DEST_ADDR DEST_PORT]]:
# sends 4 MiB of random data over TCP from CLIENT to a server listening on PORT
# (connecting to DEST_ADDR:DEST_PORT, default SERVER_ADDR:PORT) and compares SHA-256 digests.
vt_tcp_transfer() {
	local spod="$1" addr="$2" cpod="$3" port="${4:-5001}" fam=4 target pid i sent got
	local dest="${5:-$2}" dport="${6:-${4:-5001}}"
	local send="$VT/work/send.$port" recv="$VT/work/recv.$port"

	case "$addr" in *:*) fam=6 ;; esac
	case "$dest" in *:*) target="TCP6:[$dest]:$dport" ;; *) target="TCP4:$dest:$dport" ;; esac
	head -c 4194304 /dev/urandom >"$send"
	rm -f "$recv"
	vt_pod "$spod" timeout 30 socat -u "TCP$fam-LISTEN:$port,reuseaddr" \
		"OPEN:$recv,creat,trunc" &
	pid=$!
	VT_PIDS+=("$pid")
	for i in $(seq 50); do
		vt_pod "$spod" ss -Hltn "sport = :$port" | grep -q . && break
		sleep 0.1
	done
	if ! vt_pod "$cpod" timeout 20 socat -u "OPEN:$send" "$target,connect-timeout=5"; then
		echo "client in $cpod could not send to $target"
		return 1
	fi
	wait "$pid" || { echo "server in $spod failed"; return 1; }
	sent="$(sha256sum <"$send" | cut -d' ' -f1)"
	got="$(sha256sum <"$recv" | cut -d' ' -f1)"
	if [ "$sent" != "$got" ]; then
		echo "data differs: sent $sent, received $got ($(stat -c %s "$recv") bytes)"
		return 1
	fi
}

# vt_percpu_u64 PIN KEY_BYTES...: the u64 at the start of a per-CPU map's value, summed
# over CPUs (bpftool prints the value's bytes, little-endian hex, when the map has no BTF).
vt_percpu_u64() {
	local pin="$1"
	shift
	bpftool -j map lookup pinned "$pin" key "$@" | jq '
		def byte: ltrimstr("0x") | explode |
			map(if . >= 97 then . - 87 elif . >= 65 then . - 55 else . - 48 end) |
			.[0] * 16 + .[1];
		if .formatted then [.formatted.values[].value | if type == "object" then .packets
			else . end] | add
		else [.values[].value[0:8] | reverse | reduce .[] as $b (0; . * 256 + ($b | byte))] | add
		end'
}

# Every sockhash kernel bug velo probes for (docs/sockmap.md). A test of the accelerated socket
# path on a kernel whose probes fail accepts them by name in the conflist, as an operator would
# (sockmapAcceptKernelBugs); without it such pods stay routed.
VT_SOCKMAP_KERNEL_BUGS="halfclose-eagain splice-ingress waitall-short rcvlowat-ignored"
# vt_accept_kernel_bugs CONF: CONF with every bug above accepted.
vt_accept_kernel_bugs() {
	jq -c --arg b "$VT_SOCKMAP_KERNEL_BUGS" '.sockmapAcceptKernelBugs = ($b | split(" "))' <<<"$1"
}
