#!/usr/bin/env bash
# Load test of the HTTP gateway: concurrent clients calling `POST /mcp/tool/call` with a
# `gitea_find_action` body (a real search over the full Gitea catalog), in API-key mode, with the
# rate limits raised out of the way. Prints throughput, p50/p99 latency and the server's RSS
# before and after, and whether the goal (>= 5,000 calls/s with p99 <= 20 ms) is met.
#
#   scripts/load-test.sh                 # 16 clients, 30 s
#   CLIENTS=32 DURATION=60s scripts/load-test.sh
#
# Settings (environment): CLIENTS (16), DURATION (30s), QUERY ("merge a pull request"),
# GITEA_SPEC (default: $GITEA_SPEC_DIR or ../shared/spec, gitea-swagger.v1.json),
# LOAD_TEST_TOOLS (where oha is installed, default target/tools), GOAL_RPS (5000),
# GOAL_P99_MS (20).
#
# The load generator is oha (`cargo install oha --locked` into LOAD_TEST_TOOLS when missing);
# if it cannot be built, Debian's wrk is used instead. Both run on the same machine as the
# server, so they take part of its CPU.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
CLIENTS=${CLIENTS:-16}
DURATION=${DURATION:-30s}
QUERY=${QUERY:-merge a pull request}
GOAL_RPS=${GOAL_RPS:-5000}
GOAL_P99_MS=${GOAL_P99_MS:-20}
TOOLS=${LOAD_TEST_TOOLS:-$ROOT/target/tools}
SPEC_DIR=${GITEA_SPEC_DIR:-$ROOT/../shared/spec}
SPEC=${GITEA_SPEC:-$SPEC_DIR/gitea-swagger.v1.json}
BIN=$ROOT/target/release/aegis-gitea-mcp

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'load-test: %s\n' "$*" >&2; exit 1; }

[ -f "$SPEC" ] || die "the full Gitea document is missing: $SPEC (set GITEA_SPEC or GITEA_SPEC_DIR)"

# ---- the load generator ------------------------------------------------------------------------
GEN=""
if command -v oha >/dev/null 2>&1; then
    GEN=oha; OHA=$(command -v oha)
elif [ -x "$TOOLS/bin/oha" ]; then
    GEN=oha; OHA=$TOOLS/bin/oha
else
    log "installing oha into $TOOLS (cargo install oha --locked; takes a few minutes)"
    if cargo install oha --locked --root "$TOOLS" >&2; then
        GEN=oha; OHA=$TOOLS/bin/oha
    fi
fi
if [ -z "$GEN" ]; then
    if ! command -v wrk >/dev/null 2>&1; then
        log "oha could not be built; installing Debian's wrk"
        apt-get install -y wrk >&2 || { apt-get update >&2 && apt-get install -y wrk >&2; }
    fi
    command -v wrk >/dev/null 2>&1 || die "neither oha nor wrk is available"
    GEN=wrk
fi

# ---- the server --------------------------------------------------------------------------------
log "building the release binary"
cargo build --release >&2

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

KEY=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)
printf '%s' "$KEY" | "$BIN" api-key hash --label load-test >"$WORK/keys"

# No Gitea is needed: find works on the catalog alone. The URL points at a closed port so the
# start-up probe of the token's scopes fails at once. Limits: the highest values accepted.
env -i PATH="$PATH" HOME="${HOME:-/root}" \
    GITEA_URL=http://127.0.0.1:9 \
    GITEA_SPEC="$SPEC" \
    AUTH_MODE=api-key \
    API_KEYS_FILE="$WORK/keys" \
    RATE_LIMIT_PER_IP=1000000 \
    RATE_LIMIT_PER_CREDENTIAL=1000000 \
    AUTH_FAILURES_PER_MINUTE=100000 \
    LOG_LEVEL="warn,aegis_gitea_mcp::mcp::http=info" \
    NO_COLOR=1 \
    "$BIN" serve --http --listen 127.0.0.1:0 2>"$WORK/server.log" &
SERVER_PID=$!

