#!/usr/bin/env python3
"""Prints parts of a wpd-ld report (`--wpd-report=FILE`, schema wpd-report/1 or /2).

  report.py summary FILE   call-site counts and why slots stayed indirect
  report.py timings FILE   per-phase wall times (timings_ms)

Used by `make demo` and benches/link.sh.
"""
import json
import re
import sys
from collections import Counter

# Content-hash suffixes of promoted local symbols (`name.<32 hex digits>`).
HASH = re.compile(r"\.[0-9a-f]{32}\b")
WIDTH = 100


def short(reason):
    """A reason on one readable line: hash suffixes dropped, long ones cut."""
    reason = HASH.sub("", reason)
    return reason if len(reason) <= WIDTH else reason[: WIDTH - 3] + "..."

COUNTERS = ["single_impl", "uniform_ret_val", "unique_ret_val", "virtual_const_prop", "speculative", "not_devirtualized"]


def summary(report):
    sites = report.get("call_sites", {})
    total = sites.get("total", 0)
    print(f"virtual call sites: {total}")
    for key in COUNTERS:
        n = sites.get(key, 0)
        share = f" ({100.0 * n / total:.0f}%)" if total else ""
        print(f"  {key:<20} {n:>6}{share}")
    options = report.get("options", {})
    if options:
        print("options: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items())))
    reasons = Counter()
    for d in report.get("decisions", []):
        left = d.get("call_sites", 0) - d.get("devirtualized", 0)
        if left > 0:
            reasons[short(d.get("reason") or "(no reason given)")] += left
    if reasons:
        print("not devirtualized, by reason (call sites):")
        for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {n:>6}  {reason}")
    else:
        print("every virtual call site was devirtualized")


def timings(report):
    phases = dict(report.get("timings_ms", {}))
    total = phases.pop("total", None)
    for phase, ms in phases.items():
        print(f"  {phase:<20} {ms:>10.1f} ms")
    if total is None:
        print(f"  {'(sum)':<20} {sum(phases.values()):>10.1f} ms")
    else:
        print(f"  {'total':<20} {total:>10.1f} ms")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("summary", "timings"):
        sys.exit(__doc__.strip())
    with open(sys.argv[2]) as f:
        report = json.load(f)
    if report.get("schema") not in ("wpd-report/1", "wpd-report/2"):
        sys.exit(f"{sys.argv[2]}: not a wpd report (wpd-report/1 or /2)")
    {"summary": summary, "timings": timings}[sys.argv[1]](report)


if __name__ == "__main__":
    main()
