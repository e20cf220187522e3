#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Kernel-by-kernel times from an Nsight Compute CSV (ncu --csv --metrics gpu__time_duration.sum),
in launch order, then the total per kernel family: where a forward pass's time goes. Only
the first pass is kept (a pass starts with the input conversion, to_nhwc_kernel).

    ncu_summary.py ncu.csv
"""
import collections
import csv
import re
import sys

SCALE = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,   # ncu spells units
         "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}                          # either way


def family(name):
    """conv2d_wgmma_kernel<128, 128, false, false, 1>(...) -> conv2d_wgmma_kernel<128, 128, ...>"""
    name = re.sub(r"\(.*", "", name)
    name = re.sub(r"^.*::", "", name)
    return name.replace("(anonymous namespace)", "").strip()


def main():
    rows = []
    with open(sys.argv[1], newline="") as f:
        lines = [line for line in f if line.startswith('"')]   # skip ncu's own messages
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        us = float(r["Metric Value"].replace(",", "")) * SCALE.get(r["Metric Unit"], 1.0)
        if "probe_kernel" in r["Kernel Name"]:   # the start-up check, not part of a pass
            continue
        name = family(r["Kernel Name"])
        if rows and name.startswith("to_nhwc_kernel"):   # a pass starts there: keep the first
            break
        rows.append((name, r["Grid Size"], r["Block Size"], us))
    if not rows:
        print("no kernel times in", sys.argv[1])
        return 1
    total = sum(us for *_, us in rows)
    print(f"{'#':>3} {'kernel':58} {'grid':>16} {'us':>8}")
    for i, (name, grid, block, us) in enumerate(rows):
        print(f"{i:3} {name[:58]:58} {grid:>16} {us:8.1f}")
    print(f"{len(rows)} kernels, {total:.1f} us of kernel time (launch gaps not counted)")
    by = collections.defaultdict(lambda: [0, 0.0])
    for name, _, _, us in rows:
        by[name][0] += 1
        by[name][1] += us
    for name, (n, us) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f"  {name[:60]:60} x{n:<3} {us:8.1f} us {us / total:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
