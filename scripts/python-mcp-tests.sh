#!/usr/bin/env bash
# The official Python MCP SDK (mcp 2.3.0) as a client of our stdio server:
# tests/python/mcp_client_test.py against the built binary.
#
#   scripts/python-mcp-tests.sh            install (once), build the binary if needed, run the test
#   scripts/python-mcp-tests.sh install    only create the venv and install the SDK
#
# Environment:
#   PEERS_DIR   cache for the venv (default $HOME/.cache/aegis-peers; never inside the repository)
#   BIN         the server binary (default: target/debug/aegis-gitea-mcp, built first)
#   PYTHON      the interpreter that creates the venv (default python3, needs >= 3.10)
#
# Idempotent: the venv is reused while it holds exactly mcp==2.3.0. The test prints
# "python mcp client: N passed, M failed" last and exits non-zero on any failure.
set -euo pipefail

MCP_VERSION=2.3.0

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${PEERS_DIR:-$HOME/.cache/aegis-peers}"
VENV="$PEERS_DIR/venv-mcp-$MCP_VERSION"
PY="$VENV/bin/python"
# An explicit BIN is used as it is; the default is (re)built first so it matches the sources.
BUILD=0
[ -n "${BIN:-}" ] || BUILD=1
BIN="${BIN:-$ROOT/target/debug/aegis-gitea-mcp}"

die() {
  echo "python-mcp-tests.sh: $*" >&2
  exit 1
}

install() {
  mkdir -p "$PEERS_DIR"
  if [ -x "$PY" ] && "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$MCP_VERSION')" 2>/dev/null; then
    return 0
  fi
  echo "python-mcp-tests.sh: installing mcp==$MCP_VERSION into $VENV (log: $PEERS_DIR/install.log)" >&2
  rm -rf "$VENV"
  "${PYTHON:-python3}" -m venv "$VENV" || die "cannot create a venv at $VENV"
  "$PY" -m pip install -q "mcp==$MCP_VERSION" >>"$PEERS_DIR/install.log" 2>&1 ||
    die "pip install mcp==$MCP_VERSION failed; see $PEERS_DIR/install.log"
}

run() {
  install
  if [ "$BUILD" = 1 ]; then
    (cd "$ROOT" && cargo build --bin aegis-gitea-mcp) >&2 || die "cargo build failed"
  fi
  [ -x "$BIN" ] || die "no binary at $BIN"
  "$PY" "$ROOT/tests/python/mcp_client_test.py" --bin "$BIN" \
    --spec "$ROOT/tests/fixtures/gitea-mini.swagger.json" "$@"
}

case "${1:-}" in
  install) install ;;
  -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' ;;
  *) run "$@" ;;
esac
