#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Churn: 4 parallel workers each creating and deleting pods (two alive per worker at a time,
# so ADDs and DELs of different pods overlap). Asserts no address is held by two live pods,
# every pod answers a ping from the node, nothing leaks (links, routes, leases, records, locks
# counted before and after) and every line of velo's log is whole logfmt
# (ts=... level=... ... msg=...), so concurrent writers never tore or interleaved a line.
#
# VELOTEST_CHURN_PODS (default 50; `make stress` runs 200) pods per worker,
# VELOTEST_CHURN_WORKERS (default 4).

load lib

CH_PODS="${VELOTEST_CHURN_PODS:-50}"
CH_WORKERS="${VELOTEST_CHURN_WORKERS:-4}"

setup_file() { vt_setup_file; }
teardown_file() { vt_teardown_file; }
setup() {
	vt_setup
	vt_velo_only
	command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
}
teardown() { vt_teardown; }

# What a pod could leak, as counts (one "name count" per line).
ch_counts() {
	echo "links $(vt_node ip -o link show | wc -l)"
	echo "routes4 $(vt_node ip -4 route show table all | wc -l)"
	echo "routes6 $(vt_node ip -6 route show table all | grep -vc '^\(local\|multicast\|anycast\)')"
	echo "neigh $(vt_node ip neigh show nud permanent | wc -l)"
	echo "leases $(vt_leases | wc -l)"
	echo "records $([ -d "$VT_STATE" ] && find "$VT_STATE" -type f | wc -l || echo 0)"
	echo "locks $([ -d "$VT/run/locks" ] && find "$VT/run/locks" -type f | wc -l || echo 0)"
	echo "netns $(ip netns list | grep -c "^velotest-pod-$VT_TAG-" || true)"
}

# ch_worker N CONFIG: CH_PODS pods, two alive at a time. Failures go to its log, exit 1.
ch_worker() {
	local n="$1" config="$2" i pod cid ip ip6 live=() old
	local marks="$VT/work/live"

	for ((i = 0; i < CH_PODS; i++)); do
		pod="$(vt_pod_new)" || { echo "worker $n: netns"; return 1; }
		cid="churn-$n-$i"
		vt_cni ADD "$cid" "$pod" eth0 "$config"
		if [ "$VT_RC" -ne 0 ]; then
			echo "worker $n: ADD $cid failed"
			vt_show
			return 1
		fi
		ip="$(vt_ip "$VT_OUT" 4)"
		ip6="$(vt_ip "$VT_OUT" 6)"
		# A marker per live address, created exclusively: a second live owner is a duplicate.
		for addr in "$ip" "$ip6"; do
			if ! (set -o noclobber && echo "$cid" >"$marks/$addr") 2>/dev/null; then
				echo "worker $n: $cid got $addr, still held by $(cat "$marks/$addr")"
				return 1
			fi
		done
		vt_ping_from_node "$ip" || return 1
		live+=("$pod $cid $ip $ip6")
		[ ${#live[@]} -gt 2 ] || continue
		old="${live[0]}"
		live=("${live[@]:1}")
		# shellcheck disable=SC2086 # old holds the fields
		ch_release "$n" "$config" $old || return 1
	done
	for old in "${live[@]}"; do
		# shellcheck disable=SC2086 # old holds the fields
		ch_release "$n" "$config" $old || return 1
	done
}

# ch_release N CONFIG POD CID IP IP6: the markers go first; the lease stays held until DEL.
ch_release() {
	local n="$1" config="$2" pod="$3" cid="$4" ip="$5" ip6="$6"
	rm -f "$VT/work/live/$ip" "$VT/work/live/$ip6"
	vt_cni DEL "$cid" "$pod" eth0 "$config"
	if [ "$VT_RC" -ne 0 ]; then
		echo "worker $n: DEL $cid failed"
		vt_show
		return 1
	fi
	ip netns del "$pod"
}

# Lines of FILE that are not whole logfmt records with ts, level and msg.
ch_bad_log_lines() {
	python3 - "$1" <<'EOF'
import re, sys
pair = re.compile(r'([A-Za-z_][A-Za-z0-9_.-]*)=("(?:[^"\\]|\\.)*"|[^\s"=]*)(?: |$)')
bad = 0
with open(sys.argv[1], 'rb') as f:
    for n, raw in enumerate(f, 1):
        line = raw.decode('utf-8', 'replace').rstrip('\n')
        keys, pos = [], 0
        while pos < len(line):
            m = pair.match(line, pos)
            if not m:
                break
            keys.append(m.group(1))
            pos = m.end()
        if (pos != len(line) or keys[:2] != ['ts', 'level'] or 'msg' not in keys
                or len(set(keys)) != len(keys)
                or not raw.endswith(b'\n')):
            bad += 1
            if bad <= 5:
                print(f'line {n}: {line[:200]!r}')
print(f'{bad} bad lines' if bad else '', end='')
EOF
}

@test "churn: parallel workers create and delete pods: no duplicate address, no leak, whole log lines" {
	local config before after w pids=() failed=0 lines bad f
	config="$(vt_config -f dual | jq -c '.logMaxBytes = 104857600')"
	mkdir -p "$VT/work/live"
	before="$(ch_counts)"

	for ((w = 0; w < CH_WORKERS; w++)); do
		ch_worker "$w" "$config" >"$VT/work/worker-$w.log" 2>&1 &
		pids+=($!)
	done
	for w in "${!pids[@]}"; do
		if ! wait "${pids[$w]}"; then
			failed=1
			echo "--- worker $w:"
			tail -n 40 "$VT/work/worker-$w.log"
		fi
	done
	[ "$failed" -eq 0 ]

	after="$(ch_counts)"
	if [ "$before" != "$after" ]; then
		echo "leaked (before / after):"
		diff <(echo "$before") <(echo "$after") || true
		false
	fi
	[ -z "$(ls -A "$VT/work/live")" ] || { echo "markers left: $(ls "$VT/work/live")"; false; }
	vt_assert_nothing_left

	lines="$(cat "$VT_LOG" "$VT_LOG.1" 2>/dev/null | wc -l)"
	[ "$lines" -ge $((CH_WORKERS * CH_PODS * 2)) ] || { echo "only $lines log lines"; false; }
	for f in "$VT_LOG" "$VT_LOG.1"; do
		[ -f "$f" ] || continue
		bad="$(ch_bad_log_lines "$f")"
		[ -z "$bad" ] || { echo "torn or malformed lines in $f:"; echo "$bad"; false; }
	done
	echo "# $((CH_WORKERS * CH_PODS)) pods, $lines log lines checked" >&3
}
