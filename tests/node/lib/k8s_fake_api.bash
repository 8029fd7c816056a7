# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
#
# A fake Kubernetes API for velod's watches, shared by k8s_nodes.bats, uplink_xdp.bats,
# services_watch.bats and policy_switch.bats: python3 serving LIST and WATCH of Nodes,
# Services, EndpointSlices, Namespaces, Pods, NetworkPolicies and ServiceCIDRs over HTTPS (a
# CA made here by openssl) on the loopback of a netns the caller made, driven through files in
# $K8_API. Load after lib. The caller sets K8_API (an empty directory under $VT), K8_NODE (the
# netns the server listens in) and K8_PORT, then calls k8_certs, appends events (k8_event,
# k8_object) and starts k8_server.

# A CA, a server certificate for 127.0.0.1, the token, a kubeconfig as install-cni writes one
# (JSON; relative paths resolve against its directory).
k8_certs() {
	local key="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
	printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
		>"$K8_API/ext"
	# shellcheck disable=SC2086 # $key is several options
	(cd "$K8_API" &&
		openssl req -x509 $key -keyout ca.key -out ca.crt -days 1 -subj /CN=vt-ca 2>/dev/null &&
		openssl req $key -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null &&
		openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt \
			-days 1 -extfile ext 2>/dev/null)
	echo vt-token-one >"$K8_API/accepted-token"
	echo vt-token-one >"$K8_API/token"
	jq -n --arg s "https://127.0.0.1:$K8_PORT" '{apiVersion: "v1", kind: "Config",
		clusters: [{name: "vt", cluster: {server: $s, "certificate-authority": "ca.crt"}}],
		users: [{name: "vt", user: {tokenFile: "token"}}],
		contexts: [{name: "vt", context: {cluster: "vt", user: "vt"}}],
		"current-context": "vt"}' >"$K8_API/kubeconfig"
	: >"$K8_API/events"
	: >"$K8_API/writes"
}

# The fake API server. State: the event log ($K8_API/events, one {"type","object"} per line;
# line N has resourceVersion 100+N, one sequence for every kind, as etcd has it). A resource's
# LIST replays the lines of its kind (the object's "kind"; Node when absent; pages of 2, with a
# continue token that needs escaping); WATCH streams the lines of its kind after its
# resourceVersion, a BOOKMARK now and then. Objects are keyed by namespace and name.
# Control files: accepted-token (anything else gets 401), fail-list (every LIST answers 500),
# fail-list-RESOURCE (that resource's LIST answers 500: fail-list-endpointslices),
# unserved-RESOURCE (404 to both, as an older Kubernetes: unserved-servicecidrs),
# forbid-RESOURCE (403 to both, as RBAC without it),
# compacted (a watch from an older resourceVersion gets HTTP 410), drop (a new number ends
# every open watch), expire (a new number: open watches send an ERROR 410 event and end).
# Writes: POST and PATCH of core/v1 Events (/api/v1/namespaces/NS/events[/NAME]) are kept in
# memory (a second POST of a name gets 409, a PATCH of an unknown one 404) and appended to
# $K8_API/writes (one {"method","path","body"} per line); forbid-events answers them 403.
k8_server() {
	cat >"$K8_API/server.py" <<'PY'
import base64, http.server, json, os, ssl, sys, time, urllib.parse

d = sys.argv[1]
BASE = 100
MADE = {}  # (namespace, name) -> the Event posted
KINDS = {"/api/v1/nodes": "Node", "/api/v1/services": "Service",
         "/apis/discovery.k8s.io/v1/endpointslices": "EndpointSlice",
         "/api/v1/namespaces": "Namespace", "/api/v1/pods": "Pod",
         "/apis/networking.k8s.io/v1/networkpolicies": "NetworkPolicy",
         "/apis/networking.k8s.io/v1/servicecidrs": "ServiceCIDR"}

def text(name, default=""):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return default

def events():
    with open(os.path.join(d, "events")) as f:
        return [json.loads(line) for line in f if line.strip()]

def kind_of(event):
    return event["object"].get("kind", "Node")

def key(obj):
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])

