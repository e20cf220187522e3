#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which thread holds a run back: a command's threads' CPU time, sampled from /proc every
50 ms while it runs, printed by thread name (the CLI names its lanes "lane", GLib's pools
"pool-N"; the library's own workers carry the program's name) as a share of the wall clock.
A thread near 100% is the bottleneck; many at 80-90% mean the cores are. For machines
without a profiler (the GPU machine has no perf):

    bench/thread-busy.py BUNDLE/run.sh -q --device cuda --output cutout --output-dir OUT PHOTOS
"""
import collections
import os
import subprocess
import sys
import time

cmd = sys.argv[1:]
if not cmd:
    sys.exit("usage: bench/thread-busy.py COMMAND [ARGS...]")
tick = os.sysconf("SC_CLK_TCK")
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
seen = {}
t0 = time.time()
while p.poll() is None:
    try:
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            try:
                st = open(f"/proc/{p.pid}/task/{tid}/stat").read()
                comm = st[st.index("(") + 1:st.rindex(")")]
                f = st[st.rindex(")") + 2:].split()
                seen[tid] = (comm, int(f[11]) + int(f[12]))
            except OSError:
                pass
    except OSError:
        pass
    time.sleep(0.05)
dt = time.time() - t0
err = p.stderr.read().decode()[-300:]
by = collections.defaultdict(list)
for tid, (comm, ticks) in seen.items():
    by[comm].append(ticks / tick)
print(f"wall {dt:.2f} s rc {p.returncode} {err.strip()[:200]}")
for comm, v in sorted(by.items(), key=lambda kv: -max(kv[1])):
    print(f"  {comm:16s} threads {len(v):3d}  busiest {100*max(v)/dt:5.1f}%  sum {100*sum(v)/dt:6.1f}% of one core")
