#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Service translation's reverse state for UDP: an unconnected socket's datagrams to a VIP stay on
# one backend while it stays in the set (as conntrack keeps a flow), so every reply comes from
# the VIP however many datagrams are in flight; a socket that reconnects elsewhere or sends to a
# backend directly no longer sees that backend as the VIP. The backend pod runs UDP echo
# servers on several ports (each a backend of its own) that tag each reply with their port.

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib

DNS4=10.96.0.53
ONE4=10.96.0.54
BE_PORTS=(5301 5302 5303 5304 5305 5306 5307 5308)

# dns_slice PORT: an EndpointSlice of the dns Service: the backend pod on PORT.
dns_slice() {
	svc_slice "dns-$1" dns IPv4 "[{\"name\": \"dns\", \"protocol\": \"UDP\", \"port\": $1}]" "$BE4"
}

# services PORT...: dns (DNS4) over the backend pod's PORTs, one (ONE4) over its first port.
services() {
	local port slices
	slices="$(svc_slice one-1 one IPv4 \
		"[{\"name\": \"dns\", \"protocol\": \"UDP\", \"port\": ${BE_PORTS[0]}}]" "$BE4")"
	for port in "$@"; do
		slices+=",$(dns_slice "$port")"
	done
	svc_file "[$(svc_service dns "$DNS4" -- "$SVC_DNS"),
		$(svc_service one "$ONE4" -- "$SVC_DNS")]" "[$slices]"
}

# The backend pod with its echo servers, velod, the services over all its ports, a client pod.
backend_and_client() {
	local log="$VT/work/udptag.log" _
	svc_pod be '{}' || return 1
	BE_NS="$P_NS" BE_CG="$P_CG" BE4="$P_IP4"
	vtc_run "$BE_NS" "$BE_CG" timeout 120 python3 "$SVC_PEER" udptag "${BE_PORTS[@]}" \
		>"$log" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		grep -q listening "$log" && break
		sleep 0.1
	done
	grep -q listening "$log" || return 1
	svc_velod
	svc_write "$(services "${BE_PORTS[@]}")" || return 1
	svc_pod client "$SVC_ON"
}

# wait_lines FILE N: until FILE has N lines (bounded).
wait_lines() {
	local _
	for _ in $(seq 200); do
		[ "$(wc -l <"$1")" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "services_reverse: 16 datagrams in flight to a VIP of 8 backends: one backend, every reply from the VIP" {
	local out="$VT/work/many.out" first second rest
	backend_and_client
	svc_client "$P_NS" "$P_CG" udpmany "$DNS4" 53 16 "$VT/work/go" >"$out" 2>&1 &
	wait_lines "$out" 16 || { cat "$out"; false; }
	cat "$out"
	[ "$(head -n 16 "$out" | grep -c "^from $DNS4 53 via ")" -eq 16 ]
	[ "$(head -n 16 "$out" | awk '{ print $5 }' | sort -u | wc -l)" -eq 1 ]
	first="$(head -n 1 "$out" | awk '{ print $5 }')"

	# The backend leaves the set: the socket's next datagrams go to another one, and stay there.
	mapfile -t rest < <(printf '%s\n' "${BE_PORTS[@]}" | grep -vx "$first")
	svc_write "$(services "${rest[@]}")"
	touch "$VT/work/go"
	wait_lines "$out" 32 || { cat "$out"; false; }
	cat "$out"
	[ "$(tail -n 16 "$out" | grep -c "^from $DNS4 53 via ")" -eq 16 ]
	[ "$(tail -n 16 "$out" | awk '{ print $5 }' | sort -u | wc -l)" -eq 1 ]
	second="$(tail -n 1 "$out" | awk '{ print $5 }')"
	[ "$second" != "$first" ]
}

@test "services_reverse: a UDP socket connected to a VIP, then to its backend directly, sees the backend" {
	local out
	backend_and_client
	out="$(svc_client "$P_NS" "$P_CG" udpreconnect "$ONE4" 53 "$BE4" "${BE_PORTS[0]}")"
	echo "$out"
	[ "$(sed -n 1,2p <<<"$out")" = "peer $ONE4 53
from $ONE4 53" ]
	[ "$(sed -n 3,4p <<<"$out")" = "peer $BE4 ${BE_PORTS[0]}
from $BE4 ${BE_PORTS[0]}" ]
}

@test "services_reverse: an unconnected UDP socket that sends to a VIP's backend directly sees the backend" {
	local out
	backend_and_client
	out="$(svc_client "$P_NS" "$P_CG" udpdirect "$ONE4" 53 "$BE4" "${BE_PORTS[0]}")"
	echo "$out"
	[ "$out" = "from $ONE4 53
from $BE4 ${BE_PORTS[0]}" ]
}