ADDR=""
for _ in $(seq 1 600); do
    ADDR=$(sed -n 's/.*serving MCP over streamable HTTP.*address=\([0-9.:]*\).*/\1/p' "$WORK/server.log" | head -1)
    [ -n "$ADDR" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; die "the server exited"; }
    sleep 0.1
done
[ -n "$ADDR" ] || { cat "$WORK/server.log" >&2; die "the server did not start within 60 s"; }
URL="http://$ADDR/mcp/tool/call"

BODY=$(jq -cn --arg q "$QUERY" '{name: "gitea_find_action", arguments: {query: $q}}')
printf '%s' "$BODY" >"$WORK/body.json"

# One call to check the set-up (200, not an error result).
CHECK=$(curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
    --data-binary @"$WORK/body.json" "$URL")
CODE=$(printf '%s' "$CHECK" | tail -n1)
[ "$CODE" = 200 ] || die "the check call answered $CODE: $CHECK"
printf '%s' "$CHECK" | head -n -1 | jq -e '.isError == false' >/dev/null || die "the check call is an error: $CHECK"
TOP=$(printf '%s' "$CHECK" | head -n -1 | jq -r '.structuredContent.results[0].name // .structuredContent.actions[0].name // empty' 2>/dev/null || true)

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }
RSS_BEFORE=$(rss_kb)

log "$GEN: $CLIENTS clients for $DURATION against POST $URL"
case "$GEN" in
oha)
    # -w: requests in flight at the deadline finish (and count) instead of being aborted.
    "$OHA" --no-tui -w -z "$DURATION" -c "$CLIENTS" -m POST \
        -H "Authorization: Bearer $KEY" -T application/json -D "$WORK/body.json" \
        --output-format json -o "$WORK/result.json" "$URL"
    read -r RPS P50 P99 TOTAL OK OTHER < <(jq -r '[
        .summary.requestsPerSec,
        (.latencyPercentiles.p50 * 1000),
        (.latencyPercentiles.p99 * 1000),
        ([.statusCodeDistribution[]] | add // 0),
        (.statusCodeDistribution["200"] // 0),
        (([.statusCodeDistribution | to_entries[] | select(.key != "200") | .value] | add // 0)
          + ([.errorDistribution[]?] | add // 0))
    ] | @tsv' "$WORK/result.json")
    jq -r '.errorDistribution // {} | to_entries[] | "error: \(.value) × \(.key)"' "$WORK/result.json" >&2
    ;;
wrk)
    cat >"$WORK/post.lua" <<EOF
wrk.method = "POST"
wrk.body = [[$BODY]]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $KEY"
done = function(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read
            + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %f %f %f %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, summary.requests - summary.errors.status, bad))
end
EOF
    wrk -t 2 -c "$CLIENTS" -d "$DURATION" -s "$WORK/post.lua" "$URL" >"$WORK/result.txt"
    read -r RPS P50 P99 TOTAL OK OTHER < <(sed -n 's/^RESULT //p' "$WORK/result.txt")
    ;;
esac

RSS_AFTER=$(rss_kb)
kill "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=""

MET=$(awk -v r="$RPS" -v p="$P99" -v gr="$GOAL_RPS" -v gp="$GOAL_P99_MS" \
    'BEGIN { print (r >= gr && p <= gp) ? "met" : "NOT met" }')
cat <<EOF

finished:        $(date -u +%Y-%m-%dT%H:%M:%SZ)
machine:         $(nproc) cores, $(uname -srm)
generator:       $GEN, $CLIENTS clients, $DURATION, same machine as the server
request:         POST /mcp/tool/call $BODY
top result:      ${TOP:-?}
requests:        $TOTAL ($OK answered 200, $OTHER other answers or errors)
throughput:      $(printf '%.0f' "$RPS") calls/s
latency p50:     $(printf '%.2f' "$P50") ms
latency p99:     $(printf '%.2f' "$P99") ms
server RSS:      $RSS_BEFORE kB before, $RSS_AFTER kB after
goal:            >= $GOAL_RPS calls/s with p99 <= $GOAL_P99_MS ms: $MET
EOF
