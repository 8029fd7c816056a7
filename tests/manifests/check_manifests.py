#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Structural checks of manifests/velo.yaml and the kind config, offline (no cluster).

Usage: check_manifests.py CHECK [--manifest FILE] [--kind FILE] [--velod-config-c FILE]
                          [--readme FILE]
CHECK is one of: kinds rbac daemonset configmap readme kind crd. Prints one line per problem on
stderr and exits 1 if there is any; exits 0 silently otherwise.
"""
import argparse
import hashlib
import ipaddress
import json
import re
import sys

import yaml

NAMESPACE = "velo-system"
NAMESPACED = {"ServiceAccount", "ConfigMap", "DaemonSet"}
READ_VERBS = {"get", "list", "watch"}
# What velo needs and nothing more (docs/kubernetes.md, "RBAC").
RBAC_WANTED = {("", "pods"): {"get", "list", "watch"}, ("", "nodes"): {"list", "watch"},
               ("", "services"): {"list", "watch"}, ("", "namespaces"): {"list", "watch"},
               ("discovery.k8s.io", "endpointslices"): {"list", "watch"},
               ("networking.k8s.io", "networkpolicies"): {"list", "watch"},
               ("networking.k8s.io", "servicecidrs"): {"list", "watch"},
               ("policy.networking.k8s.io", "clusternetworkpolicies"): {"get", "list", "watch"},
               ("", "events"): {"create", "patch"}}
# The only writes: velod's Events (core/v1, what kubectl get events and describe read).
WRITES_WANTED = {("", "events"): {"create", "patch"}}
# The runtimeConfig keys velo reads: a runtime passes only the capabilities an entry declares.
VELO_CAPABILITIES = ("io.kubernetes.cri.pod-annotations", "cgroupPath", "bandwidth", "portMappings")
# Chained after velo, each with the capability it acts on.
CHAINED = {"bandwidth": "bandwidth", "portmap": "portMappings"}

problems = []


def problem(text):
    problems.append(text)


def load_all(path):
    with open(path, encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def by_kind(docs, kind):
    return [doc for doc in docs if doc.get("kind") == kind]


def one(docs, kind):
    found = by_kind(docs, kind)
    if len(found) != 1:
        problem(f"want one {kind}, found {len(found)}")
        return {}
    return found[0]


def check_kinds(docs, _args):
    for kind in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                 "ConfigMap", "DaemonSet"):
        one(docs, kind)
    for doc in docs:
        if doc.get("kind") in NAMESPACED and doc["metadata"].get("namespace") != NAMESPACE:
            problem(f"{doc['kind']} {doc['metadata'].get('name')} not in {NAMESPACE}")
    namespace = one(docs, "Namespace")
    labels = namespace.get("metadata", {}).get("labels", {})
    if labels.get("pod-security.kubernetes.io/enforce") != "privileged":
        problem("Namespace: Pod Security must enforce 'privileged' for velod")


def check_rbac(docs, _args):
    role = one(docs, "ClusterRole")
    granted = {}
    for rule in role.get("rules", []):
        for field in ("apiGroups", "resources", "verbs"):
            if "*" in rule.get(field, []):
                problem(f"ClusterRole: wildcard in {field}")
        for key in ("nonResourceURLs", "resourceNames"):
            if key in rule:
                problem(f"ClusterRole: unexpected {key}")
        for group in rule.get("apiGroups", []):
            for resource in rule.get("resources", []):
                if resource in ("secrets", "configmaps") or "/" in resource:
                    problem(f"ClusterRole: no access to {resource} is needed")
                verbs = set(rule.get("verbs", []))
                writes = verbs - READ_VERBS - WRITES_WANTED.get((group, resource), set())
                if writes:
                    problem(f"ClusterRole: {resource}: write verbs {sorted(writes)}")
                granted.setdefault((group, resource), set()).update(verbs)
    if granted != RBAC_WANTED:
        problem(f"ClusterRole grants {sorted((k, sorted(v)) for k, v in granted.items())}, "
                f"want {sorted((k, sorted(v)) for k, v in RBAC_WANTED.items())}")
    binding = one(docs, "ClusterRoleBinding")
    account = one(docs, "ServiceAccount")
    ref = binding.get("roleRef", {})
    if ref.get("kind") != "ClusterRole" or ref.get("name") != role.get("metadata", {}).get("name"):
        problem("ClusterRoleBinding does not bind the ClusterRole")
    subjects = [(s.get("kind"), s.get("name"), s.get("namespace"))
                for s in binding.get("subjects", [])]
    want = ("ServiceAccount", account.get("metadata", {}).get("name"), NAMESPACE)
    if subjects != [want]:
        problem(f"ClusterRoleBinding subjects {subjects}, want [{want}]")
    for doc in docs:
        if doc.get("kind") in ("Role", "RoleBinding", "Secret"):
            problem(f"unexpected {doc['kind']}")


def container(spec, name, init=False):
    for item in spec.get("initContainers" if init else "containers", []):
        if item.get("name") == name:
            return item
    problem(f"DaemonSet: no {'init ' if init else ''}container {name}")
    return {}


def mount(item, path):
    for volume_mount in item.get("volumeMounts", []):
        if volume_mount.get("mountPath") == path:
            return volume_mount
    problem(f"container {item.get('name')}: nothing mounted at {path}")
    return {}


def host_path(spec, volume_name):
    for volume in spec.get("volumes", []):
        if volume.get("name") == volume_name:
            return volume.get("hostPath", {}).get("path")
    return None


def env_from_node_name(item):
    for env in item.get("env", []):
        if env.get("name") == "NODE_NAME":
            return env.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName"
    return False


def check_daemonset(docs, _args):
    daemonset = one(docs, "DaemonSet")
    spec = daemonset.get("spec", {}).get("template", {}).get("spec", {})
    if spec.get("hostNetwork") is not True:
        problem("DaemonSet: hostNetwork must be true")
    if spec.get("priorityClassName") != "system-node-critical":
        problem("DaemonSet: priorityClassName must be system-node-critical")
    if {"operator": "Exists"} not in spec.get("tolerations", []):
        problem("DaemonSet: needs a toleration {operator: Exists} (tolerate every taint)")
    account = one(docs, "ServiceAccount").get("metadata", {}).get("name")
    if spec.get("serviceAccountName") != account:
        problem("DaemonSet: serviceAccountName is not velo's ServiceAccount")

    everything = spec.get("initContainers", []) + spec.get("containers", [])
    for item in everything:
        for volume_mount in item.get("volumeMounts", []):
            if volume_mount.get("mountPropagation") == "Bidirectional" and \
                    item.get("securityContext", {}).get("privileged") is not True:
                problem(f"container {item.get('name')}: Bidirectional needs privileged")

    velod = container(spec, "velod")
    bpffs = mount(velod, "/sys/fs/bpf")
    if bpffs.get("mountPropagation") != "Bidirectional":
        problem("velod: /sys/fs/bpf must have mountPropagation Bidirectional")
    if host_path(spec, bpffs.get("name")) != "/sys/fs/bpf":
        problem("velod: /sys/fs/bpf must be the host's /sys/fs/bpf")
    netns = mount(velod, "/run/netns")
    if netns.get("mountPropagation") != "HostToContainer" or \
            host_path(spec, netns.get("name")) != "/run/netns":
        problem("velod: the host's /run/netns needs HostToContainer (pods' netns mounts)")
    probe = velod.get("livenessProbe", {}).get("httpGet", {})
    if probe.get("path") != "/healthz" or probe.get("host") != "127.0.0.1" \
            or probe.get("port") != 9099:
        problem(f"velod: liveness must GET 127.0.0.1:9099/healthz, has {probe}")
    if "velod" not in " ".join(velod.get("command", [])):
        problem("velod container does not run velod")

    install = container(spec, "install-cni", init=True)
    if install.get("command", [])[-1:] != ["install"]:
        problem("install-cni: must run install-cni.sh install")
    if not env_from_node_name(install):
        problem("install-cni: NODE_NAME must come from spec.nodeName")
    for path, host in (("/host/opt/cni/bin", "/opt/cni/bin"),
                       ("/host/etc/cni/net.d", "/etc/cni/net.d")):
        if host_path(spec, mount(install, path).get("name")) != host:
            problem(f"install-cni: {path} must be the host's {host}")
    conf = container(spec, "cni-conf")
    if conf.get("command", [])[-1:] != ["activate"]:
        problem("cni-conf: must run install-cni.sh activate")
    if host_path(spec, mount(conf, "/host/etc/cni/net.d").get("name")) != "/etc/cni/net.d":
        problem("cni-conf: /host/etc/cni/net.d must be the host's /etc/cni/net.d")
    # The conflist's link target (install-cni.sh's default) must be the host's /run/velo,
    # a tmpfs a reboot empties: else the network would be Ready before velod's routes.
    if host_path(spec, mount(conf, "/run/velo").get("name")) != "/run/velo":
        problem("cni-conf: /run/velo must be the host's /run/velo (the conflist's tmpfs)")
    stage = mount(install, "/run/velo-install").get("name")
    if stage is None or mount(conf, "/run/velo-install").get("name") != stage:
        problem("install-cni and cni-conf must share the staging volume")
    images = {item.get("image") for item in everything}
    if len(images) != 1:
        problem(f"DaemonSet: one image for every container, found {sorted(images)}")


def velod_keys(path):
    """The top-level keys velod's config accepts, read from its key table's source."""
    try:
        with open(path, encoding="utf-8") as stream:
            return set(re.findall(r'\.(?:key|alias) = "([A-Za-z]+)"', stream.read()))
    except FileNotFoundError:
        return None


def check_conflist(where, conflist):
    """velo declares every capability it reads; bandwidth and portmap follow it."""
    types = [p.get("type") for p in conflist.get("plugins", [])]
    if "velo" not in types:
        problem(f"{where}: no plugin of type velo")
        return
    velo = conflist["plugins"][types.index("velo")]
    caps = velo.get("capabilities", {})
    for cap in VELO_CAPABILITIES:
        if caps.get(cap) is not True:
            problem(f"{where}: velo must declare capability {cap}")
    for plugin, cap in CHAINED.items():
        if plugin not in types or types.index(plugin) < types.index("velo"):
            problem(f"{where}: the {plugin} plugin must be chained after velo")
        elif conflist["plugins"][types.index(plugin)].get("capabilities", {}).get(cap) is not True:
            problem(f"{where}: the {plugin} plugin must declare capability {cap}")


def check_readme(_docs, args):
    with open(args.readme, encoding="utf-8") as stream:
        text = stream.read()
    blocks = [b for b in re.findall(r"```json\n(.*?)```", text, re.S) if '"plugins"' in b]
    if len(blocks) != 1:
        problem(f"{args.readme}: want one conflist example, found {len(blocks)}")
        return
    try:
        check_conflist(f"{args.readme} conflist", json.loads(blocks[0]))
    except json.JSONDecodeError as err:
        problem(f"{args.readme} conflist: not JSON: {err}")


def check_configmap(docs, args):
    data = one(docs, "ConfigMap").get("data", {})
    try:
        conflist = json.loads(data.get("10-velo.conflist", ""))
        velod = json.loads(data.get("velod.json", ""))
    except json.JSONDecodeError as err:
        problem(f"ConfigMap: not JSON: {err}")
        return
    velo = [p for p in conflist.get("plugins", []) if p.get("type") == "velo"]
    if len(velo) != 1:
        problem("conflist: needs exactly one plugin of type velo")
        return
    check_conflist("conflist", conflist)
    ipam = velo[0].get("ipam", {})
    if ipam.get("type") != "velo" or "ranges" in ipam or "subnet" in ipam:
        problem("conflist: velo's IPAM without ranges (install-cni fills each node's podCIDRs)")
    if conflist.get("name") not in velod.get("networks", []):
        problem("velod.json: networks must include the conflist's name")
    keys = velod_keys(args.velod_config_c)
    if keys is not None and set(velod) - keys:
        problem(f"velod.json: keys velod rejects: {sorted(set(velod) - keys)}")
    if velod.get("servicesSource") != "api" or not velod.get("inCluster"):
        problem("velod.json: the DaemonSet's velod takes Services from the API "
                "(servicesSource \"api\", inCluster)")
    if velod.get("policySource") != "api":
        problem("velod.json: the shipped velod enforces NetworkPolicy (policySource \"api\")")
    if velod.get("listen", "127.0.0.1:9099") != "127.0.0.1:9099":
        problem("velod.json: listen must match the probes (127.0.0.1:9099)")


def check_kind(_docs, args):
    config = load_all(args.kind)
    if len(config) != 1 or config[0].get("kind") != "Cluster":
        problem("kind config: want one Cluster document")
        return
    cluster = config[0]
    networking = cluster.get("networking", {})
    if networking.get("disableDefaultCNI") is not True:
        problem("kind config: disableDefaultCNI must be true")
    roles = sorted(node.get("role") for node in cluster.get("nodes", []))
    if roles != ["control-plane", "worker", "worker"]:
        problem(f"kind config: nodes {roles}, want one control-plane and two workers")
    try:
        pods = ipaddress.ip_network(networking.get("podSubnet"))
        services = ipaddress.ip_network(networking.get("serviceSubnet"))
        if pods.overlaps(services):
            problem("kind config: podSubnet and serviceSubnet overlap")
    except (TypeError, ValueError) as err:
        problem(f"kind config: podSubnet/serviceSubnet: {err}")


CRD_NAME = "clusternetworkpolicies.policy.networking.k8s.io"
CRD_BEGIN = "# ClusterNetworkPolicy CRD: begin\n"
CRD_END = "# yamllint enable\n# ClusterNetworkPolicy CRD: end\n"


def pinned_version(path):
    """NETPOL_API_VERSION of hack/kind/versions.sh, the one version of the API velo uses."""
    with open(path, encoding="utf-8") as stream:
        found = re.findall(r"^NETPOL_API_VERSION=(v[0-9.]+)$", stream.read(), re.M)
    if len(found) != 1:
        problem(f"{path}: want one NETPOL_API_VERSION=vX.Y.Z line")
        return None
    return found[0]


def check_crd(docs, args):
    """The ClusterNetworkPolicy CRD is the network-policy-api's file, unchanged since
    hack/cnp-crd.sh copied it (its sha256 in the header), at the pinned version, experimental
    channel (named ports, node peers), serving v1beta1 and v1alpha2."""
    with open(args.manifest, encoding="utf-8") as stream:
        text = stream.read()
    if text.count(CRD_BEGIN) != 1 or text.count(CRD_END) != 1:
        problem("CRD: want one block between the ClusterNetworkPolicy CRD marker lines")
        return
    block = text[text.index(CRD_BEGIN) + len(CRD_BEGIN):text.index(CRD_END)]
    header = re.match(r"# yamllint disable\n# (\S+)@(v[0-9.]+) (\S+), verbatim .*\n"
                      r"# sha256 ([0-9a-f]{64})\n---\n", block)
    if not header:
        problem("CRD: no header naming the module, version, file and sha256")
        return
    module, version, _path, want_sum = header.groups()
    body = block[header.end():]
    got_sum = hashlib.sha256(body.encode("utf-8")).hexdigest()
    if got_sum != want_sum:
        problem(f"CRD: sha256 {got_sum}, the header says {want_sum}: edited by hand? "
                "(hack/cnp-crd.sh copies it)")
    pin = pinned_version(args.versions)
    if module != "sigs.k8s.io/network-policy-api" or version != pin:
        problem(f"CRD: from {module}@{version}, want sigs.k8s.io/network-policy-api@{pin}")
    crds = [doc for doc in by_kind(docs, "CustomResourceDefinition")
            if doc.get("metadata", {}).get("name") == CRD_NAME]
    if len(crds) != 1:
        problem(f"CRD: want one {CRD_NAME}, found {len(crds)}")
        return
    crd = crds[0]
    annotations = crd["metadata"].get("annotations", {})
    if annotations.get("policy.networking.k8s.io/bundle-version") != pin:
        problem(f"CRD: bundle-version {annotations.get('policy.networking.k8s.io/bundle-version')}"
                f", want {pin}")
    if annotations.get("policy.networking.k8s.io/channel") != "experimental":
        problem("CRD: want the experimental channel (named ports, node peers)")
    versions = {v.get("name"): v for v in crd.get("spec", {}).get("versions", [])}
    if sorted(versions) != ["v1alpha2", "v1beta1"] or \
            not all(v.get("served") for v in versions.values()):
        problem(f"CRD: serves {sorted(versions)}, want v1alpha2 and v1beta1")
    elif not versions["v1beta1"].get("storage"):
        problem("CRD: v1beta1 must be the stored version")


CHECKS = {
    "kinds": check_kinds,
    "rbac": check_rbac,
    "daemonset": check_daemonset,
    "configmap": check_configmap,
    "readme": check_readme,
    "kind": check_kind,
    "crd": check_crd,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("check", choices=sorted(CHECKS))
    parser.add_argument("--manifest", default="manifests/velo.yaml")
    parser.add_argument("--kind", default="e2e/kind/cluster.yaml")
    parser.add_argument("--velod-config-c", default="velod/agent/config_fields.c")
    parser.add_argument("--readme", default="README.md")
    parser.add_argument("--versions", default="hack/kind/versions.sh")
    args = parser.parse_args()
    docs = load_all(args.manifest) if args.check not in ("kind", "readme") else []
    CHECKS[args.check](docs, args)
    for text in problems:
        print(text, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
