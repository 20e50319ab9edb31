#!/usr/bin/env bash
# Runs the tests that touch the sandbox, files, processes and git as an
# unprivileged user, as users run pm (make test-user; CI runs it after
# make test). As root it builds everything first (the user may not reach
# root's Go caches), copies the tree to a directory the user owns, and runs
# the test binaries with setpriv; as any other user it runs them directly.
#
# PM_TEST_USER names the user (default pmtest, created when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

# Packages whose unit tests touch the sandbox, processes, files or git.
pkgs=(./internal/sandbox ./internal/agent ./internal/capability ./internal/driver
      ./internal/gitx ./internal/broker ./internal/task ./internal/supervisor
      ./internal/cmd/agentrun ./internal/hub ./internal/hubauth ./internal/state/natsstate ./internal/natsx/lease)
# Scripts that run agents confined, kill processes or commit.
scripts='TestScripts/(security_.*|contain_.*|doctor|landing_flow|llm_demo|llm_greeter|kill.*|done_.*|exec_secrets|fd_inherit|supervisor_.*|blockers|subtasks|reset|governance.*|exec_cost.*|exec_activity|hub.*|worktree.*|reject.*)$'

if [ "$(id -u)" != 0 ]; then
  go test -race -count=1 "${pkgs[@]}"
  go test -race -count=1 -run "$scripts" ./cmd/pm
  exit
fi

user=${PM_TEST_USER:-pmtest}
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$user"
fi
uid=$(id -u "$user")
gid=$(id -g "$user")
[ "$uid" != 0 ] || { echo "test-as-user: $user is root" >&2; exit 1; }

work=$(mktemp -d /tmp/pm-as-user.XXXXXX)
# pm's hosts are non-dumpable, so the scripts' cleanup cannot read their
# environment as this user: end whatever the user left, then the tree.
trap 'pkill -KILL -u "$uid" 2>/dev/null; rm -rf "$work"' EXIT
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$work" -xf -
mkdir -p "$work/bin" "$work/home"
CGO_ENABLED=1 go build -race -o "$work/bin/pm-hub" ./cmd/pm-hub
CGO_ENABLED=1 go build -race -o "$work/bin/pm-full" ./cmd/pm-full
CGO_ENABLED=1 go build -race -o "$work/bin/pm" ./cmd/pm
for p in "${pkgs[@]}" ./cmd/pm; do
  go test -race -c -o "$work/bin/$(basename "$p").test" "$p"
done
# The scripts' git identity and the Go toolchain (for go env) on PATH.
cat >"$work/home/.gitconfig" <<GIT
[user]
	email = $user@localhost
	name = pm test user
GIT
chown -R "$uid:$gid" "$work"
chmod 0755 "$work"

as_user() {
  local dir=$1; shift
  (cd "$work/$dir" && setpriv --reuid="$uid" --regid="$gid" --init-groups \
    env -i HOME="$work/home" USER="$user" PATH="$(dirname "$(command -v go)"):/usr/local/bin:/usr/bin:/bin" \
    GOCACHE="$work/home/.cache/go-build" GORACE=atexit_sleep_ms=0 PM_TEST_PREBUILT="$work/bin" \
    "$@")
}

# run prints which tests ran, passed and were skipped (a run that skips
# everything must show), and the whole output when one fails.
run() {
  local dir=$1; shift
  local log="$work/home/test.log"
  if as_user "$dir" "$@" -test.count=1 -test.v >"$log" 2>&1; then
    grep -E '^ *--- (PASS|SKIP)|^(PASS|ok)' "$log" | sed 's/ (.*//'
    return 0
  fi
  cat "$log"
  return 1
}

status=0
echo "== as $user (uid $uid): unit tests"
for p in "${pkgs[@]}"; do
  echo "-- $p"
  run "$p" "$work/bin/$(basename "$p").test" -test.run '.' | grep -v '^ *--- PASS: .*/' || status=1
done
echo "== as $user (uid $uid): scripts $scripts"
run cmd/pm "$work/bin/pm.test" -test.run "$scripts" || status=1
echo "== as $user (uid $uid): the three-node cluster tests"
# TestWorkerCutOffIsFenced makes user and network namespaces of its own
# (unprivileged user namespaces: it needs no root, and runs as the user).
run cmd/pm "$work/bin/pm.test" -test.run '^(TestClusterLeaderKilledMidRoom|TestWorkerCutOffIsFenced)$' || status=1
exit $status
