#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# NetworkPolicy's state: a reply passes whatever the flow table (velo_pol_ct_v1) holds about its
# connection, on every path. A server pushes on an established connection (socat, fed through a
# fifo), the client reads; the side whose policy changes is always x/a. A push must reach the
# client when a policy newly selects a pod of a connection it still allows (the flow table has
# no entry: the programs weren't there when it opened), when the flow's entry is gone (LRU
# eviction, simulated with bpftool), and an entry made for a reply is keyed the way the
# connection was opened (else the next change judges it backwards). A connection a change
# forbids is cut: policy_truth.bats' held connections, on every path.

load ../lib/lib
load ../lib/cgroup_lib
load policy_lib

teardown() {
	vt_node nft delete table inet velotest_ct 2>/dev/null || true
	pol_teardown
}

PUSH_PORT=7000
DENY_INGRESS='{"podSelector": {}, "policyTypes": ["Ingress"]}'
DENY_EGRESS='{"podSelector": {}, "policyTypes": ["Egress"]}'
FROM_Y='{"podSelector": {}, "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"ns": "y"}}}]}]}'

# pair ANNOTATIONS_JSON: pods x/a and y/b on one path, velod with no policy.
pair() {
	if [ "$1" = '{"velo.dev/sockmap": "true"}' ]; then
		POL_ACCEPT_BUGS=1
	fi
	pol_add x a "$1"
	pol_add y b "$1"
	pol_velod
	pol_apply '[]'
}

# push_start SERVER_KEY CLIENT_KEY [CLIENT_OPTIONS]: a server in SERVER_KEY sends what the test
# writes to $PUSH_FD to the one client it accepts, a client in CLIENT_KEY (socat address
# options CLIENT_OPTIONS, e.g. its source port) writing what it reads to $PUSH_OUT. Sets
# PUSH_FD, PUSH_OUT.
push_start() {
	local fifo="$VT/work/push.in" _
	PUSH_OUT="$VT/work/push.out"
	mkfifo "$fifo"
	: >"$PUSH_OUT"
	vtc_run "${POL_NS[$1]}" "${POL_CG[$1]}" socat -u "OPEN:$fifo" \
		"TCP4-LISTEN:$PUSH_PORT,reuseaddr" &
	VT_PIDS+=($!)
	exec {PUSH_FD}>"$fifo" # the client must not hold it: closing it ends the connection
	vtc_run "${POL_NS[$2]}" "${POL_CG[$2]}" socat -u \
		"TCP4:${POL_IP[$1]}:$PUSH_PORT,retry=50,interval=0.1${3:+,$3}" - >"$PUSH_OUT" \
		{PUSH_FD}>&- &
	VT_PIDS+=($!)
	push one
}

# push WORD: the server sends WORD; waits (5 s) until the client read it; fails if it didn't.
push() {
	local _
	echo "$1" >&"$PUSH_FD"
	for _ in $(seq 100); do
		grep -qx "$1" "$PUSH_OUT" && return 0
		sleep 0.05
	done
	echo "the client did not receive '$1' (it read: $(tr '\n' ' ' <"$PUSH_OUT"))"
	return 1
}

# ct_keys: velo_pol_ct_v1's keys, one a line, as bpftool's hex bytes ("0a 00 ...").
ct_keys() {
	bpftool -j map dump pinned "$VTC_BPFFS/velo_pol_ct_v1" |
		jq -r '.[] | .key | map(ltrimstr("0x")) | join(" ")'
}

# ct_entries: the TCP entries as "SADDR:SPORT>DADDR:DPORT" (IPv4), one a line.
ct_entries() {
	local hex b
	while read -r hex; do
		read -ra b <<<"$hex"
		[ "${b[36]}" = 06 ] || continue
		echo "$((16#${b[12]})).$((16#${b[13]})).$((16#${b[14]})).$((16#${b[15]})):$((16#${b[32]}${b[33]}))>$((16#${b[28]})).$((16#${b[29]})).$((16#${b[30]})).$((16#${b[31]})):$((16#${b[34]}${b[35]}))"
	done < <(ct_keys)
}

# ct_forget PORT: deletes the TCP entries with PORT at either end, as LRU eviction would.
ct_forget() {
	local hex b deleted=0
	while read -r hex; do
		read -ra b <<<"$hex"
		[ "${b[36]}" = 06 ] || continue
		[ "$((16#${b[32]}${b[33]}))" = "$1" ] || [ "$((16#${b[34]}${b[35]}))" = "$1" ] ||
			continue
		bpftool map delete pinned "$VTC_BPFFS/velo_pol_ct_v1" key hex "${b[@]}" || return 1
		deleted=$((deleted + 1))
	done < <(ct_keys)
	echo "deleted $deleted flow entries of port $1"
	[ "$deleted" -gt 0 ]
}

# --- a policy that newly selects a running pod

# x/a connected to y/b before x/a was isolated for ingress: b's pushes are replies to a's connection.
newly_isolated_ingress() {
	pair "$1"
	push_start y/b x/a
	pol_apply "[$(pol_np x deny "$DENY_INGRESS")]"
	push two
	push three
}

