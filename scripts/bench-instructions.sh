#!/usr/bin/env bash
# Instructions executed by short pm commands, counted by valgrind's callgrind:
# unlike wall time, the count does not move with the machine's load, so two
# binaries can be compared on a busy machine.
#
#   scripts/bench-instructions.sh BIN [BIN...]     # e.g. an old build and bin/pm
#
# Each binary runs on a fresh state of its own (one task, one phase, 10
# messages); every figure is the median of 3 runs. GODEBUG=asyncpreemptoff=1
# keeps Go's preemption signals away from callgrind, which cannot follow them.
set -euo pipefail
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }

measure() {
  local bin=$1 d owner t
  d=$(mktemp -d); cd "$d"; git init -q
  export PM_NO_SUPERVISOR=1 GODEBUG=asyncpreemptoff=1
  "$bin" init >/dev/null
  t=$("$bin" task "bench task" --runtime none --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  owner=$("$bin" status "$t" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["task"]["owner"])')
  PM_AGENT=$owner "$bin" phase Room --limit 50 >/dev/null
  for i in $(seq 1 10); do PM_AGENT=$owner "$bin" say "message $i" >/dev/null; done
  # --trace-children: pm hands most commands to pm-full by execve; both
  # process images are counted (their sum).
  ir() { valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | grep -o 'Collected : [0-9]*' | awk '{s+=$3} END {print s}'; }
  echo "--help $(ir "$bin" --help)"
  echo "say $(PM_AGENT=$owner ir "$bin" say 'one more')"
  echo "chat $(PM_AGENT=$owner ir "$bin" chat)"
  echo "status $(ir "$bin" status)"
  echo "status-tk $(ir "$bin" status "$t")"
  echo "history $(ir "$bin" history)"
  cd /; rm -rf "$d"
}

for bin in "$@"; do
  bin=$(readlink -f "$bin")
  for run in 1 2 3; do measure "$bin" | sed "s|^|$bin |"; done
done | python3 -c '
import sys, statistics, collections
d = collections.defaultdict(list); bins = []
for line in sys.stdin:
    b, cmd, n = line.split()
    d[(b, cmd)].append(int(n))
    if b not in bins: bins.append(b)
cmds = ["--help", "say", "chat", "status", "status-tk", "history"]
print("| command | " + " | ".join(bins) + " |")
print("| --- |" + " --- |" * len(bins))
for c in cmds:
    base = statistics.median(d[(bins[0], c)])
    cells = []
    for b in bins:
        m = statistics.median(d[(b, c)])
        cells.append(f"{m/1e6:.2f} M" + ("" if b == bins[0] else f" ({m/base:.2f}x)"))
    print(f"| pm {c} | " + " | ".join(cells) + " |")
'