def log(line):
    with open(os.path.join(d, "requests.log"), "a") as f:
        f.write(line + "\n")

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # a watch ends when the connection closes

    def answer(self, code, doc):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def status(self, code, reason, message):
        self.answer(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "reason": reason, "message": message, "code": code})

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        auth = self.headers.get("Authorization", "")
        log("%s %s" % (auth, self.path))
        if auth != "Bearer " + text("accepted-token"):
            return self.status(401, "Unauthorized", "Unauthorized")
        kind = KINDS.get(url.path)
        if not kind or os.path.exists(os.path.join(d, "unserved-" + url.path.split("/")[-1])):
            return self.status(404, "NotFound", "the server could not find the requested resource")
        if os.path.exists(os.path.join(d, "forbid-" + url.path.split("/")[-1])):
            return self.status(403, "Forbidden", "%s is forbidden" % url.path.split("/")[-1])
        if query.get("watch") == "1":
            return self.watch(kind, int(query.get("resourceVersion", "0")))
        if os.path.exists(os.path.join(d, "fail-list")) or \
                os.path.exists(os.path.join(d, "fail-list-" + url.path.split("/")[-1])):
            return self.status(500, "InternalError", "etcd is having a bad day")
        self.list(kind, query.get("continue"))

    def write(self, method):
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/")
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        auth = self.headers.get("Authorization", "")
        log("%s %s %s" % (auth, method, self.path))
        if auth != "Bearer " + text("accepted-token"):
            return self.status(401, "Unauthorized", "Unauthorized")
        if len(parts) not in (6, 7) or parts[1:4] != ["api", "v1", "namespaces"] or \
                parts[5] != "events" or (method == "PATCH") != (len(parts) == 7):
            return self.status(405, "MethodNotAllowed", "not an Event write")
        if os.path.exists(os.path.join(d, "forbid-events")):
            return self.status(403, "Forbidden", "events is forbidden")
        with open(os.path.join(d, "writes"), "a") as f:
            f.write(json.dumps({"method": method, "path": url.path, "body": body}) + "\n")
        if method == "POST":
            name = (parts[4], body.get("metadata", {}).get("name", ""))
            if name in MADE:
                return self.status(409, "AlreadyExists", "events %s already exists" % name[1])
            MADE[name] = body
            return self.answer(201, body)
        if (parts[4], parts[6]) not in MADE:
            return self.status(404, "NotFound", "events %s not found" % parts[6])
        MADE[(parts[4], parts[6])].update(body)
        self.answer(200, MADE[(parts[4], parts[6])])

    def do_POST(self):
        self.write("POST")

    def do_PATCH(self):
        self.write("PATCH")

    def list(self, kind, token):
        log_events = events()
        rv, offset = BASE + len(log_events), 0
        if token:
            rv, offset = map(int, base64.b64decode(token).decode().split(":"))
            log_events = log_events[:rv - BASE]
        objects = {}
        for i, event in enumerate(log_events):
            if kind_of(event) != kind:
                continue
            obj = dict(event["object"], metadata=dict(event["object"]["metadata"],
                                                      resourceVersion=str(BASE + i + 1)))
            if event["type"] == "DELETED":
                objects.pop(key(obj), None)
            else:
                objects[key(obj)] = obj
        items = [objects[k] for k in sorted(objects)]
        meta = {"resourceVersion": str(rv)}
        if offset + 2 < len(items):
            # Base64 with "=" padding: velod must escape the token.
            meta["continue"] = base64.b64encode(b"%d:%d" % (rv, offset + 2)).decode()
        self.answer(200, {"kind": kind + "List", "apiVersion": "v1", "metadata": meta,
                          "items": items[offset:offset + 2]})

    def send_line(self, doc):
        self.wfile.write(json.dumps(doc).encode() + b"\n")
        self.wfile.flush()

    def watch(self, kind, rv):
        if rv < int(text("compacted", "0")):
            return self.status(410, "Expired", "too old resource version: %d" % rv)
        drop, expire = text("drop", "0"), text("expire", "0")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.flush()
        seen, last_bookmark = rv - BASE, time.time()
        try:
            while True:
                if text("drop", "0") != drop:
                    return
                if text("expire", "0") != expire:
                    return self.send_line({"type": "ERROR", "object": {
                        "kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "Expired", "code": 410,
                        "message": "too old resource version"}})
                log_events = events()
                while seen < len(log_events):
                    event = log_events[seen]
                    seen += 1
                    if kind_of(event) != kind:
                        continue
                    obj = dict(event["object"], metadata=dict(
                        event["object"]["metadata"], resourceVersion=str(BASE + seen)))
                    self.send_line({"type": event["type"], "object": obj})
                if time.time() - last_bookmark > 1:
                    last_bookmark = time.time()
                    self.send_line({"type": "BOOKMARK", "object": {"kind": kind,
                        "apiVersion": "v1", "metadata": {"resourceVersion": str(BASE + seen)}}})
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            return

    def log_message(self, *args):
        pass

srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), H)
srv.daemon_threads = True
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(d, "srv.crt"), os.path.join(d, "srv.key"))
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
open(os.path.join(d, "ready"), "w").close()
srv.serve_forever()
PY
	# nsenter itself in the background (not a function, which would fork a subshell), and
	# python exec'd by it, so $! is the server.
	nsenter --net="/run/netns/$K8_NODE" python3 "$K8_API/server.py" "$K8_API" "$K8_PORT" \
		2>>"$K8_API/server.log" &
	VT_PIDS+=($!)
	for _ in $(seq 50); do
		[ -e "$K8_API/ready" ] && return 0
		sleep 0.1
	done
	cat "$K8_API/server.log"
	return 1
}

# k8_node NAME "IP..." "CIDR...": a Node object as the API has it (Hostname and ExternalIP
# addresses too, which velod must ignore).
k8_node() {
	jq -cn --arg name "$1" --arg ips "$2" --arg cidrs "$3" '
		($ips | split(" ") | map(select(. != ""))) as $ips |
		($cidrs | split(" ") | map(select(. != ""))) as $cidrs |
		{kind: "Node", apiVersion: "v1", metadata: {name: $name, labels: {"vt": "1"}},
		 spec: ({podCIDRs: $cidrs} + (if $cidrs == [] then {} else {podCIDR: $cidrs[0]} end)),
		 status: {addresses: ([{type: "Hostname", address: $name},
			{type: "ExternalIP", address: "203.0.113.77"}] +
			($ips | map({type: "InternalIP", address: .})))}}'
}

# k8_event TYPE NAME "IP..." "CIDR...": appends a watch event to the server's log.
k8_event() {
	jq -cn --arg t "$1" --argjson o "$(k8_node "$2" "$3" "$4")" '{type: $t, object: $o}' \
		>>"$K8_API/events"
}

# k8_object TYPE OBJECT_JSON: appends a watch event of any kind (the object carries its "kind").
k8_object() {
	jq -cn --arg t "$1" --argjson o "$2" '{type: $t, object: $o}' >>"$K8_API/events"
}

# k8_bump FILE: writes the next number to a control file.
k8_bump() { echo $(($(cat "$K8_API/$1" 2>/dev/null || echo 0) + 1)) >"$K8_API/$1"; }
