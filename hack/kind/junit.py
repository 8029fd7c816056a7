#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The verdict of each spec of a ginkgo JUnit report that FOCUS matches, one per line:
"passed", "failed" or "skipped", a tab, the spec's name. The report lists the suite's other
specs as skipped too: they are not printed. Usage: junit.py FILE FOCUS"""
import re
import sys
import xml.etree.ElementTree as ET

path, focus = sys.argv[1], re.compile(sys.argv[2])
for case in ET.parse(path).getroot().iter("testcase"):
    name = case.get("name", "")
    if not focus.search(name):
        continue
    if case.find("failure") is not None or case.find("error") is not None:
        verdict = "failed"
    elif case.find("skipped") is not None or case.get("status") in ("skipped", "pending"):
        verdict = "skipped"
    else:
        verdict = "passed"
    print(verdict + "\t" + name)
