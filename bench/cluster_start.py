#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/cluster.sh's pod start clock: runs CMD (`kubectl get pods --watch -o json`: a stream of
JSON objects), reads it as it arrives and prints "POD EPOCH" the first time each pod is seen
Ready, timed here on arrival (the API's own timestamps have whole seconds only); after N pods,
stops CMD and exits (a watch never ends by itself: a shell waiting for it would wait forever).
Usage: cluster_start.py N CMD..."""
import json
import signal
import subprocess
import sys
import time

want = int(sys.argv[1])
watch = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, text=True)
# Killed (cluster.sh's cleanup), stop the watch too.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
decoder = json.JSONDecoder()
seen = set()
buf = ""
try:
    for line in watch.stdout:
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
finally:
    watch.terminate()
    watch.wait()
