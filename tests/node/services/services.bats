#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Service translation (velo.dev/services): velod writes Services and EndpointSlices from its
# services file into the velo_svc_* maps; an opted-in pod's cgroup sock_addr programs send its
# connects and datagrams for a ClusterIP straight to a backend pod and show it the VIP. The node
# has kube-proxy's rules (nftables DNAT and REJECT): a plain pod takes them, an opted-in pod's
# traffic never touches them (their packet counters stay 0).

load ../lib/lib
load ../lib/cgroup_lib
load ../lib/services_lib
load ../lib/upgrade_lib

VIP4=10.96.0.10
VIP6=fd00:96::10
DNS4=10.96.0.53
DNS6=fd00:96::53
NOEP4=10.96.0.20
NOEP6=fd00:96::20

# A backend pod B (BE_*) serving, its web and dns Services over both families, kube-proxy's
# DNAT for them, velod syncing the file.
backend_and_services() {
	svc_pod be "${1:-{\}}"
	BE_NS="$P_NS" BE_CG="$P_CG" BE4="$P_IP4" BE6="$P_IP6"
	svc_server "$BE_NS" "$BE_CG"
	svc_kube_proxy ip "$VIP4" tcp 80 "$BE4" 8080
	svc_kube_proxy ip6 "$VIP6" tcp 80 "$BE6" 8080
	svc_kube_proxy ip "$DNS4" udp 53 "$BE4" 5353
	svc_kube_proxy ip6 "$DNS6" udp 53 "$BE6" 5353
	svc_velod
	svc_write "$(svc_file "[$(svc_service web "$VIP4" "$VIP6" -- "$SVC_HTTP"),
		$(svc_service dns "$DNS4" "$DNS6" -- "$SVC_DNS")]" "[
		$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8080}]' "$BE4"),
		$(svc_slice web-6 web IPv6 '[{"name": "http", "port": 8080}]' "$BE6"),
		$(svc_slice dns-4 dns IPv4 '[{"name": "dns", "protocol": "UDP", "port": 5353}]' "$BE4"),
		$(svc_slice dns-6 dns IPv6 '[{"name": "dns", "protocol": "UDP", "port": 5353}]' "$BE6")]")"
}

@test "services: the sock_addr programs on an opted-in pod's own cgroup only; CHECK; DEL removes them" {
	local conf attached
	svc_pod plain '{}'
	[ -z "$(vtc_attached "$P_CG")" ]
	svc_pod opted "$SVC_ON"
	attached="$(vtc_attached "$P_CG" | sort | tr '\n' ' ')"
	echo "attached: $attached"
	[ "$attached" = "velo_svc_conn4 velo_svc_conn6 velo_svc_peer4 velo_svc_peer6 velo_svc_recv4 velo_svc_recv6 velo_svc_send4 velo_svc_send6 " ]
	# Never on a parent: the cgroup mount's root has none of them.
	[ -z "$(vtc_attached "")" ]
	conf="$(vtc_config "$(vt_config -f dual)" "$P_CG" "$SVC_ON")"
	vt_cni CHECK ctr-opted "$P_NS" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
	vt_cni DEL ctr-opted "$P_NS" eth0 "$conf"
	vt_assert_ok
	[ -z "$(vtc_attached "$P_CG")" ]
	vt_cni DEL ctr-opted "$P_NS" eth0 "$conf"
	vt_assert_ok
}

@test "services: the node default from the conflist opts pods in; a pod's false opts out" {
	local ns cg conf
	ns="$(vt_pod_new)"
	cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-default"
	mkdir "$VTC_MOUNT$cg"
	VTC_CGROUPS+=("$VTC_MOUNT$cg")
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{}' |
		jq -c '.defaults = {"velo.dev/services": "true"}')"
	vt_add "$ns" ctr-default "$conf"
	vtc_attached "$cg" | grep -qx velo_svc_conn4
	ns="$(vt_pod_new)"
	cg="/velotest-$VT_TAG-$BATS_TEST_NUMBER-out"
	mkdir "$VTC_MOUNT$cg"
	VTC_CGROUPS+=("$VTC_MOUNT$cg")
	conf="$(vtc_config "$(vt_config -f dual)" "$cg" '{"velo.dev/services": "false"}' |
		jq -c '.defaults = {"velo.dev/services": "true"}')"
	vt_add "$ns" ctr-out "$conf"
	[ -z "$(vtc_attached "$cg")" ]
}

