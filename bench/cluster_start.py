#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/cluster.sh's pod start clock: reads `kubectl get pods --watch -o json` (a stream of
JSON objects) as it arrives and prints "POD EPOCH" the first time each pod is seen Ready, timed
here on arrival (the API's own timestamps have whole seconds only); exits after N pods.
Usage: cluster_start.py N <watch"""
import json
import sys
import time

want = int(sys.argv[1])
decoder = json.JSONDecoder()
seen = set()
buf = ""
for line in sys.stdin:
    buf += line
    while True:
        text = buf.lstrip()
        try:
            obj, end = decoder.raw_decode(text)
        except ValueError:
            break
        buf = text[end:]
        pod = obj.get("object", obj)
        name = pod["metadata"]["name"]
        conds = pod.get("status", {}).get("conditions", [])
        if name not in seen and any(
            c["type"] == "Ready" and c["status"] == "True" for c in conds
        ):
            seen.add(name)
            print(name, "%.3f" % time.time(), flush=True)
    if len(seen) >= want:
        break
