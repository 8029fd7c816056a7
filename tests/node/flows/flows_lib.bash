# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# Helpers for tests/node/flows/flows.bats, over lib.bash, cgroup_lib.bash and services_lib.bash:
# pods wired by velo (named velotest/pod-ctr-<tag> through CNI_ARGS, each in a cgroup of its own),
# velod in the node reading the flow ring (started before the first pod, so flowRingBytes
# sizes the ring), veloctl observe against it, and NetworkPolicy's maps written with bpftool
# the way velod's policy sync would. Everything is removed, pass or fail (svc_teardown).

FL_CTL="${VELOCTL_BIN:-$VELOTEST_REPO/build/veloctl}"

# flows_velod [EXTRA_JSON]: velod with flows in the node (and, when $VT/services.json exists,
# Service translation from it); waits for /healthz and the services file's first sync.
# EXTRA_JSON is merged into its config.
flows_velod() {
	local _ svc='{}'
	mkdir -p "$VT/run"
	[ -f "$VT/services.json" ] &&
		svc="$(jq -cn --arg f "$VT/services.json" '{servicesFile: $f, servicesSyncMs: 50}')"
	jq -n --arg t "$VT" --arg b "$VTC_BPFFS" --arg l "127.0.0.1:$SVC_PORT" \
		--argjson svc "$svc" --argjson extra "${1:-{\}}" '{
		stateDir: ($t + "/state"), runDir: ($t + "/run"), bpffsDir: $b, listen: $l,
		reconcileIntervalSeconds: 0, sampleIntervalSeconds: 0, reapIntervalMs: 0,
		sourceGuardPrefix: "", nodeName: "node-a"} + $svc + $extra' >"$VT/velod.json"
	nsenter --net="/run/netns/$VT_NODE" "$SVC_VELOD" --config "$VT/velod.json" \
		2>>"$VT/velod.log" &
	# shellcheck disable=SC2034 # services_lib.bash's: svc_teardown stops it
	SVC_VELOD_PID=$!
	for _ in $(seq 400); do
		if vt_node curl -sf --max-time 1 "http://127.0.0.1:$SVC_PORT/healthz" >/dev/null &&
			{ [ "$svc" = '{}' ] || grep -q 'services: .* service ports' "$VT/velod.log"; }; then
			# shellcheck disable=SC2034 # services_lib.bash's: svc_write counts from it
			SVC_SYNCS=1
			return 0
		fi
		sleep 0.05
	done
	echo "velod did not start:"
	tail -n 5 "$VT/velod.log"
	return 1
}

# flows_pod TAG [ANNOTATIONS_JSON [JQ_FILTER]]: a dual-stack pod in a cgroup of its own, its config
# passed through JQ_FILTER; sets NS_<TAG>, CG_<TAG>, IP_<TAG> (IPv4), CONF_<TAG> and
# RESULT_<TAG> (ADD's). It is velotest/pod-ctr-TAG.
flows_pod() {
	local ns cg conf
	ns="$(vt_pod_new)"
	cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-$1"
	mkdir "$VTC_MOUNT$cg"
	VTC_CGROUPS+=("$VTC_MOUNT$cg")
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" "${2:-{\}}" | jq -c "${3:-.}")"
	vt_add "$ns" "ctr-$1" "$conf"
	printf -v "NS_$1" %s "$ns"
	printf -v "CG_$1" %s "$cg"
	printf -v "IP_$1" %s "$(vt_ip "$VT_RESULT" 4)"
	printf -v "CONF_$1" %s "$conf"
	printf -v "RESULT_$1" %s "$VT_RESULT"
	# shellcheck disable=SC2034 # the last pod's netns, for the caller
	P_NS="$ns"
}

# flows_observe ARGS...: veloctl observe against this test's velod (its local socket, in runDir).
flows_observe() {
	vt_node "$FL_CTL" --run-dir "$VT/run" observe "$@"
}

# flows_wait ARGS...: veloctl observe -j ARGS until it prints a flow (20 s); prints the flows.
flows_wait() {
	local _ out
	for _ in $(seq 200); do
		out="$(flows_observe -j "$@")" && [ -n "$out" ] && {
			echo "$out"
			return 0
		}
		sleep 0.1
	done
	echo "no flow for: $*; all of them:"
	flows_observe -j
	return 1
}

# flows_wait_line FILE PATTERN: until FILE has a line matching PATTERN (20 s); else prints FILE.
flows_wait_line() {
	local _
	for _ in $(seq 200); do
		grep -q "$2" "$1" && return 0
		sleep 0.1
	done
	echo "no line matching '$2' in $1:"
	cat "$1"
	return 1
}

# flows_field JSON_LINES JQ_FILTER: the filter applied to the last flow.
flows_field() { tail -n 1 <<<"$1" | jq -r "$2"; }

# flows_hex_mapped IP: the IPv4-mapped IPv6 address as bpftool hex bytes.
flows_hex_mapped() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '00 00 00 00 00 00 00 00 00 00 ff ff %02x %02x %02x %02x' "$a" "$b" "$c" "$d"
}

