#!/usr/bin/env bash
# make demo: the seed's landing-page flow, offline. Real pm processes, a real
# phase with two role agents, real messages and a real git commit; the agents
# are the shell script examples/agents/script-agent.sh (exec runtime), not a model.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
pm="$repo/bin/pm"
work="$(mktemp -d -t pm-demo-XXXXXX)"
cd "$work"
git init -q . && git config user.email demo@localhost && git config user.name "pm demo"
echo "# demo project" > README.md && git add README.md && git commit -qm "initial"
"$pm" init
# Point the exec runtime at the script agent.
python3 - "$work/.plasmodium/config.json" "$repo/examples/agents/script-agent.sh" <<'PY' 2>/dev/null || sed -i "s#\"claude\",#\"$repo/examples/agents/script-agent.sh\", \"claude\",#" .plasmodium/config.json
import json, sys
p, agent = sys.argv[1], sys.argv[2]
c = json.load(open(p)); c["runtime"]["exec"]["command"] = [agent]; json.dump(c, open(p, "w"), indent=2)
PY
export PATH="$repo/bin:$PATH"
echo "== pm task"
pm task "Build a landing page for our product"
echo "== pm chat --follow (until the phase closes)"
until ls -d .plasmodium/tasks/*/phases/ph-* >/dev/null 2>&1; do sleep 0.1; done  # the owner opens it
ph="$(basename "$(ls -d .plasmodium/tasks/*/phases/ph-* | head -1)")"
pm chat --follow --phase "$ph"
echo "== waiting for the owner to close the loop"
while ! grep -q '"task.done"' .plasmodium/events.jsonl 2>/dev/null; do sleep 0.2; done
pm status --all
echo "== git log"
git log --stat -1
echo "demo workspace: $work"
