#!/usr/bin/env bash
# A tiny exec-runtime agent that plays the seed's landing-page flow without a
# model: pm starts it with the rendered prompt as its last argument and the
# identity in PM_AGENT / PM_ROLE / PM_TASK. It acts only through pm commands,
# exactly like an agent CLI would.
set -u
role="${PM_ROLE:-}"

if [ -n "$role" ]; then
  # Role agent: enter the room, post when others speak, leave when it closes.
  case "$role" in
    designer)  lines=("Landing pages live or die by the hero. What is the one-line value prop?"
                      "Bold type, lots of whitespace, no stock photos."
                      "Fine, single file, but section the CSS clearly.") ;;
    developer) lines=("Static or backend? I say static: one HTML file, inline CSS, no build step."
                      "Ship fast; refactor when feedback says so."
                      "I will keep it under 100 lines.") ;;
    copywriter) lines=("Lead with the benefit, not the feature: 'Ship agent teams that actually talk.'"
                       "Cut the jargon in the subhead.") ;;
    *)         lines=("From the $role side: keep it small and shippable.") ;;
  esac
  for l in "${lines[@]}"; do
    pm say "$l" || exit 0          # exit 5: the room closed, leave it
    pm chat --wait >/dev/null || exit 0
  done
  # Said our piece: keep reading the room until it closes, then leave.
  while pm chat --wait >/dev/null 2>&1; do :; done
  exit 0
fi

# Owner: assess, discuss, decide, implement, verify, close the loop.
pm phase "Brainstorm" --limit "${DEMO_LIMIT:-8}" --roles designer,developer --rules "ideas only, no code" || exit 1
limit="${DEMO_LIMIT:-8}"
pm say "Static for now. Tone: confident but approachable."
# Read the room as it fills; with one slot left, decide, which closes it.
while pm chat --wait >/dev/null 2>&1; do
  if [ "$(pm chat --json 2>/dev/null | wc -l)" -ge $((limit - 1)) ]; then
    pm say "Decision: one static file, bold type, benefit-first copy. Building it now." || break
  fi
done
pm history --tail 20
cat > index.html <<'HTML'
<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>pm</title>
<style>/* hero */ body{font:18px/1.5 system-ui;margin:0} header{padding:12vh 8vw} h1{font-size:3.5rem;margin:0}</style>
</head>
<body><header><h1>Ship agent teams that actually talk.</h1><p>Bounded rooms, real processes, one commit.</p></header></body>
</html>
HTML
test -s index.html || exit 1       # verify before closing the loop
pm done