@test "services: TCP to a ClusterIP (IPv4, IPv6) goes straight to the backend, the app sees the VIP" {
	local out sent got
	backend_and_services
	svc_pod client "$SVC_ON"
	for vip in "$VIP4" "$VIP6"; do
		out="$(svc_client "$P_NS" "$P_CG" tcp "$vip" 80 1048576)"
		echo "$out"
		grep -qx "peer $vip 80" <<<"$out"
		sent="$(awk '$1 == "sent" { print $2 }' <<<"$out")"
		got="$(awk '$1 == "got" { print $2 }' <<<"$out")"
		[ -n "$sent" ]
		[ "$sent" = "$got" ]
	done
	# kube-proxy's rules never saw the opted-in pod's connections.
	[ "$(svc_kp_packets)" -eq 0 ]

	# A plain pod's connection to the same VIP takes them, and works the same.
	svc_pod plain '{}'
	out="$(svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 65536)"
	echo "$out"
	grep -qx "peer $VIP4 80" <<<"$out"
	[ "$(svc_kp_packets)" -gt 0 ]
}

@test "services: UDP to a DNS VIP (unconnected and connected, IPv4, IPv6): replies come from the VIP" {
	local out
	backend_and_services
	svc_pod client "$SVC_ON"
	for vip in "$DNS4" "$DNS6"; do
		out="$(svc_client "$P_NS" "$P_CG" udp "$vip" 53)"
		echo "$out"
		grep -qx "from $vip 53" <<<"$out"
		grep -qx "echo ok" <<<"$out"
		out="$(svc_client "$P_NS" "$P_CG" udpc "$vip" 53)"
		echo "$out"
		grep -qx "peer $vip 53" <<<"$out"
		grep -qx "from $vip 53" <<<"$out"
		grep -qx "echo ok" <<<"$out"
	done
	[ "$(svc_kp_packets)" -eq 0 ]
	svc_pod plain '{}'
	out="$(svc_client "$P_NS" "$P_CG" udp "$DNS4" 53)"
	echo "$out"
	grep -qx "from $DNS4 53" <<<"$out"
	[ "$(svc_kp_packets)" -gt 0 ]
}

@test "services: a Service without endpoints refuses (ECONNREFUSED); endpoints added and removed take effect" {
	local noep with
	backend_and_services
	svc_kube_proxy_reject ip "$NOEP4" tcp 80
	svc_kube_proxy_reject ip6 "$NOEP6" tcp 80
	svc_kube_proxy_reject ip "$NOEP4" udp 80
	noep="$(svc_file "[$(svc_service noep "$NOEP4" "$NOEP6" -- "$SVC_HTTP" \
		'{"name": "u", "protocol": "UDP", "port": 80}')]" '[]')"
	svc_write "$noep"
	svc_pod client "$SVC_ON"
	[ "$(svc_client "$P_NS" "$P_CG" refused tcp "$NOEP4" 80)" = ECONNREFUSED ]
	[ "$(svc_client "$P_NS" "$P_CG" refused tcp "$NOEP6" 80)" = ECONNREFUSED ]
	[ "$(svc_client "$P_NS" "$P_CG" refused udp "$NOEP4" 80)" = ECONNREFUSED ]
	[ "$(svc_client "$P_NS" "$P_CG" refused udp "$NOEP6" 80)" = ECONNREFUSED ]
	[ "$(svc_kp_packets)" -eq 0 ]

	# An endpoint appears: the next connect reaches it.
	with="$(svc_file "[$(svc_service noep "$NOEP4" "$NOEP6" -- "$SVC_HTTP")]" \
		"[$(svc_slice noep-4 noep IPv4 '[{"name": "http", "port": 8080}]' "$BE4")]")"
	svc_write "$with"
	run svc_client "$P_NS" "$P_CG" tcp "$NOEP4" 80 4096
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx "peer $NOEP4 80" <<<"$output"
	# The IPv6 ClusterIP still has none.
	[ "$(svc_client "$P_NS" "$P_CG" refused tcp "$NOEP6" 80)" = ECONNREFUSED ]
	# It goes away: refused again at once.
	svc_write "$noep"
	[ "$(svc_client "$P_NS" "$P_CG" refused tcp "$NOEP4" 80)" = ECONNREFUSED ]
	[ "$(svc_kp_packets)" -eq 0 ]
}

