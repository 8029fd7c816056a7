#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the ConformanceReport of the ClusterNetworkPolicy conformance suite (hack/kind.sh cnp)
and prints each failed and skipped test by name, with its channel (standard, experimental) and,
for a skip, SKIP_REASON; then one line "cnp: N passed, N failed, N skipped" over both channels
of the ClusterNetworkPolicy profile. Exits 1 if the report has no such profile.
Usage: cnp_report.py REPORT SKIP_REASON"""
import sys

import yaml

path, skip_reason = sys.argv[1:3]
with open(path, encoding="utf-8") as stream:
    report = yaml.safe_load(stream)
profiles = [p for p in report.get("profiles") or [] if p.get("name") == "ClusterNetworkPolicy"]
if len(profiles) != 1:
    print(f"cnp_report: {path}: no ClusterNetworkPolicy profile", file=sys.stderr)
    sys.exit(1)
totals = {"Passed": 0, "Failed": 0, "Skipped": 0}
for channel in ("standard", "experimental"):
    status = profiles[0].get(channel) or {}
    for key in totals:
        totals[key] += (status.get("statistics") or {}).get(key, 0)
    for name in sorted(status.get("failedTests") or []):
        print(f"    failed: {name} ({channel})")
    for name in sorted(status.get("skippedTests") or []):
        print(f"    skipped: {name} ({channel}): {skip_reason}")
print(f"cnp: {totals['Passed']} passed, {totals['Failed']} failed, {totals['Skipped']} skipped")
