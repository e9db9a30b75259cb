#!/usr/bin/python3
"""Lists the tests that ctest reported skipped, each with its reason, from ctest's JUnit file.

A skipped test prints its reason on a line "SKIPPED: <reason>" (tests/support.hpp's TDBG_SKIP,
the Python and shell checks alike). With --allowed FILE, a skip that no line of FILE allows is
an error: the exit status is 1 and the skip is marked "NOT ALLOWED". FILE holds one allowed skip
a line, "<regular expression on the test's name> | <regular expression on its reason> | <why it
may skip>"; blank lines and lines starting with # are ignored.

usage: ctest_skips.py JUNIT_XML [--allowed FILE] [--label NAME]
Exit status: 0 when every skip is allowed (or no list was given), 1 otherwise, 2 on bad input.
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ET


def skip_reason(output):
    for line in output.splitlines():
        at = line.find("SKIPPED: ")
        if at >= 0:
            return line[at + len("SKIPPED: "):].strip()
    return "(no reason printed)"


def read_skips(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_skips.py: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)
    skips = []
    for case in root.iter("testcase"):
        if case.find("skipped") is None:
            continue
        out = case.find("system-out")
        skips.append((case.get("name", "?"), skip_reason((out.text or "") if out is not None else "")))
    return skips


def read_allowed(path):
    allowed = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#") or line.startswith("tsan | "):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 3:
                print(f"{path}:{number}: expected '<name regex> | <reason regex> | <why>'", file=sys.stderr)
                sys.exit(2)
            try:
                allowed.append((re.compile(parts[0]), re.compile(parts[1]), parts[2]))
            except re.error as e:
                print(f"{path}:{number}: bad regular expression: {e}", file=sys.stderr)
                sys.exit(2)
    return allowed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit")
    parser.add_argument("--allowed")
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    skips = read_skips(args.junit)
    allowed = read_allowed(args.allowed) if args.allowed else None
    label = f"{args.label}: " if args.label else ""
    refused = 0
    if skips:
        print(f"  {label}{len(skips)} skipped:")
    for name, reason in skips:
        mark = ""
        if allowed is not None and not any(n.search(name) and r.search(reason) for n, r, _ in allowed):
            mark = "NOT ALLOWED: "
            refused += 1
        print(f"    {mark}{name}\n        {reason}")
    if refused:
        print(f"  {label}{refused} skip(s) that {args.allowed} does not allow: a test that must run here did not")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