@test "services: a translated connection between two sockmap pods pairs in the sockhash" {
	local out n sent got _
	SVC_ACCEPT_BUGS="$VT_SOCKMAP_KERNEL_BUGS"
	backend_and_services '{"velo.dev/sockmap": "true"}'
	svc_pod client '{"velo.dev/services": "true", "velo.dev/sockmap": "true"}'
	svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 4194304 3 >"$VT/work/client.out" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q '^got' "$VT/work/client.out" && break
		sleep 0.05
	done
	cat "$VT/work/client.out"
	grep -qx "peer $VIP4 80" "$VT/work/client.out"
	sent="$(awk '$1 == "sent" { print $2 }' "$VT/work/client.out")"
	got="$(awk '$1 == "got" { print $2 }' "$VT/work/client.out")"
	[ -n "$sent" ]
	[ "$sent" = "$got" ]
	# Both ends, keyed by the backend's address (what the socket is connected to), not the VIP.
	n="$(bpftool map dump pinned "$VTC_BPFFS/velo_sock_v1" -j | jq 'length')"
	echo "sockhash entries: $n"
	[ "$n" -eq 2 ]
	[ "$(svc_kp_packets)" -eq 0 ]
}

# held_tcp ADDR PORT: the peer's client in pod P_* sends 1 MiB to ADDR:PORT, checks the digest,
# then holds the connection open for 4 s in the background (this test's process).
held_tcp() {
	local out="$VT/work/held.$1.$2" sent got _
	svc_client "$P_NS" "$P_CG" tcp "$1" "$2" 1048576 4 >"$out" 2>&1 &
	VT_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q '^got' "$out" && break
		sleep 0.05
	done
	cat "$out"
	sent="$(awk '$1 == "sent" { print $2 }' "$out")"
	got="$(awk '$1 == "got" { print $2 }' "$out")"
	[ -n "$sent" ] && [ "$sent" = "$got" ]
}

svc_sockets() { bpftool map dump pinned "$VTC_BPFFS/velo_sock_v1" -j | jq 'length'; }