# flows_le32 N: a __u32 as bpftool hex bytes (little endian, as on this machine).
flows_le32() { printf '%02x %02x %02x %02x' $(($1 & 255)) $((($1 >> 8) & 255)) \
	$((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }

# flows_pol_pod IP IDENTITY: velo_pol_ip_v1 places the local pod's address at IDENTITY.
flows_pol_pod() {
	# shellcheck disable=SC2046 # one byte a word
	bpftool map update pinned "$VTC_BPFFS/velo_pol_ip_v1" \
		key hex $(flows_le32 128) $(flows_hex_mapped "$1") \
		value hex $(flows_le32 "$2") $(flows_le32 1) $(flows_le32 1) $(flows_le32 0)
}

# flows_pol_isolate IDENTITY FLAGS: velo_pol_sub_v1 (1 ingress, 2 egress, 0 removes it).
flows_pol_isolate() {
	local key
	key="$(flows_le32 "$1")"
	if [ "$2" = 0 ]; then
		# shellcheck disable=SC2086
		bpftool map delete pinned "$VTC_BPFFS/velo_pol_sub_v1" key hex $key 2>/dev/null || true
		return 0
	fi
	# shellcheck disable=SC2046,SC2086
	bpftool map update pinned "$VTC_BPFFS/velo_pol_sub_v1" key hex $key \
		value hex $(flows_le32 "$2") $(flows_le32 0)
}

# flows_pol_revision N: velo_pol_st_v1 = {revision N, active 1}: allowed flows are judged again.
flows_pol_revision() {
	# shellcheck disable=SC2046
	bpftool map update pinned "$VTC_BPFFS/velo_pol_st_v1" key hex 00 00 00 00 \
		value hex $(flows_le32 "$1") $(flows_le32 1)
}

# flows_ping NS DST [SRC]: one ping, 1 s; its exit status.
flows_ping() {
	vt_pod "$1" "${VT_PING[@]}" -c 1 -W 1 ${3:+-I "$3"} "$2" >/dev/null 2>&1
}

# flows_serve NS CGROUP PORT REPLY_BYTES: a TCP server in the pod (its cgroup) for one
# connection: reads until the client's EOF, answers REPLY_BYTES, closes. Returns once listening.
flows_serve() {
	local log="$VT/work/serve-$3.log"
	vtc_run "$1" "$2" timeout 20 python3 -c '
import socket, sys
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(sys.argv[1]))); srv.listen(1); print("listening", flush=True)
c, _ = srv.accept()
while c.recv(65536): pass
c.sendall(b"r" * int(sys.argv[2])); c.close()' "$3" "$4" >"$log" 2>&1 &
	VT_PIDS+=($!)
	flows_wait_line "$log" listening
}

# flows_connect NS CGROUP IP PORT BYTES: a client in the pod sends BYTES, half-closes, reads the
# answer to EOF, closes.
flows_connect() {
	vtc_run "$1" "$2" timeout 10 python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2]))); s.sendall(b"q" * int(sys.argv[3]))
s.shutdown(socket.SHUT_WR)
while s.recv(65536): pass
s.close()' "$3" "$4" "$5"
}

# flows_wait_end PORT: the flows of PORT (JSON lines) once a connection's end is among them (20 s).
flows_wait_end() {
	local _ out
	for _ in $(seq 200); do
		out="$(flows_observe -j --port "$1")"
		if [ "$(jq -s '[.[] | select(.kind == "end")] | length' <<<"$out")" -ge 1 ]; then
			echo "$out"
			return 0
		fi
		sleep 0.1
	done
	echo "no end of a connection on port $1: $out"
	return 1
}

# flows_wait_starts N ARGS...: veloctl observe -j ARGS until it shows N starts (20 s); prints
# the flows (and fails) either way.
flows_wait_starts() {
	local _ out n="$1"
	shift
	for _ in $(seq 200); do
		out="$(flows_observe -j "$@")"
		[ "$(flows_count "$out" start)" -ge "$n" ] && break
		sleep 0.1
	done
	echo "$out"
	[ "$(flows_count "$out" start)" -ge "$n" ]
}

# flows_count FLOWS KIND: how many of the JSON lines are of KIND.
flows_count() { jq -s --arg k "$2" '[.[] | select(.kind == $k)] | length' <<<"$1"; }

# flows_check_end FLOWS SRC_POD DST_POD PORT SENT REPLIED: the end among FLOWS reads client ->
# server, SRC_POD -> DST_POD:PORT, bytes_out SENT and bytes_in REPLIED in sequence space as the
# kernel counts it (the data, plus one each for SYN and FIN).
flows_check_end() {
	local end
	end="$(jq -c 'select(.kind == "end")' <<<"$1")"
	echo "end: $end"
	[ "$(jq -r .src.pod <<<"$end")" = "$2" ] || return 1
	[ "$(jq -r .dst.pod <<<"$end")" = "$3" ] || return 1
	[ "$(jq -r .dst.port <<<"$end")" = "$4" ] || return 1
	[ "$(jq -r .bytes_out <<<"$end")" -ge "$5" ] || return 1
	[ "$(jq -r .bytes_out <<<"$end")" -le "$(($5 + 2))" ] || return 1
	[ "$(jq -r .bytes_in <<<"$end")" -ge "$6" ] || return 1
	[ "$(jq -r .bytes_in <<<"$end")" -le "$(($6 + 2))" ]
}
