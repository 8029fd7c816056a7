#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The NetworkPolicy truth table's expected verdicts (tests/node/policy/policy_truth.bats), computed
from the same policy file velod reads by a small model of networking.k8s.io/v1 NetworkPolicy and
policy.networking.k8s.io/v1beta1 ClusterNetworkPolicy written from the API reference alone,
sharing no code with velod.

    policy_model.py [--node-addr ADDR] verdicts POLICY_FILE < PROBES     "ID allow|deny" lines
    policy_model.py [--node-addr ADDR] check POLICY_FILE PROBES RESULTS CASE

POLICY_FILE: {"namespaces": [...], "pods": [...], "networkPolicies": [...],
"clusterNetworkPolicies": [...]}. Each probe line is
"ID SRC_NS/SRC_POD DST_NS/DST_POD DST_ADDR PROTO PORT"; SRC may be an address instead
("ip:10.98.0.1", a client outside the grid); the node's own address (--node-addr) is always
let in, as velo lets the kubelet's probes in, and so is a pod's traffic to itself. check compares with the prober's "ID VERDICT"
lines (RESULTS: ok is a connection, anything else none) and prints, per protocol and port that
differ, the matrix of sources x destinations (exit 1). A connection is allowed
when the source's egress and the destination's ingress both allow it: a pod no policy of its
namespace selects for a direction is not isolated in it; policies are additive; peers match by
podSelector (in the policy's namespace), namespaceSelector, both in one peer (the pods the first
selects in the namespaces the second selects), or ipBlock (cidr minus except, matched against
the other end's address); ports by number, by name (the destination pod's container port of
that name and protocol) and with endPort as a range; protocol TCP when absent. Tiers: a side's
Admin ClusterNetworkPolicies first (lowest priority, then name, then rule order; the first rule
whose peer and protocol match decides: Accept or Deny, Pass hands over), then its
NetworkPolicies if any select it, else its Baseline ones (only Deny drops).
"""
import ipaddress
import json
import sys

NS_LABEL = "kubernetes.io/metadata.name"


def selects(selector, labels):
    """A LabelSelector: matchLabels and matchExpressions ANDed; {} selects everything."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def policy_types(policy):
    spec = policy["spec"]
    if spec.get("policyTypes"):
        return spec["policyTypes"]
    return ["Ingress"] + (["Egress"] if spec.get("egress") else [])


