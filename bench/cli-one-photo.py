#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One photo through backdrop-cli, one process a call, as the GIMP plug-in and a shell loop
run it: start-up, model, engine and writing all counted. With two or more CLIs (e.g. a build
of an older commit and this one) the calls alternate, so that every CLI sees the same
machine. Prints, for each CLI, the wall time a call (median, 10th and 90th percentile, calls
over the issue's 400 ms), the CPU time a call (user + system, median), the peak resident
memory and the minor page faults (medians), the last three from the kernel's own accounting
of each child (wait4); the CPU time's system part (the kernel: page faults, reading files)
is also given alone.

With --pause SECONDS each call waits that long first, as a user's lone call finds the
machine: memory freed a while ago may have to be lent back (a virtual machine's host) or
gathered into large pages, which calls back to back do not show.

  bench/cli-one-photo.py [--pause SECONDS] PHOTO CALLS CLI [CLI...] [-- CLI-ARGS...]
  e.g. bench/cli-one-photo.py ccp0001.webp 30 old/cli/backdrop-cli build/cli/backdrop-cli
       bench/cli-one-photo.py --pause 3 ccp0001.webp 10 build/cli/backdrop-cli

Default CLI-ARGS: --device cpu --output mask. Each call writes into a new temporary folder,
removed after.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    argv = sys.argv[1:]
    args = ['--device', 'cpu', '--output', 'mask']
    if '--' in argv:
        args = argv[argv.index('--') + 1:]
        argv = argv[:argv.index('--')]
    pause = 0.0
    if argv[:1] == ['--pause']:
        try:
            pause = float(argv[1])
        except (IndexError, ValueError):
            pause = -1.0
        if not pause >= 0:
            sys.exit('cli-one-photo.py: --pause takes a number of seconds, 0 or more')
        argv = argv[2:]
    if len(argv) < 3 or not argv[1].isdigit() or int(argv[1]) < 1:
        sys.exit(__doc__.split('\n\n')[1])
    photo, calls, clis = argv[0], int(argv[1]), argv[2:]
    if not os.path.isfile(photo):
        sys.exit(f'cli-one-photo.py: no photo {photo}')
    got = {cli: [] for cli in clis}
    for _ in range(calls):
        for cli in clis:
            out = tempfile.mkdtemp(prefix='backdrop-bench-')
            time.sleep(pause)
            start = time.monotonic()
            child = subprocess.Popen([cli, '-q', *args, '--output-dir', out, photo], stderr=subprocess.PIPE)
            _, status, usage = os.wait4(child.pid, 0)
            wall = (time.monotonic() - start) * 1e3
            err = child.stderr.read().decode(errors='replace')
            child.stderr.close()
            written = len(os.listdir(out))
            shutil.rmtree(out)
            if os.waitstatus_to_exitcode(status) != 0 or written != 1:
                sys.exit(f'cli-one-photo.py: {cli} failed (status {status}, {written} files): {err.strip()}')
            got[cli].append((wall, (usage.ru_utime + usage.ru_stime) * 1e3, usage.ru_maxrss / 1024,
                             usage.ru_minflt, usage.ru_stime * 1e3))
    print(f'{"cli":<40} {"calls":>5} {"wall median":>11} {"p10":>5} {"p90":>5} {">400":>4}'
          f' {"cpu median":>10} {"system":>6} {"peak MB":>7} {"minflt":>7}')
    for cli, rows in got.items():
        wall = sorted(r[0] for r in rows)
        pick = lambda q: wall[min(len(wall) - 1, int(q * len(wall)))]
        print(f'{cli[-40:]:<40} {len(rows):>5} {statistics.median(wall):>9.0f}ms {pick(0.1):>5.0f} {pick(0.9):>5.0f}'
              f' {sum(w > 400 for w in wall):>4} {statistics.median(r[1] for r in rows):>8.0f}ms'
              f' {statistics.median(r[4] for r in rows):>4.0f}ms'
              f' {statistics.median(r[2] for r in rows):>7.0f} {statistics.median(r[3] for r in rows):>7.0f}')


if __name__ == '__main__':
    main()
