#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/cluster.sh -P's profiles side by side: every symbol that takes at least LIMIT percent
of the machine's cycles under one CNI, with its share under each CNI (blank: under 0.3%, the
profiles' own cut).
Usage: cluster_profiles.py OUTDIR [LIMIT]   (reads OUTDIR/profile-CNI.txt, in the order the
CNIs ran, from cluster_samples.csv)"""
import os
import sys

from cluster_report import load


def profile(path):
    """{symbol: percent} from a `perf report --sort dso,symbol --stdio` listing."""
    shares = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4 or not parts[0].endswith("%"):
                continue
            # "12.34%  [kernel.kallsyms]  [k] symbol"
            sym = " ".join(parts[3:])
            shares[sym] = shares.get(sym, 0.0) + float(parts[0][:-1])
    return shares


def main():
    out = sys.argv[1]
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    _, cnis = load(os.path.join(out, "cluster_samples.csv"))
    profs = {}
    for c in cnis:
        path = os.path.join(out, f"profile-{c}.txt")
        if os.path.exists(path):
            profs[c] = profile(path)
    if not profs:
        sys.exit("cluster_profiles.py: no profile-CNI.txt in " + out)
    names = list(profs)
    syms = {s for p in profs.values() for s, v in p.items() if v >= limit}
    print("| symbol | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for s in sorted(syms, key=lambda s: -max(p.get(s, 0.0) for p in profs.values())):
        cells = [f"{profs[c][s]:.2f}" if s in profs[c] else "" for c in names]
        print(f"| `{s}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
