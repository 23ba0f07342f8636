# Sourced by the peer scripts (prism.sh, conformance.sh): installs npm packages at exact
# versions into a cache directory. Expects PEERS_DIR and a `die` function.

# Installs `pkg@version` into `dir` unless that exact version is there already.
npm_install() {
  local dir=$1 pkg=$2 version=$3 have=""
  local manifest="$dir/node_modules/$pkg/package.json"
  if [ -f "$manifest" ]; then
    have=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' "$manifest")
  fi
  if [ "$have" = "$version" ]; then
    return 0
  fi
  echo "$(basename "$0"): installing $pkg@$version into $dir (log: $PEERS_DIR/install.log)" >&2
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"aegis-peer","private":true}' >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --save-exact "$pkg@$version") \
    >>"$PEERS_DIR/install.log" 2>&1 || die "npm install $pkg@$version failed; see $PEERS_DIR/install.log"
}
