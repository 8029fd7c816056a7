#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# install-cni.sh: puts velo on a Kubernetes node from the DaemonSet (manifests/velo.yaml).
#
#   install-cni.sh mount-bpffs  mount bpffs at $VELO_BPFFS unless one is there (init container)
#   install-cni.sh install      copy the binaries to the host's CNI bin dir, write the plugin's
#                               kubeconfig, render the conflist with this node's podCIDRs into
#                               the staging dir (init container)
#   install-cni.sh activate     wait until velod answers /healthz, then put the staged conflist
#                               on tmpfs and link it from the host's CNI conf dir; then keep the
#                               kubeconfig's token fresh (sidecar container; VELO_ONESHOT=1
#                               returns after the link)
#   install-cni.sh uninstall    remove the conflist and its link, the kubeconfig dir and the
#                               velo binary
#
# Why a link to tmpfs: a node's /run is emptied when it boots, so after a reboot the link in
# /etc/cni/net.d dangles, the runtime can't load it and reports the network not ready, and the
# kubelet starts no pod until velod has routed the Node list and this script has written the
# target again and renamed a fresh link in (docs/kubernetes.md, "Ready only with routes").
#
# Every file lands by rename from a temp name in the same directory, so the runtime never reads
# half a conflist and a running velo binary is never written in place. Settings are environment
# variables (defaults below); tests point them at temp dirs. POSIX sh; needs curl and jq.
set -eu