@test "services: a sockmap client through kube-proxy's DNAT isn't paired, nor is the backend's end" {
	local ctl ctl_names metric_names
	SVC_ACCEPT_BUGS="$VT_SOCKMAP_KERNEL_BUGS"
	backend_and_services '{"velo.dev/sockmap": "true"}'
	# Opted into sockmap, not into translation: kube-proxy DNATs its connect to the VIP.
	svc_pod client '{"velo.dev/sockmap": "true"}'
	held_tcp "$VIP4" 80
	[ "$(svc_kp_packets)" -gt 0 ]
	# The client's socket is connected to the VIP (not a pod): out. The backend's accepted
	# socket sees a pod at each end, but its peer's key isn't in: out too (unpaired).
	[ "$(svc_sockets)" -eq 0 ]
	ctl="$(svc_ctl -j sockets)"
	jq -e '.counters.unpaired == 1 and .counters.insert == 0 and .counters.peer_not_pod == 1' \
		<<<"$ctl" || { echo "$ctl"; false; }
	[ "$(svc_metric 'velo_sockmap_events_total{outcome="unpaired"}')" = 1 ]
	# One vocabulary (docs/sockmap.md, "Counters"): veloctl's counters are /metrics' outcomes.
	ctl_names="$(jq -r '.counters | keys_unsorted[]' <<<"$ctl" | sort)"
	metric_names="$(vt_node curl -sf --max-time 5 "http://127.0.0.1:$SVC_PORT/metrics" |
		sed -n 's/^velo_sockmap_events_total{outcome="\([^"]*\)"}.*/\1/p' | sort)"
	echo "veloctl: $ctl_names; /metrics: $metric_names"
	[ "$(wc -l <<<"$ctl_names")" -eq 9 ]
	[ "$ctl_names" = "$metric_names" ]
	# The same pods connected pod to pod pair as before.
	held_tcp "$BE4" 8080
	[ "$(svc_sockets)" -eq 2 ]
	ctl="$(svc_ctl -j sockets)"
	jq -e '.counters.unpaired == 1 and .counters.insert == 2 and
		(.connections | length == 1 and .[0].accelerated)' <<<"$ctl" || { echo "$ctl"; false; }
}