class World:
    def __init__(self, data):
        self.ns_labels = {}
        for ns in data.get("namespaces", []):
            name = ns["metadata"]["name"]
            labels = dict(ns["metadata"].get("labels") or {})
            labels[NS_LABEL] = name
            self.ns_labels[name] = labels
        self.pods = {}
        for pod in data.get("pods", []):
            meta = pod["metadata"]
            self.pods[meta.get("namespace", "default") + "/" + meta["name"]] = pod
        self.policies = data.get("networkPolicies", [])
        self.cnps = data.get("clusterNetworkPolicies", [])

    def pod_labels(self, key):
        return self.pods[key]["metadata"].get("labels") or {}

    def pod_ns(self, key):
        return key.split("/", 1)[0]

    def policies_for(self, key, direction):
        """The policies of the pod's namespace that select it for direction."""
        return [p for p in self.policies
                if p["metadata"].get("namespace", "default") == self.pod_ns(key)
                and selects(p["spec"].get("podSelector", {}), self.pod_labels(key))
                and direction in policy_types(p)]

    def peer_matches(self, peer, policy_ns, other, other_addr):
        """other: a pod key, or None for an address outside every pod."""
        if "ipBlock" in peer:
            block = peer["ipBlock"]
            addr = ipaddress.ip_address(other_addr)
            net = ipaddress.ip_network(block["cidr"], strict=False)
            if addr.version != net.version or addr not in net:
                return False
            return not any(addr in ipaddress.ip_network(e, strict=False)
                           for e in block.get("except") or [] if
                           ipaddress.ip_network(e, strict=False).version == addr.version)
        if other is None:
            return False
        pod_sel, ns_sel = peer.get("podSelector"), peer.get("namespaceSelector")
        ns = self.pod_ns(other)
        if ns_sel is not None:
            if not selects(ns_sel, self.ns_labels.get(ns, {NS_LABEL: ns})):
                return False
        elif ns != policy_ns:
            return False
        return pod_sel is None or selects(pod_sel, self.pod_labels(other))

    def port_matches(self, ports, dst, proto, port):
        if not ports:
            return True
        for rule in ports:
            if rule.get("protocol", "TCP") != proto:
                continue
            want = rule.get("port")
            if want is None:
                return True
            if isinstance(want, str):
                if dst is None:
                    continue
                for container in self.pods[dst]["spec"].get("containers", []):
                    for cport in container.get("ports") or []:
                        if (cport.get("name") == want and
                                cport.get("protocol", "TCP") == proto and
                                cport["containerPort"] == port):
                            return True
                continue
            if want <= port <= rule.get("endPort", want):
                return True
        return False

    def cnp_selects(self, selector_pair, key):
        """A subject or a pods peer ({namespaces} or {pods: {namespaceSelector, podSelector}})."""
        ns = self.pod_ns(key)
        ns_labels = self.ns_labels.get(ns, {NS_LABEL: ns})
        if "namespaces" in selector_pair:
            return selects(selector_pair["namespaces"], ns_labels)
        pods = selector_pair.get("pods")
        if pods is None:
            return False
        return (selects(pods.get("namespaceSelector", {}), ns_labels) and
                selects(pods.get("podSelector", {}), self.pod_labels(key)))

    def cnp_peer_matches(self, peer, other, other_addr):
        if "networks" in peer:
            addr = ipaddress.ip_address(other_addr)
            return any(addr.version == net.version and addr in net for net in
                       (ipaddress.ip_network(n, strict=False) for n in peer["networks"]))
        return other is not None and self.cnp_selects(peer, other)

    def cnp_ports_match(self, protocols, dst, proto, port):
        if not protocols:
            return True
        for item in protocols:
            name = item.get("destinationNamedPort")
            if name is not None:
                if dst is not None and any(
                        cport.get("name") == name and cport.get("protocol", "TCP") == proto and
                        cport["containerPort"] == port
                        for container in self.pods[dst]["spec"].get("containers", [])
                        for cport in container.get("ports") or []):
                    return True
                continue
            match = item.get(proto.lower())
            if match is None:
                continue
            want = match.get("destinationPort")
            if want is None:
                return True
            low, high = ((want["range"]["start"], want["range"]["end"]) if "range" in want
                         else (want["number"], want["number"]))
            if low <= port <= high:
                return True
        return False

    def tier_action(self, tier, subject, direction, other, other_addr, dst, proto, port):
        """The action of the tier's first rule that matches (by priority, then name, then
        the rule's place), or None."""
        key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        chosen = sorted((c for c in self.cnps if c["spec"]["tier"] == tier and
                         self.cnp_selects(c["spec"]["subject"], subject)),
                        key=lambda c: (c["spec"]["priority"], c["metadata"]["name"]))
        for cnp in chosen:
            for rule in cnp["spec"].get(key) or []:
                if (any(self.cnp_peer_matches(peer, other, other_addr)
                        for peer in rule[peers_key]) and
                        self.cnp_ports_match(rule.get("protocols"), dst, proto, port)):
                    return rule["action"]
        return None

    def allowed(self, subject, direction, other, other_addr, dst, proto, port):
        """Whether subject's policies for direction let it talk to other: the Admin tier's
        Accept or Deny, else NetworkPolicy when one selects it, else the Baseline tier's."""
        args = (subject, direction, other, other_addr, dst, proto, port)
        admin = self.tier_action("Admin", *args)
        if admin in ("Accept", "Deny"):
            return admin == "Accept"
        policies = self.policies_for(subject, direction)
        if not policies:
            return self.tier_action("Baseline", *args) != "Deny"
        key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        for policy in policies:
            for rule in policy["spec"].get(key) or []:
                peers = rule.get(peers_key) or []
                if peers and not any(
                        self.peer_matches(peer, self.pod_ns(subject), other, other_addr)
                        for peer in peers):
                    continue
                if self.port_matches(rule.get("ports"), dst, proto, port):
                    return True
        return False


