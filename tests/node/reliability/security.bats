#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The threat model's testable claims (docs/threat-model.md): what velo creates is root-only
# whatever the runtime's umask; velo executes nothing but an IPAM plugin found on CNI_PATH;
# paths from the config are absolute without .. components; CNI_ARGS can't forge log lines.

load ../lib/lib

setup() {
	vt_setup_velo
	SEC_BPFFS=""
	SEC_MARK="$VT/work/executed"
	# A "plugin" that would betray being run: it leaves a marker and fails.
	mkdir -p "$VT/evil"
	printf '#!/bin/sh\ntouch %s\nexit 1\n' "$SEC_MARK" >"$VT/evil/sh"
	chmod 0755 "$VT/evil/sh"
	cp "$VT/evil/sh" "$VT/evil/evilipam"
}

teardown() {
	vt_teardown
	[ -z "${SEC_BPFFS:-}" ] || rm -rf "$SEC_BPFFS"
	return 0
}

sec_assert_not_executed() {
	[ ! -e "$SEC_MARK" ] || { echo "velo executed a program it must not run"; return 1; }
}

# sec_open_to_others DIR: "mode type path" of everything under DIR whose mode lets group or others in.
sec_open_to_others() {
	find "$1" -mindepth 1 \( -perm /077 \) ! -type l -printf '%m %y %P\n'
}

@test "state, locks, pins and the log are root-only, even under umask 000" {
	command -v bpftool >/dev/null 2>&1 || skip "bpftool not installed"
	mountpoint -q /sys/fs/bpf || skip "bpffs not mounted at /sys/fs/bpf"
	local pod config open=""
	SEC_BPFFS="/sys/fs/bpf/velotest-sec-$VT_TAG-$BATS_TEST_NUMBER"
	config="$(vt_annotated "$(vt_config -f dual | jq -c --arg b "$SEC_BPFFS" '.bpffsDir = $b')" \
		'{"velo.dev/fastpath": "tc"}')"
	pod="$(vt_pod_new)"
	umask 000
	vt_add "$pod" sec-modes "$config"
	umask 022

	# What ADD wrote: the record, the lock, the pins (and their dirs), the log.
	[ -n "$(vt_records)" ] || { echo "no record written"; false; }
	[ -n "$(find "$SEC_BPFFS" -type f)" ] || { echo "no pin under $SEC_BPFFS"; false; }
	for dir in "$VT_STATE" "$VT/run/locks" "$SEC_BPFFS"; do
		[ "$(stat -c %a "$dir")" = 700 ] || open+="$(stat -c '%a d' "$dir") $dir"$'\n'
		open+="$(sec_open_to_others "$dir")"
	done
	[ "$(stat -c %a "$VT_LOG")" = 600 ] || open+="$(stat -c '%a f' "$VT_LOG") $VT_LOG"
	[ "$(stat -c %U "$(find "$VT_STATE" -type f | head -n 1)")" = root ]
	if [ -n "$open" ]; then
		echo "readable or writable by others than root:"
		echo "$open"
		false
	fi
	vt_cni DEL sec-modes "$pod" eth0 "$config"
	vt_assert_ok
}

@test "ipam.type as a path (/bin/sh, ../../bin/sh, a planted script) is refused with code 7, nothing run" {
	local type
	for type in /bin/sh ../../bin/sh "$VT/evil/sh" ../evil/sh .. . "sh/"; do
		vt_cni ADD sec-path "$(vt_pod_new)" eth0 \
			"$(vt_config | jq -c --arg t "$type" '.ipam.type = $t')"
		vt_assert_error 7 'ipam.type' || { echo "ipam.type \"$type\""; false; }
		sec_assert_not_executed
	done
	vt_assert_nothing_left
}

@test "an IPAM plugin is looked up on CNI_PATH only, never on PATH" {
	vt_cni ADD sec-search "$(vt_pod_new)" eth0 "$(vt_config | jq -c '.ipam.type = "evilipam"')" \
		"PATH=$VT/evil:/usr/sbin:/usr/bin:/sbin:/bin"
	vt_assert_error 101 'evilipam'
	sec_assert_not_executed
	vt_assert_nothing_left
}

@test "DEL and GC never run a plugin named by a path either" {
	local config
	config="$(vt_config -v 1.1.0 | jq -c --arg t "$VT/evil/sh" '.ipam.type = $t')"
	vt_cni DEL sec-del "" eth0 "$config"
	vt_assert_error 7 'ipam.type'
	vt_cni_env "$(jq -c '.["cni.dev/valid-attachments"] = []' <<<"$config")" CNI_COMMAND=GC \
		"CNI_PATH=$VT_BIN"
	vt_assert_error 7 'ipam.type'
	sec_assert_not_executed
}

