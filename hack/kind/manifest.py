#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints manifests/velo.yaml for the kind cluster: the velo plugin's entry of the conflist
gets the keys of an overrides file (kind's kubelet cgroup root, the kernel bugs an operator
accepts), velod.json the keys of its "velod" object (the cluster's Service ranges, say), and the
image is the one loaded into the nodes. More overrides files after the image are merged on top
(for an experiment). Usage: manifest.py MANIFEST OVERRIDES IMAGE [OVERRIDES...]."""
import json
import sys

import yaml

manifest, overrides, image = sys.argv[1:4]
extra, velod_extra = {}, {}
for path in [overrides] + sys.argv[4:]:
    with open(path) as f:
        more = json.load(f)
    velod_extra.update(more.pop("velod", {}))
    extra.update(more)
docs = [d for d in yaml.safe_load_all(open(manifest)) if d]
for doc in docs:
    if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "velo-config":
        conflist = json.loads(doc["data"]["10-velo.conflist"])
        velo = next(p for p in conflist["plugins"] if p["type"] == "velo")
        velo.update(extra)
        doc["data"]["10-velo.conflist"] = json.dumps(conflist, indent=2) + "\n"
        if velod_extra:
            velod = json.loads(doc["data"]["velod.json"])
            velod.update(velod_extra)
            doc["data"]["velod.json"] = json.dumps(velod, indent=2) + "\n"
    spec = doc.get("spec", {}).get("template", {}).get("spec", {})
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        if c["image"] == "velo:dev":
            c["image"] = image


def literal(dumper, text):
    """Multi-line strings (the conflist, velod.json) stay readable blocks."""
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


yaml.SafeDumper.add_representer(str, literal)
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
