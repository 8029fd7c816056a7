#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/cluster.sh's tables from cluster_samples.csv (round,cni,class,value): each CNI's
median (min-max) per class, then each CNI's median over velo's, with where the spreads part.
Usage: cluster_report.py SAMPLES.csv"""
import csv
import statistics
import sys

# class key prefix -> (label, unit, higher is better)
KINDS = [
    ("tcp128k", "TCP stream, 128 KiB writes", "Gbit/s", True),
    ("tcp1k", "TCP stream, 1 KiB writes", "Gbit/s", True),
    ("rr50", "TCP 64 B request/response p50", "us", False),
    ("rr99", "TCP 64 B request/response p99", "us", False),
    ("crr", "TCP connections (connect, 1 B each way, close)", "conn/s", True),
    ("cpu128k", "both workers' CPU during the 128 KiB stream", "CPU s/s per Gbit/s", False),
]
WHERE = [
    ("same-pod", "same node"),
    ("cross-pod", "across nodes"),
    ("same-svc", "same node, ClusterIP"),
    ("cross-svc", "across nodes, ClusterIP"),
]
SINGLE = [
    ("start50", "50 pods at once: Ready after the create, p50", "s", False),
    ("start99", "50 pods at once: Ready after the create, p99", "s", False),
    ("pod_start_sli_duration_seconds", "kubelet pod_start_sli_duration_seconds, mean", "s", False),
    ("run_podsandbox_duration_seconds", "kubelet run_podsandbox_duration_seconds, mean", "s", False),
    ("agent_rss_kb", "node agent RSS (server's node)", "MiB", False),
    ("up_s", "hack/kind.sh up (warm cache)", "s", False),
    ("load1", "load average at the start", "", False),
    ("conformance_passed", "[sig-network] [Conformance] passed", "", True),
    ("conformance_failed", "[sig-network] [Conformance] failed", "", False),
    ("conformance_skipped", "[sig-network] [Conformance] skipped", "", False),
    ("netpol_passed", "NetworkPolicy e2e passed", "", True),
    ("netpol_failed", "NetworkPolicy e2e failed", "", False),
    ("netpol_skipped", "NetworkPolicy e2e skipped", "", False),
]


def rows():
    for key, label, unit, hib in KINDS:
        for where, wlabel in WHERE:
            yield f"{key}-{where}", f"{label}, {wlabel}", unit, hib
    yield from SINGLE


def load(path):
    """{(cni, class): [values]} and the CNIs in the order they first ran."""
    data, cnis = {}, []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["cni"] not in cnis:
                cnis.append(r["cni"])
            try:
                v = float(r["value"])
            except ValueError:
                continue
            if r["class"] == "agent_rss_kb":
                v /= 1024
            data.setdefault((r["cni"], r["class"]), []).append(v)
    return data, cnis


def verdict(base, other, hib):
    """base's standing against other, each (median, min, max, n): decided only where the
    min-max spreads part."""
    if min(base[3], other[3]) < 2:
        return "n=1"  # one sample has no spread: no verdict
    if base[1] > other[2]:
        return "ahead" if hib else "behind"
    if base[2] < other[1]:
        return "behind" if hib else "ahead"
    return "~"


def ratio_table(stats, base, others):
    print("| class | " + " | ".join(others) + " |")
    print("|---|" + "---:|" * len(others))
    for cls, label, unit, hib in rows():
        v = stats.get((base, cls))
        if not v or cls in ("up_s", "load1") or cls.startswith(("conformance", "netpol")):
            continue
        cells = []
        for c in others:
            s = stats.get((c, cls))
            if not s or v[0] == 0:
                cells.append("-")
                continue
            word = verdict(v, s, hib)
            plain = word in ("~", "n=1")
            cells.append(f"{s[0] / v[0]:.2f}x {word if plain else '**' + word + '**'}")
        print(f"| {label} | " + " | ".join(cells) + " |")


def summarize(data):
    """{(cni, class): (median, min, max, n)}"""
    return {k: (statistics.median(v), min(v), max(v), len(v)) for k, v in data.items() if v}


def main():
    data, cnis = load(sys.argv[1])
    stats = summarize(data)

    def cell(cni, cls):
        s = stats.get((cni, cls))
        if not s:
            return "-"
        med, lo, hi, n = s
        return f"{med:.3g}" if n == 1 or lo == hi else f"{med:.3g} ({lo:.3g}-{hi:.3g})"

    print("| class | unit | " + " | ".join(cnis) + " |")
    print("|---|---|" + "---:|" * len(cnis))
    for cls, label, unit, _ in rows():
        if any((c, cls) in stats for c in cnis):
            print(f"| {label} | {unit} | " + " | ".join(cell(c, cls) for c in cnis) + " |")
    if "velo" not in cnis:
        return
    others = [c for c in cnis if c != "velo"]
    print()
    print("Each CNI's median over velo's (default) median. Verdict per peer: velo **ahead** or")
    print("**behind** only when the two min-max spreads don't overlap, else `~`; `n=1`: one")
    print("sample of either, no spread, no verdict.")
    print()
    ratio_table(stats, "velo", others)
    if "velo-best" in cnis and "cilium-best" in cnis:
        print()
        print("At their best: cilium-best's median over velo-best's; the verdict is velo-best's.")
        print()
        ratio_table(stats, "velo-best", ["cilium-best"])


if __name__ == "__main__":
    main()