@test "relative paths, .. components and NUL in stateDir, runDir, bpffsDir, logFile, kubeconfig are refused with code 7" {
	local field value
	for field in stateDir runDir bpffsDir logFile kubeconfig; do
		for value in "velotest-rel/x" "./x" "$VT/../etc/velo" "$VT/x/.." "/.." ""; do
			vt_cni ADD sec-paths "$(vt_pod_new)" eth0 \
				"$(vt_config | jq -c --arg f "$field" --arg v "$value" '.[$f] = $v')"
			vt_assert_error 7 "$field" || { echo "$field = \"$value\""; false; }
		done
		# An escaped NUL would cut the string short where C reads it.
		vt_cni ADD sec-paths "$(vt_pod_new)" eth0 \
			"$(vt_config | sed "s|}\$|, \"$field\": \"$VT/ok\\\\u0000/../../etc\"}|")"
		vt_assert_error 7 || { echo "$field with \\u0000"; false; }
	done
	[ ! -e velotest-rel ] && [ ! -e "$VT/etc" ] && [ ! -e "$VT/ok" ] ||
		{ echo "velo created something at a refused path"; false; }
	vt_assert_nothing_left
}

SEC_FORGE="K8S_POD_NAMESPACE=ns;K8S_POD_NAME=a"$'\n'"ts=2000-01-01T00:00:00Z level=error msg=forged"

@test "CNI_ARGS values can't forge log lines" {
	local lines forged
	vt_cni ADD sec-log "$(vt_pod_new)" eth0 "$(vt_config)" "CNI_ARGS=$SEC_FORGE"
	# Refusing the value or escaping it are both fine; a line of its own is not.
	vt_assert_failed
	# Refused before the config said where to log: no log file at all is also fine.
	[ -f "$VT_LOG" ] || return 0
	forged="$(grep -c '^ts=2000-01-01' "$VT_LOG" || true)"
	[ "$forged" -eq 0 ] || { echo "forged line in the log:"; grep '^ts=2000' "$VT_LOG"; false; }
	lines="$(grep -vc '^ts=' "$VT_LOG" || true)"
	[ "$lines" -eq 0 ] || { echo "lines not starting with ts=:"; grep -v '^ts=' "$VT_LOG"; false; }
}

@test "a CNI_ARGS value IPAM refuses (newline, a second =) fails ADD cleanly, or DEL releases it" {
	local pod
	pod="$(vt_pod_new)"
	vt_cni ADD sec-nl "$pod" eth0 "$(vt_config)" "CNI_ARGS=$SEC_FORGE"
	vt_cni DEL sec-nl "$pod" eth0 "$(vt_config)" "CNI_ARGS=$SEC_FORGE"
	vt_assert_ok
	vt_assert_nothing_left
}

@test "routed path: a pod can't send with another pod's IPv4 address (strict rp_filter on its veth)" {
	local conf a b c a4 b4 c4 got
	conf="$(vt_config -f 4)"
	a="$(vt_pod_new)"
	b="$(vt_pod_new)"
	c="$(vt_pod_new)"
	vt_add "$a" ctr-spoof-a "$conf"
	a4="$(vt_ip "$VT_RESULT" 4)"
	vt_add "$b" ctr-spoof-b "$conf"
	b4="$(vt_ip "$VT_RESULT" 4)"
	vt_add "$c" ctr-spoof-c "$conf"
	c4="$(vt_ip "$VT_RESULT" 4)"
	[ "$(vt_node cat "/proc/sys/net/ipv4/conf/$(vt_host_ifname vt ctr-spoof-a eth0)/rp_filter")" = 1 ]
	vt_pod "$c" timeout 25 python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 9999))
s.settimeout(10)
got = []
try:
    while True:
        got.append(s.recv(100).decode())
except socket.timeout:
    pass
print(" ".join(sorted(set(got))) or "nothing")
' >"$VT/work/spoof.recv" &
	VT_PIDS+=($!)
	# Bound before A sends (python starts slowly on a loaded machine).
	for _ in $(seq 100); do
		vt_pod "$c" ss -Hlun "sport = :9999" | grep -q . && break
		sleep 0.1
	done
	# Pod A sends IPv4/UDP with a header it wrote: once from its own address, once from B's.
	vt_pod "$a" python3 - "$a4" "$b4" "$c4" <<'PY'
import socket, struct, sys
def packet(src, dst, payload):
    udp = struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0) + payload
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                       socket.inet_aton(src), socket.inet_aton(dst)) + udp
own, other, dst = sys.argv[1:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
for _ in range(3):
    s.sendto(packet(own, dst, b"own"), (dst, 0))
    s.sendto(packet(other, dst, b"spoofed"), (dst, 0))
PY
	wait "${VT_PIDS[@]: -1}" || true
	got="$(cat "$VT/work/spoof.recv")"
	echo "pod C got: $got"
	# Its own address arrives (the packets are good); B's never does.
	[ "$got" = own ]
}