def expected(world, node_addr, fields):
    """allow or deny for one probe line's fields (without its verdict)."""
    src, dst, dst_addr, proto, port = fields
    port = int(port)
    proto = proto.upper()
    if src.startswith("ip:"):
        src_addr, src = src[3:], None
    else:
        src_addr = world.pods[src]["status"]["podIP"]
    # The node's own address is the kubelet's (probes): velo always lets it in. A pod's
    # traffic to itself never leaves it, so no hook of any CNI sees it.
    if src_addr == node_addr or src == dst:
        return "allow"
    ok = src is None or world.allowed(src, "Egress", dst, dst_addr, dst, proto, port)
    ok = ok and world.allowed(dst, "Ingress", src, src_addr, dst, proto, port)
    return "allow" if ok else "deny"


def check(world, node_addr, probes_path, results_path, name):
    """Compares the prober's verdicts with the model's; prints diff matrices; 0 when equal."""
    results = {}
    with open(results_path) as f:
        for line in f:
            fields = line.split()
            if len(fields) == 2:
                results[fields[0]] = fields[1]
    cells, wrong = {}, 0
    with open(probes_path) as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            want = expected(world, node_addr, fields[1:])
            got = results.get(fields[0], "missing")
            src = fields[1] if not fields[1].startswith("ip:") else "node"
            table = fields[4] + "/" + fields[5]
            good = (got == "ok") == (want == "allow")
            wrong += not good
            cells.setdefault(table, {})[(src, fields[2])] = (want, got, good)
    total = sum(len(t) for t in cells.values())
    print("case %s: %d probes, %d differ from the model" % (name, total, wrong))
    if not wrong:
        return 0
    print("  cell: . allowed, X denied (as expected); + allowed but should be denied,"
          " - denied but should be allowed (observed verdict after the sign); ~ not probed")
    for table, cell in sorted(cells.items()):
        if all(c[2] for c in cell.values()):
            continue
        srcs = sorted({k[0] for k in cell}, key=lambda s: (s == "node", s))
        dsts = sorted({k[1] for k in cell})
        print("  %s   (rows: from, columns: to)" % table)
        print("  %-6s " % "" + " ".join("%-9s" % d for d in dsts))
        for s in srcs:
            row = []
            for d in dsts:
                if (s, d) not in cell:
                    row.append("~")  # not probed (a pod to its own ClusterIP)
                    continue
                want, got, good = cell[(s, d)]
                if good:
                    row.append("." if want == "allow" else "X")
                else:
                    row.append(("+" if want == "deny" else "-") + got)
            print("  %-6s " % s + " ".join("%-9s" % c for c in row))
    return 1


def main():
    args = sys.argv[1:]
    node_addr = None
    if args[:1] == ["--node-addr"]:
        node_addr, args = args[1], args[2:]
    with open(args[1]) as f:
        world = World(json.load(f))
    if args[0] == "verdicts":
        for line in sys.stdin:
            fields = line.split()
            if fields:
                print(fields[0], expected(world, node_addr, fields[1:]))
        return 0
    if args[0] == "check":
        return check(world, node_addr, args[2], args[3], args[4])
    sys.exit("usage: policy_model.py [--node-addr ADDR] verdicts|check POLICY_FILE ...")


if __name__ == "__main__":
    sys.exit(main())