# y/b connected to x/a, which then is isolated for egress: a's pushes answer b's connection.
newly_isolated_egress() {
	pair "$1"
	push_start x/a y/b
	pol_apply "[$(pol_np x deny "$DENY_EGRESS")]"
	push two
	push three
}

@test "policy state: a client newly isolated for ingress still gets its server's pushes (routed)" {
	newly_isolated_ingress '{}'
}

@test "policy state: a client newly isolated for ingress still gets its server's pushes (tc)" {
	newly_isolated_ingress '{"velo.dev/fastpath": "tc"}'
}

@test "policy state: a client newly isolated for ingress still gets its server's pushes (XDP)" {
	newly_isolated_ingress '{"velo.dev/fastpath": "xdp"}'
}

@test "policy state: a client newly isolated for ingress still gets its server's pushes (sockmap)" {
	newly_isolated_ingress '{"velo.dev/sockmap": "true"}'
}

@test "policy state: a server newly isolated for egress still pushes to its client (routed)" {
	newly_isolated_egress '{}'
}

@test "policy state: a server newly isolated for egress still pushes to its client (tc)" {
	newly_isolated_egress '{"velo.dev/fastpath": "tc"}'
}

@test "policy state: a server newly isolated for egress still pushes to its client (XDP)" {
	newly_isolated_egress '{"velo.dev/fastpath": "xdp"}'
}

@test "policy state: a server newly isolated for egress still pushes to its client (sockmap)" {
	newly_isolated_egress '{"velo.dev/sockmap": "true"}'
}

# --- an entry gone (LRU eviction)

# x/a, isolated for ingress, connected to y/b; its flow's entry goes; b pushes.
evicted() {
	pair "$1"
	pol_apply "[$(pol_np x deny "$DENY_INGRESS")]"
	push_start y/b x/a
	ct_forget "$PUSH_PORT"
	push two
	push three
}

@test "policy state: a push after the flow's entry was evicted still reaches the client (routed)" {
	evicted '{}'
}

@test "policy state: a push after the flow's entry was evicted still reaches the client (tc)" {
	evicted '{"velo.dev/fastpath": "tc"}'
}

@test "policy state: a push after the flow's entry was evicted still reaches the client (XDP)" {
	evicted '{"velo.dev/fastpath": "xdp"}'
}

# --- the entry a reply makes

# x/a connected to y/b, then is isolated for ingress from y only: b's push makes the flow's
# entry, which must say a opened it; then a deny-all must not cut a's own connection.
reply_keyed() {
	local entries
	pair "$1"
	push_start y/b x/a
	pol_apply "[$(pol_np x from-y "$FROM_Y")]"
	push two
	entries="$(ct_entries)"
	echo "flow entries: $entries"
	[[ "$entries" == *"${POL_IP[x/a]}:"*">${POL_IP[y/b]}:$PUSH_PORT"* ]]
	[[ "$entries" != *"${POL_IP[y/b]}:$PUSH_PORT>"* ]]
	pol_apply "[$(pol_np x deny "$DENY_INGRESS")]"
	push three
}

@test "policy state: an entry a reply made is keyed the way the connection opened (routed)" {
	reply_keyed '{}'
}

@test "policy state: an entry a reply made is keyed the way the connection opened (tc)" {
	reply_keyed '{"velo.dev/fastpath": "tc"}'
}

# The same with the node's conntrack on (kube-proxy and Docker turn it on in a real node's
# namespace) and a client port below the ephemeral range: only conntrack can say who opened it.
@test "policy state: an entry a reply made is keyed by conntrack's direction (routed, client port 20000)" {
	local entries
	vt_node nft add table inet velotest_ct
	vt_node nft add chain inet velotest_ct forward \
		'{ type filter hook forward priority 0; policy accept; }'
	vt_node nft add rule inet velotest_ct forward ct state established counter accept
	pair '{}'
	push_start y/b x/a "sourceport=20000,reuseaddr"
	pol_apply "[$(pol_np x from-y "$FROM_Y")]"
	push two
	entries="$(ct_entries)"
	echo "flow entries: $entries"
	[[ "$entries" == *"${POL_IP[x/a]}:20000>${POL_IP[y/b]}:$PUSH_PORT"* ]]
	[[ "$entries" != *"${POL_IP[y/b]}:$PUSH_PORT>"* ]]
	pol_apply "[$(pol_np x deny "$DENY_INGRESS")]"
	push three
}

# --- entries end with their connection

@test "policy state: a closed TCP connection leaves no flow entry (routed)" {
	local entries _
	pair '{}'
	pol_apply "[$(pol_np x deny "$DENY_INGRESS")]"
	push_start y/b x/a
	entries="$(ct_entries)"
	echo "while open: $entries"
	[[ "$entries" == *">${POL_IP[y/b]}:$PUSH_PORT"* ]]
	# The server's fifo closes: it sends its FIN, the client's socat ends and sends its own.
	exec {PUSH_FD}>&-
	for _ in $(seq 100); do
		[[ "$(ct_entries)" != *":$PUSH_PORT"* ]] && break
		sleep 0.05
	done
	entries="$(ct_entries)"
	echo "once closed: ${entries:-none}"
	[[ "$entries" != *":$PUSH_PORT"* ]]
}