CNI_BIN_DIR=${CNI_BIN_DIR:-/host/opt/cni/bin}
CNI_NET_DIR=${CNI_NET_DIR:-/host/etc/cni/net.d}
# How the host sees CNI_NET_DIR: the paths written into the conflist and kubeconfig.
HOST_CNI_NET_DIR=${HOST_CNI_NET_DIR:-/etc/cni/net.d}
VELO_SRC_DIR=${VELO_SRC_DIR:-/opt/velo/bin}
VELO_BINARIES=${VELO_BINARIES:-velo}
# Reference plugins the conflist uses, installed from the image only where the node has none.
VELO_REF_DIR=${VELO_REF_DIR:-/usr/lib/cni}
VELO_REF_PLUGINS=${VELO_REF_PLUGINS:-host-local bandwidth portmap loopback}
VELO_CONF_TEMPLATE=${VELO_CONF_TEMPLATE:-/etc/velo/10-velo.conflist}
VELO_CONF_NAME=${VELO_CONF_NAME:-10-velo.conflist}
VELO_STAGE_DIR=${VELO_STAGE_DIR:-/run/velo-install}
# Where the active conflist lives (a tmpfs: the host's /run/velo), as this container sees it
# and as the host does (the link's target).
VELO_CONF_TARGET_DIR=${VELO_CONF_TARGET_DIR:-/run/velo/cni}
HOST_CONF_TARGET_DIR=${HOST_CONF_TARGET_DIR:-/run/velo/cni}
VELO_KUBECONFIG_DIR=${VELO_KUBECONFIG_DIR:-velo.d}
SA_DIR=${SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
# The API server the plugin talks to; default: the in-cluster Service (host netns + kube-proxy).
VELO_K8S_SERVER=${VELO_K8S_SERVER:-}
# Where podCIDRs come from: VELO_POD_CIDRS (comma-separated) > VELO_NODE_JSON (a Node or a
# NodeList document) > the API (the Node named NODE_NAME).
VELO_POD_CIDRS=${VELO_POD_CIDRS:-}
VELO_NODE_JSON=${VELO_NODE_JSON:-}
NODE_NAME=${NODE_NAME:-}
VELO_WAIT_SECONDS=${VELO_WAIT_SECONDS:-600}
VELO_HEALTHZ_URL=${VELO_HEALTHZ_URL:-http://127.0.0.1:9099/healthz}
VELO_READY_TIMEOUT=${VELO_READY_TIMEOUT:-0}
VELO_REFRESH_SECONDS=${VELO_REFRESH_SECONDS:-60}
VELO_ONESHOT=${VELO_ONESHOT:-0}
VELO_BPFFS=${VELO_BPFFS:-/sys/fs/bpf}

log() {
	printf 'install-cni: %s\n' "$*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# write_atomic SRC DEST MODE: DEST gets SRC's content and MODE by rename(2) from a temp file in
# DEST's directory. An identical DEST is left alone (no inode churn, no runtime reload).
write_atomic() {
	wa_dest_dir=$(dirname "$2")
	if [ -f "$2" ] && cmp -s "$1" "$2"; then
		chmod "$3" "$2"
		return 0
	fi
	wa_tmp=$wa_dest_dir/.$(basename "$2").velo-tmp.$$
	rm -f "$wa_tmp"
	(umask 077 && cp "$1" "$wa_tmp")
	chmod "$3" "$wa_tmp"
	mv -f "$wa_tmp" "$2" || {
		rm -f "$wa_tmp"
		return 1
	}
}

# link_atomic TARGET DEST: DEST becomes a symlink to TARGET by rename(2) of a fresh link, so the
# runtime's watch on DEST's directory sees a new entry and loads it again.
link_atomic() {
	la_tmp=$(dirname "$2")/.$(basename "$2").velo-tmp.$$
	rm -f "$la_tmp"
	ln -s "$1" "$la_tmp"
	mv -fT "$la_tmp" "$2" || {
		rm -f "$la_tmp"
		return 1
	}
}

install_binaries() {
	mkdir -p "$CNI_BIN_DIR"
	for bin in $VELO_BINARIES; do
		[ -x "$VELO_SRC_DIR/$bin" ] || die "$VELO_SRC_DIR/$bin: missing or not executable"
		write_atomic "$VELO_SRC_DIR/$bin" "$CNI_BIN_DIR/$bin" 0755
		log "installed $CNI_BIN_DIR/$bin"
	done
	for bin in $VELO_REF_PLUGINS; do
		if [ -e "$CNI_BIN_DIR/$bin" ]; then
			continue
		fi
		if [ -x "$VELO_REF_DIR/$bin" ]; then
			write_atomic "$VELO_REF_DIR/$bin" "$CNI_BIN_DIR/$bin" 0755
			log "installed $CNI_BIN_DIR/$bin (the node had none)"
		else
			log "warning: $bin is on neither the node nor the image"
		fi
	done
}

# The API server URL: VELO_K8S_SERVER, else from the in-cluster environment (IPv6 in brackets).
api_server() {
	if [ -n "$VELO_K8S_SERVER" ]; then
		printf '%s\n' "$VELO_K8S_SERVER"
		return 0
	fi
	[ -n "${KUBERNETES_SERVICE_HOST:-}" ] ||
		die "KUBERNETES_SERVICE_HOST is unset: not in a pod? set VELO_K8S_SERVER"
	as_host=$KUBERNETES_SERVICE_HOST
	case "$as_host" in
	*:*) as_host="[$as_host]" ;;
	esac
	printf 'https://%s:%s\n' "$as_host" "${KUBERNETES_SERVICE_PORT:-443}"
}

# render_kubeconfig OUT: a kubeconfig (JSON, which is YAML too, so the plugin parses it with
# cJSON) with the service account's token inline and the CA by host path. The token is read
# from its file by jq, never passed on a command line (argv is world-readable in /proc).
render_kubeconfig() {
	[ -r "$SA_DIR/token" ] || die "$SA_DIR/token: not readable"
	rk_server=$(api_server)
	jq -n --arg server "$rk_server" \
		--arg ca "$HOST_CNI_NET_DIR/$VELO_KUBECONFIG_DIR/ca.crt" \
		--rawfile token "$SA_DIR/token" '{
		apiVersion: "v1",
		kind: "Config",
		clusters: [{name: "velo",
			cluster: {server: $server, "certificate-authority": $ca}}],
		users: [{name: "velo", user: {token: ($token | sub("\\s+$"; ""))}}],
		contexts: [{name: "velo", context: {cluster: "velo", user: "velo"}}],
		"current-context": "velo"
	}' >"$1"
}

write_kubeconfig() {
	wk_dir=$CNI_NET_DIR/$VELO_KUBECONFIG_DIR
	mkdir -p "$wk_dir"
	chmod 0700 "$wk_dir"
	[ -r "$SA_DIR/ca.crt" ] || die "$SA_DIR/ca.crt: not readable"
	write_atomic "$SA_DIR/ca.crt" "$wk_dir/ca.crt" 0644
	wk_tmp=$VELO_STAGE_DIR/kubeconfig
	(umask 077 && render_kubeconfig "$wk_tmp")
	if ! cmp -s "$wk_tmp" "$wk_dir/kubeconfig" 2>/dev/null; then
		write_atomic "$wk_tmp" "$wk_dir/kubeconfig" 0600
		log "wrote $wk_dir/kubeconfig"
	fi
	chmod 0600 "$wk_dir/kubeconfig"
	rm -f "$wk_tmp"
}

# podCIDRs (one a line) from a Node or NodeList document on stdin.
pod_cidrs_from_json() {
	jq -r 'if .kind == "NodeList" then (.items[0] // {}) else . end
		| .spec // {}
		| (.podCIDRs // (if .podCIDR then [.podCIDR] else [] end))
		| .[]'
}

# fetch_node OUT: this node's NodeList (list with a field selector, so RBAC needs only
# list/watch on nodes, no get). The bearer header is read from a 0600 file, not argv.
fetch_node() {
	[ -n "$NODE_NAME" ] || die "NODE_NAME is unset (the DaemonSet sets it from spec.nodeName)"
	fn_server=$(api_server)
	fn_header=$VELO_STAGE_DIR/auth-header
	(umask 077 && printf 'Authorization: Bearer %s\n' "$(cat "$SA_DIR/token")" >"$fn_header")
	fn_rc=0
	curl -sS --fail --max-time 10 --cacert "$SA_DIR/ca.crt" -H "@$fn_header" \
		-o "$1" "$fn_server/api/v1/nodes?fieldSelector=metadata.name%3D$NODE_NAME" || fn_rc=$?
	rm -f "$fn_header"
	return "$fn_rc"
}

# Prints this node's podCIDRs, one a line, waiting up to VELO_WAIT_SECONDS for the
# controller-manager to allocate them.
pod_cidrs() {
	if [ -n "$VELO_POD_CIDRS" ]; then
		printf '%s\n' "$VELO_POD_CIDRS" | tr ',' '\n' | sed '/^$/d'
		return 0
	fi
	pc_node=$VELO_STAGE_DIR/node.json
	pc_waited=0
	while :; do
		pc_cidrs=
		if [ -n "$VELO_NODE_JSON" ]; then
			pc_cidrs=$(pod_cidrs_from_json <"$VELO_NODE_JSON") ||
				die "$VELO_NODE_JSON: not a Node or NodeList document"
		elif fetch_node "$pc_node"; then
			pc_cidrs=$(pod_cidrs_from_json <"$pc_node") ||
				die "the API answered something that is not a NodeList"
		fi
		rm -f "$pc_node"
		if [ -n "$pc_cidrs" ]; then
			printf '%s\n' "$pc_cidrs"
			return 0
		fi
		[ "$pc_waited" -lt "$VELO_WAIT_SECONDS" ] ||
			die "node ${NODE_NAME:-?} has no spec.podCIDRs after ${VELO_WAIT_SECONDS}s" \
				"(is the controller-manager run with --allocate-node-cidrs?)"
		log "waiting for node ${NODE_NAME:-?} to get spec.podCIDRs"
		sleep 2
		pc_waited=$((pc_waited + 2))
	done
}

# render_conflist CIDRS OUT: the template with this node's podCIDRs as the ranges of velo's IPAM
# or host-local (one range set per CIDR, so dual stack gives one IPv4 and one IPv6 address) and
# the kubeconfig path.
render_conflist() {
	[ -r "$VELO_CONF_TEMPLATE" ] || die "$VELO_CONF_TEMPLATE: not readable"
	for rc_cidr in $1; do
		printf '%s\n' "$rc_cidr" | grep -Eq '^[0-9A-Fa-f.:]+/[0-9]{1,3}$' ||
			die "podCIDR \"$rc_cidr\" is not a CIDR"
	done
	jq -e '[.plugins[]? | select(.type == "velo")] | length == 1' "$VELO_CONF_TEMPLATE" \
		>/dev/null || die "$VELO_CONF_TEMPLATE: needs a plugins list with one \"type\": \"velo\""
	printf '%s\n' "$1" | jq -R . | jq -s \
		--arg kubeconfig "$HOST_CNI_NET_DIR/$VELO_KUBECONFIG_DIR/kubeconfig" \
		--slurpfile template "$VELO_CONF_TEMPLATE" '. as $cidrs | $template[0]
		| .plugins |= map(if .type == "velo" then
			.kubeconfig = $kubeconfig
			| if ((.ipam.type // "") | IN("velo", "host-local")) then
				.ipam.ranges = [$cidrs[] | [{subnet: .}]]
			else . end
		else . end)' >"$2"
}

cmd_install() {
	mkdir -p "$VELO_STAGE_DIR"
	install_binaries
	write_kubeconfig
	ci_cidrs=$(pod_cidrs)
	log "node ${NODE_NAME:-?} podCIDRs: $(printf '%s' "$ci_cidrs" | tr '\n' ' ')"
	render_conflist "$ci_cidrs" "$VELO_STAGE_DIR/$VELO_CONF_NAME.new"
	mv -f "$VELO_STAGE_DIR/$VELO_CONF_NAME.new" "$VELO_STAGE_DIR/$VELO_CONF_NAME"
	log "staged $VELO_STAGE_DIR/$VELO_CONF_NAME; activate writes it once velod is ready"
}

# Sleeps in the background so that SIGTERM ends the wait at once.
pause() {
	sleep "$1" &
	wait $! || true
}

wait_ready() {
	wr_waited=0
	until curl -fsS --max-time 2 -o /dev/null "$VELO_HEALTHZ_URL" 2>/dev/null; do
		if [ "$VELO_READY_TIMEOUT" -gt 0 ] && [ "$wr_waited" -ge "$VELO_READY_TIMEOUT" ]; then
			die "velod not ready at $VELO_HEALTHZ_URL after ${VELO_READY_TIMEOUT}s"
		fi
		[ $((wr_waited % 30)) -ne 0 ] || log "waiting for velod at $VELO_HEALTHZ_URL"
		pause 1
		wr_waited=$((wr_waited + 1))
	done
}

# activate_conflist STAGED: the target on tmpfs gets STAGED's content, then the conf dir's link
# is renamed in fresh, unless both were already as they are (no runtime reload for nothing).
activate_conflist() {
	ac_target=$VELO_CONF_TARGET_DIR/$VELO_CONF_NAME
	ac_link=$CNI_NET_DIR/$VELO_CONF_NAME
	mkdir -p "$VELO_CONF_TARGET_DIR" "$CNI_NET_DIR"
	[ "$(stat -f -c %T "$VELO_CONF_TARGET_DIR")" = tmpfs ] ||
		log "warning: $VELO_CONF_TARGET_DIR is not on tmpfs: after a reboot the node's" \
			"network may turn Ready before velod's routes are in"
	ac_current=0
	if cmp -s "$1" "$ac_target" && [ -L "$ac_link" ] &&
		[ "$(readlink "$ac_link")" = "$HOST_CONF_TARGET_DIR/$VELO_CONF_NAME" ]; then
		ac_current=1
	fi
	write_atomic "$1" "$ac_target" 0644
	if [ "$ac_current" = 1 ]; then
		log "velod is ready: $ac_link was current"
		return 0
	fi
	link_atomic "$HOST_CONF_TARGET_DIR/$VELO_CONF_NAME" "$ac_link"
	log "velod is ready: wrote $ac_target, linked from $ac_link"
}

cmd_activate() {
	trap 'log "terminated"; exit 0' TERM INT
	staged=$VELO_STAGE_DIR/$VELO_CONF_NAME
	[ -r "$staged" ] || die "$staged: not staged (did the install init container run?)"
	wait_ready
	activate_conflist "$staged"
	[ "$VELO_ONESHOT" = 1 ] && return 0
	# Projected service-account tokens expire (the kubelet rotates the file): keep the
	# plugin's copy current.
	while :; do
		pause "$VELO_REFRESH_SECONDS"
		(write_kubeconfig) || log "warning: kubeconfig refresh failed; retrying"
	done
}

cmd_uninstall() {
	rm -f "$CNI_NET_DIR/$VELO_CONF_NAME" "$VELO_CONF_TARGET_DIR/$VELO_CONF_NAME"
	rm -rf "${CNI_NET_DIR:?}/${VELO_KUBECONFIG_DIR:?}"
	for bin in $VELO_BINARIES; do
		rm -f "$CNI_BIN_DIR/$bin"
	done
	log "removed velo's conflist and its link, kubeconfig and binaries"
}

cmd_mount_bpffs() {
	if [ "$(stat -f -c %T "$VELO_BPFFS")" = bpf_fs ]; then
		log "$VELO_BPFFS is a bpffs already"
		return 0
	fi
	mount -t bpf bpf "$VELO_BPFFS"
	log "mounted bpffs at $VELO_BPFFS"
}

case "${1:-}" in
install) cmd_install ;;
activate) cmd_activate ;;
uninstall) cmd_uninstall ;;
mount-bpffs) cmd_mount_bpffs ;;
*)
	printf 'usage: %s install|activate|uninstall|mount-bpffs\n' "$0" >&2
	exit 2
	;;
esac