@test "services: veloctl services and /metrics count translations, refusals and each backend's connections" {
	local json
	backend_and_services
	svc_pod client "$SVC_ON"
	svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 1024 >/dev/null
	svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 1024 >/dev/null
	svc_client "$P_NS" "$P_CG" udp "$DNS6" 53 >/dev/null
	svc_write "$(svc_file "[$(svc_service web "$VIP4" "$VIP6" -- "$SVC_HTTP")]" \
		"[$(svc_slice web-4 web IPv4 '[{"name": "http", "port": 8080}]' "$BE4")]")"
	[ "$(svc_client "$P_NS" "$P_CG" refused tcp "$VIP6" 80)" = ECONNREFUSED ]

	run svc_ctl -j services
	echo "$output"
	[ "$status" -eq 0 ]
	json="$output"
	# The dns service is gone from the file, so from the maps.
	[ "$(jq '.servicePorts | length' <<<"$json")" -eq 2 ]
	[ "$(jq -r --arg v "$VIP4" '.servicePorts[] | select(.clusterIP == $v) | .name' <<<"$json")" = \
		"velotest/web:http/tcp" ]
	[ "$(jq --arg v "$VIP4" '.servicePorts[] | select(.clusterIP == $v) | .translations' <<<"$json")" -eq 2 ]
	[ "$(jq --arg v "$VIP4" --arg b "$BE4" '.servicePorts[] | select(.clusterIP == $v) |
		.backends[] | select(.address == $b and .port == 8080) | .connections' <<<"$json")" -eq 2 ]
	[ "$(jq --arg v "$VIP6" '.servicePorts[] | select(.clusterIP == $v) | .refused' <<<"$json")" -eq 1 ]
	[ "$(jq --arg v "$VIP6" '.servicePorts[] | select(.clusterIP == $v) | .backends | length' <<<"$json")" -eq 0 ]
	run svc_ctl services
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^velotest/web:http/tcp  *$VIP4:80/TCP  *1  *2  *0 " <<<"$output"
	grep -q -- "-> $BE4:8080  *2 connections" <<<"$output"

	[ "$(svc_metric "velo_service_translations_total{service=\"velotest/web\",port=\"http/tcp\",cluster_ip=\"$VIP4\"}")" = 2 ]
	[ "$(svc_metric "velo_service_refused_total{service=\"velotest/web\",port=\"http/tcp\",cluster_ip=\"$VIP6\"}")" = 1 ]
	[ "$(svc_metric velo_services_ports)" = 2 ]
}

@test "services: velod writes its names file (run/services.json) 0600 under umask 000" {
	local old
	old="$(umask)"
	umask 000
	backend_and_services || {
		umask "$old"
		false
	}
	umask "$old"
	[ -f "$VT/run/services.json" ]
	[ "$(stat -c %a "$VT/run/services.json")" = 600 ]
}

@test "services: connections through a Service to a backend that goes away are closed, others stay" {
	local _
	backend_and_services
	svc_pod client "$SVC_ON"
	svc_client "$P_NS" "$P_CG" tcpwait "$VIP4" 80 15 >"$VT/work/via-vip.out" 2>&1 &
	svc_client "$P_NS" "$P_CG" tcpwait "$BE4" 8080 4 >"$VT/work/direct.out" 2>&1 &
	for _ in $(seq 100); do
		grep -q '^got' "$VT/work/via-vip.out" && grep -q '^got' "$VT/work/direct.out" && break
		sleep 0.05
	done
	grep -q '^got' "$VT/work/via-vip.out"
	grep -q '^got' "$VT/work/direct.out"
	# The web Service loses its IPv4 endpoint.
	svc_write "$(svc_file "[$(svc_service web "$VIP4" "$VIP6" -- "$SVC_HTTP")]" \
		"[$(svc_slice web-6 web IPv6 '[{"name": "http", "port": 8080}]' "$BE6")]")"
	for _ in $(seq 100); do
		[ "$(wc -l <"$VT/work/via-vip.out")" -ge 3 ] && break
		sleep 0.05
	done
	cat "$VT/work/via-vip.out"
	grep -qx "closed ECONNABORTED" "$VT/work/via-vip.out"
	grep -q "services: closed 1 connections to removed backends" "$VT/velod.log"
	# The pod's own connection to the same address, not through the Service, is its business.
	for _ in $(seq 150); do
		[ "$(wc -l <"$VT/work/direct.out")" -ge 3 ] && break
		sleep 0.05
	done
	cat "$VT/work/direct.out"
	grep -qx open "$VT/work/direct.out"
}

# udptag_pod NAME PORT: a backend pod (sets P_*) whose UDP echo server tags replies "PORT ...".
udptag_pod() {
	svc_pod "$1" '{}'
	svc_peer_in "$P_NS" "$P_CG" "$VT/work/udptag-$1.log" udptag "$2"
}

@test "services: a DNS-style client's connected UDP socket to a removed backend gets an error and reconnects to a live one" {
	local a b out="$VT/work/dnsloop.out" _ cut
	udptag_pod dns-a 5353
	a="$P_IP4"
	udptag_pod dns-b 5354
	b="$P_IP4"
	svc_velod
	svc_write "$(svc_file "[$(svc_service dns "$DNS4" -- "$SVC_DNS")]" \
		"[$(svc_slice dns-a dns IPv4 '[{"name": "dns", "protocol": "UDP", "port": 5353}]' "$a")]")"
	svc_pod client "$SVC_ON"
	svc_client "$P_NS" "$P_CG" dnsloop "$DNS4" 53 8 >"$out" 2>&1 &
	for _ in $(seq 100); do
		[ "$(grep -c '^via 5353' "$out")" -ge 5 ] && break
		sleep 0.05
	done
	[ "$(grep -c '^via 5353' "$out")" -ge 5 ]
	# Backend A leaves the Service (its pod still answers, as a terminating pod may); B joins.
	svc_write "$(svc_file "[$(svc_service dns "$DNS4" -- "$SVC_DNS")]" \
		"[$(svc_slice dns-b dns IPv4 '[{"name": "dns", "protocol": "UDP", "port": 5354}]' "$b")]")"
	cut="$(wc -l <"$out")"
	for _ in $(seq 100); do
		tail -n +"$((cut + 1))" "$out" | grep -q '^via 5354' && break
		sleep 0.05
	done
	cat "$out"
	# The socket was closed under the client once (disconnected: a send fails EDESTADDRREQ, a
	# pending recv ECONNABORTED), which connected again and reached B; after B's first reply
	# nothing went to A any more.
	tail -n +"$((cut + 1))" "$out" | grep -q '^via 5354'
	[ "$(grep -cxE "error (ECONNABORTED|EDESTADDRREQ)" "$out")" -eq 1 ]
	[ "$(sed -n '/^via 5354/,$p' "$out" | grep -c '^via 5353')" -eq 0 ]
	grep -q "services: closed 1 connections to removed backends" "$VT/velod.log"
}

# svc_stat INDEX: a velo_stats_v2 counter (enum velo_stat: 0 tc redirect, 8 nat, 9 no_ct).
svc_stat() {
	[ -e "$VTC_BPFFS/velo_stats_v2" ] || { echo 0; return; }
	vt_percpu_u64 "$VTC_BPFFS/velo_stats_v2" "$1" 0 0 0
}

@test "services: the tc shortcut carries a translated connection without conntrack NAT" {
	local out redirect0 nat0 noct0 sent got
	backend_and_services '{"velo.dev/fastpath": "tc"}'
	svc_pod client '{"velo.dev/services": "true", "velo.dev/fastpath": "tc"}'
	redirect0="$(svc_stat 0)"
	nat0="$(svc_stat 8)"
	noct0="$(svc_stat 9)"
	out="$(svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 4194304)"
	echo "$out"
	sent="$(awk '$1 == "sent" { print $2 }' <<<"$out")"
	got="$(awk '$1 == "got" { print $2 }' <<<"$out")"
	[ -n "$sent" ]
	[ "$sent" = "$got" ]
	echo "tc redirect $redirect0 -> $(svc_stat 0), nat $nat0 -> $(svc_stat 8), no_ct $noct0 -> $(svc_stat 9)"
	# Both directions' packets were redirected pod to pod; none needed the stack for NAT.
	[ "$(svc_stat 0)" -gt $((redirect0 + 100)) ]
	[ "$(svc_stat 8)" -eq "$nat0" ]
	[ "$(svc_stat 9)" -eq "$noct0" ]
	[ "$(svc_kp_packets)" -eq 0 ]
}

@test "services: velod of the next BPF generation moves an opted-in pod's links; translation goes on" {
	local host old new conf out dirs
	vt_nextgen
	backend_and_services
	svc_pod client "$SVC_ON"
	conf="$(vtc_config "$(vt_config -f dual)" "$P_CG" "$SVC_ON")"
	host="$(vt_host_ifname vt ctr-client eth0)"
	old="$(vt_link_prog "$VTC_BPFFS" "${host}_svc_conn4")"
	[ -n "$old" ]
	vt_velod_once "$VT_NEXT_VELOD" "$VTC_BPFFS" "$VT/work/next.log"
	cat "$VT/work/next.log"
	new="$(vt_gen_prog "$VTC_BPFFS" progs_gnextgen velo_svc_conn4)"
	[ -n "$new" ]
	[ "$new" != "$old" ]
	for kind in conn4 conn6 send4 send6 recv4 recv6 peer4 peer6; do
		[ "$(vt_link_prog "$VTC_BPFFS" "${host}_svc_$kind")" = \
			"$(vt_gen_prog "$VTC_BPFFS" progs_gnextgen "velo_svc_$kind")" ]
	done
	# The old generation is unpinned once nothing runs it.
	dirs="$(find "$VTC_BPFFS" -maxdepth 1 -name 'progs_g*' -printf '%f ')"
	echo "generation dirs: $dirs"
	[ "$dirs" = "progs_gnextgen " ]
	out="$(svc_client "$P_NS" "$P_CG" tcp "$VIP4" 80 65536)"
	echo "$out"
	grep -qx "peer $VIP4 80" <<<"$out"
	[ "$(svc_kp_packets)" -eq 0 ]
	VT_EXEC="$VT_NEXT_VELO" vt_cni CHECK ctr-client "$P_NS" eth0 "$(vt_with_prev "$conf" "$VT_RESULT")"
	vt_assert_ok
}
