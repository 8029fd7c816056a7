#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/cluster.sh's plots: one gnuplot PNG per class (cluster-<class>.png in OUTDIR), a bar
per CNI at each place (same node, across nodes, each to the pod and through the ClusterIP),
the bar the median and its whisker the min-max of the samples. Pod start gets one PNG of its
own (p50, p99, the kubelet's SLI mean), the agents' RSS another.
Usage: cluster_plot.py SAMPLES.csv OUTDIR"""
import os
import subprocess
import sys

from cluster_report import KINDS, SINGLE, WHERE, load, summarize

GROUPS = [(key, label, unit, hib, [(f"{key}-{w}", wl) for w, wl in WHERE])
          for key, label, unit, hib in KINDS]
GROUPS.append(("start", "50 pods at once", "s", False,
               [(k, label.replace("50 pods at once: ", "")) for k, label, _, _ in SINGLE
                if k in ("start50", "start99", "pod_start_sli_duration_seconds")]))
GROUPS.append(("rss", "node agent RSS (server's node)", "MiB", False,
               [("agent_rss_kb", "agent RSS")]))


def plot(stats, cnis, outdir, key, label, unit, hib, places):
    dat = os.path.join(outdir, f"cluster-{key}.dat")
    png = os.path.join(outdir, f"cluster-{key}.png")
    # A CNI without a sample here (its up failed, or the run stopped first) gets no column:
    # gnuplot refuses a histogram column that is all NaN.
    cnis = [c for c in cnis if any((c, cls) in stats for cls, _ in places)]
    with open(dat, "w") as f:
        f.write("# place" + "".join(f" {c}:median,min,max" for c in cnis) + "\n")
        for cls, where in places:
            cells = []
            for c in cnis:
                s = stats.get((c, cls))
                cells.append(f"{s[0]} {s[1]} {s[2]}" if s else "NaN NaN NaN")
            f.write(f'"{where}" ' + " ".join(cells) + "\n")
    better = "higher is better" if hib else "lower is better"
    cols = " , ".join(f'"{dat}" using {2 + 3 * i}:{3 + 3 * i}:{4 + 3 * i}:xtic(1) '
                      f'title "{c}"' for i, c in enumerate(cnis))
    script = f"""
set terminal pngcairo size 1100,520 noenhanced font ",10"
set output "{png}"
set title "{label} ({unit}, {better}; bar: median, whisker: min-max)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "{unit}"
set yrange [0:*]
set grid ytics
set xtics scale 0
set key outside right top
plot {cols}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return png


def main():
    data, cnis = load(sys.argv[1])
    stats = summarize(data)
    for key, label, unit, hib, places in GROUPS:
        if any((c, cls) in stats for c in cnis for cls, _ in places):
            print(plot(stats, cnis, sys.argv[2], key, label, unit, hib, places))


if __name__ == "__main__":
    main()
