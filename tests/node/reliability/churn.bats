#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Churn: 4 parallel workers each creating and deleting pods (two alive per worker at a time,
# so ADDs and DELs of different pods overlap), every pod opted into the tc fast path, while two
# long-lived opted-in pods stream to each other through it. Asserts no address is held by two
# live pods, every pod answers a ping from the node, the stream arrives whole (digest) and was
# redirected, nothing leaks (links, routes, leases, records, locks, link pins and endpoint-map
# entries counted before and after) and every line of velo's log is whole logfmt
# (ts=... level=... ... msg=...), so concurrent writers never tore or interleaved a line.
#
# VELOTEST_CHURN_PODS (default 50; `make stress` runs 200) pods per worker,
# VELOTEST_CHURN_WORKERS (default 4).

load ../lib/lib

CH_PODS="${VELOTEST_CHURN_PODS:-50}"
CH_WORKERS="${VELOTEST_CHURN_WORKERS:-4}"

setup() {
	vt_setup_velo
	command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	CH_BPFFS="/sys/fs/bpf/velotest-churn-$VT_TAG-$BATS_TEST_NUMBER"
}
teardown() {
	vt_teardown
	[ -n "${CH_BPFFS:-}" ] && rm -rf "$CH_BPFFS"
	return 0
}

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
	echo "pins $(find "$CH_BPFFS/links" -type f 2>/dev/null | wc -l)"
	echo "endpoints $(bpftool map dump pinned "$CH_BPFFS/velo_ep_v1" -j 2>/dev/null | jq length)"
}

# ch_stream_start CONFIG: two long-lived pods; B receives, A sends 1 KiB every 2 ms of random
# bytes until $VT/work/stop exists. Each side writes "<bytes> <sha256>" to its own file.
ch_stream_start() {
	local a b b4
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	vt_add "$a" churn-stream-a "$1"
	vt_add "$b" churn-stream-b "$1"
	CH_A="$a" CH_B="$b"
	b4="$(vt_ip "$VT_RESULT" 4)"
	vt_pod "$b" timeout 600 python3 -c '
import hashlib, socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 5099)); srv.listen(1)
conn, _ = srv.accept(); h = hashlib.sha256(); n = 0
while True:
    data = conn.recv(65536)
    if not data:
        break
    h.update(data); n += len(data)
print(n, h.hexdigest())
' >"$VT/work/stream.recv" 2>&1 &
	VT_PIDS+=($!)
	sleep 0.5
	vt_pod "$a" timeout 600 python3 -c '
import hashlib, os, socket, sys, time
s = socket.create_connection((sys.argv[1], 5099), timeout=10)
h = hashlib.sha256(); n = 0
while not os.path.exists(sys.argv[2]):
    chunk = os.urandom(1024)
    s.sendall(chunk); h.update(chunk); n += len(chunk)
    time.sleep(0.002)
s.close()
print(n, h.hexdigest())
' "$b4" "$VT/work/stop" >"$VT/work/stream.sent" 2>&1 &
	CH_SENDER=$!
	VT_PIDS+=("$CH_SENDER")
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

@test "churn: parallel workers create and delete fast-path pods while two stream through it: no duplicate address, no leak, stream intact, whole log lines" {
	local config before after w pids=() failed=0 lines bad f redirects
	config="$(vt_annotated "$(vt_config -f dual | jq -c --arg b "$CH_BPFFS" \
		'.logMaxBytes = 104857600 | .bpffsDir = $b')" '{"velo.dev/fastpath": "tc"}')"
	mkdir -p "$VT/work/live"
	ch_stream_start "$config"
	before="$(ch_counts)"
	redirects="$(vt_percpu_u64 "$CH_BPFFS/velo_stats_v2" 0 0 0 0)"

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

	touch "$VT/work/stop"
	wait "$CH_SENDER" || { echo "sender: $(cat "$VT/work/stream.sent")"; false; }
	for _ in $(seq 50); do [ -s "$VT/work/stream.recv" ] && break; sleep 0.1; done
	echo "stream sent: $(cat "$VT/work/stream.sent"), received: $(cat "$VT/work/stream.recv")"
	[ "$(cat "$VT/work/stream.sent")" = "$(cat "$VT/work/stream.recv")" ]
	# The stream went through the tc fast path (velo_stats_v2 tc_redirect) during the churn.
	[ "$(vt_percpu_u64 "$CH_BPFFS/velo_stats_v2" 0 0 0 0)" -gt $((redirects + 100)) ]

	after="$(ch_counts)"
	if [ "$before" != "$after" ]; then
		echo "leaked (before / after):"
		diff <(echo "$before") <(echo "$after") || true
		false
	fi
	[ -z "$(ls -A "$VT/work/live")" ] || { echo "markers left: $(ls "$VT/work/live")"; false; }
	vt_cni DEL churn-stream-a "$CH_A" eth0 "$config"
	vt_assert_ok
	vt_cni DEL churn-stream-b "$CH_B" eth0 "$config"
	vt_assert_ok
	vt_assert_nothing_left
	[ "$(bpftool map dump pinned "$CH_BPFFS/velo_ep_v1" -j | jq length)" -eq 0 ]
	[ "$(find "$CH_BPFFS/links" -type f | wc -l)" -eq 0 ]

	lines="$(cat "$VT_LOG" "$VT_LOG.1" 2>/dev/null | wc -l)"
	[ "$lines" -ge $((CH_WORKERS * CH_PODS * 2)) ] || { echo "only $lines log lines"; false; }
	for f in "$VT_LOG" "$VT_LOG.1"; do
		[ -f "$f" ] || continue
		bad="$(ch_bad_log_lines "$f")"
		[ -z "$bad" ] || { echo "torn or malformed lines in $f:"; echo "$bad"; false; }
	done
	echo "# $((CH_WORKERS * CH_PODS)) pods, $lines log lines checked" >&3
}
