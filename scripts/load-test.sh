#!/usr/bin/env bash
# Load test of the HTTP gateway: concurrent clients calling `POST /mcp/tool/call` with a
# `gitea_find_action` body (a real search over the full Gitea catalog), in API-key mode, with the
# rate limits raised out of the way. Prints throughput, p50/p99 latency and the server's RSS
# before and after, and whether the goal (>= 5,000 calls/s with p99 <= 20 ms) is met.
#
#   scripts/load-test.sh                 # 16 clients, 30 s
#   CLIENTS=32 DURATION=60s scripts/load-test.sh
#   REPLICAS=2 DURATION=10s scripts/load-test.sh
#
# REPLICAS=2 compares, with the same load generator: one replica direct; one replica with a
# shared Redis (REDIS_URL: every request checks its rate limits there); two replicas with that
# Redis behind HAProxy (round robin). It also times an execute call (a dry run of a write, which
# asks the flow guard's shared memory) with and without Redis: the extra latency of the Redis
# round trips. Needs redis-server and haproxy (Debian packages; installed when missing).
#
# Settings (environment): CLIENTS (16), DURATION (30s), QUERY ("merge a pull request"),
# GITEA_SPEC (default: $GITEA_SPEC_DIR or ../shared/spec, gitea-swagger.v1.json),
# LOAD_TEST_TOOLS (where oha is installed, default target/tools), GOAL_RPS (5000),
# GOAL_P99_MS (20), LOAD_GEN (oha or wrk: use that one), REPLICAS (1 or 2).
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
REPLICAS=${REPLICAS:-1}
case "${LOAD_GEN:-}" in
wrk)
    command -v wrk >/dev/null 2>&1 || apt-get install -y wrk >&2 || { apt-get update >&2 && apt-get install -y wrk >&2; }
    GEN=wrk
    ;;
oha | "") ;;
*) die "LOAD_GEN must be oha or wrk" ;;
esac
if [ -n "$GEN" ]; then
    :
elif command -v oha >/dev/null 2>&1; then
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

# ---- the servers -------------------------------------------------------------------------------
log "building the release binary"
cargo build --release >&2

WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$WORK"
}
trap cleanup EXIT

KEY=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)
printf '%s' "$KEY" | "$BIN" api-key hash --label load-test >"$WORK/keys"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/confirm.key"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_server NAME [VAR=value...]: a replica; sets ADDR and SERVER_PID.
# No Gitea is needed: find and dry runs work on the catalog alone. The URL points at a closed
# port so the start-up probe of the token's scopes fails at once. Limits: the highest accepted.
start_server() {
    local name=$1
    shift
    env -i PATH="$PATH" HOME="${HOME:-/root}" \
        GITEA_URL=http://127.0.0.1:9 \
        GITEA_SPEC="$SPEC" \
        AUTH_MODE=api-key \
        API_KEYS_FILE="$WORK/keys" \
        RATE_LIMIT_PER_IP=1000000 \
        RATE_LIMIT_PER_CREDENTIAL=1000000 \
        AUTH_FAILURES_PER_MINUTE=100000 \
        REPLICA_ID="$name" \
        LOG_LEVEL="warn,aegis_gitea_mcp::http=info" \
        NO_COLOR=1 \
        "$@" \
        "$BIN" serve --http --stateless --listen 127.0.0.1:0 2>"$WORK/$name.log" &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    ADDR=""
    for _ in $(seq 1 600); do
        ADDR=$(sed -n 's/.*serving MCP over streamable HTTP.*address=\([0-9.:]*\).*/\1/p' "$WORK/$name.log" | head -1)
        [ -n "$ADDR" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/$name.log" >&2; die "$name exited"; }
        sleep 0.1
    done
    [ -n "$ADDR" ] || { cat "$WORK/$name.log" >&2; die "$name did not start within 60 s"; }
}

BODY=$(jq -cn --arg q "$QUERY" '{name: "gitea_find_action", arguments: {query: $q}}')
printf '%s' "$BODY" >"$WORK/body.json"
# A write as a dry run: validated, policy-checked, guarded (the flow guard asks what the caller
# read) and previewed, never sent.
EXEC_BODY='{"name":"gitea_execute_action","arguments":{"action":"gitea_issue_create_comment","dry_run":true,"arguments":{"owner":"alice","repo":"demo","index":1,"body":{"body":"load"}}}}'
printf '%s' "$EXEC_BODY" >"$WORK/exec.json"

# check URL BODYFILE: one call answered 200 and not an error result; prints the top result.
check() {
    local out code
    out=$(curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        --data-binary @"$2" "$1")
    code=$(printf '%s' "$out" | tail -n1)
    [ "$code" = 200 ] || die "the check call answered $code: $out"
    printf '%s' "$out" | head -n -1 | jq -e '.isError == false' >/dev/null || die "the check call is an error: $out"
    printf '%s' "$out" | head -n -1 | jq -r '.structuredContent.results[0].name // .structuredContent.action // empty' 2>/dev/null || true
}

# load URL BODYFILE CLIENTS DURATION: sets RPS P50 P99 TOTAL OK OTHER.
load() {
    local url=$1 file=$2 clients=$3 duration=$4
    log "$GEN: $clients clients for $duration against POST $url ($(jq -r .name "$file"))"
    case "$GEN" in
    oha)
        # -w: requests in flight at the deadline finish (and count) instead of being aborted.
        "$OHA" --no-tui -w -z "$duration" -c "$clients" -m POST \
            -H "Authorization: Bearer $KEY" -T application/json -D "$file" \
            --output-format json -o "$WORK/result.json" "$url"
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
        {
            echo 'wrk.method = "POST"'
            echo "wrk.body = [[$(cat "$file")]]"
            echo 'wrk.headers["Content-Type"] = "application/json"'
            echo "wrk.headers[\"Authorization\"] = \"Bearer $KEY\""
            cat <<'LUA'
done = function(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read
            + summary.errors.write + summary.errors.timeout
  io.write(string.format("RESULT %f %f %f %d %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, summary.requests - summary.errors.status, bad))
end
LUA
        } >"$WORK/post.lua"
        wrk -t "$((clients < 2 ? clients : 2))" -c "$clients" -d "$duration" -s "$WORK/post.lua" "$url" >"$WORK/result.txt"
        read -r RPS P50 P99 TOTAL OK OTHER < <(sed -n 's/^RESULT //p' "$WORK/result.txt")
        ;;
    esac
}

# row LABEL: one line of the comparison table from the last load.
row() {
    printf '%-44s %9.0f %9.2f %9.2f %12s\n' "$1" "$RPS" "$P50" "$P99" "$OK/$TOTAL"
}

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

if [ "$REPLICAS" = 1 ]; then
    start_server replica-1
    URL="http://$ADDR/mcp/tool/call"
    TOP=$(check "$URL" "$WORK/body.json")
    RSS_BEFORE=$(rss_kb "$SERVER_PID")
    load "$URL" "$WORK/body.json" "$CLIENTS" "$DURATION"
    RSS_AFTER=$(rss_kb "$SERVER_PID")
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
    exit 0
fi
[ "$REPLICAS" = 2 ] || die "REPLICAS must be 1 or 2"

# ---- two replicas: Redis, HAProxy --------------------------------------------------------------
if ! command -v redis-server >/dev/null 2>&1 || ! command -v haproxy >/dev/null 2>&1; then
    log "installing redis-server and haproxy (Debian)"
    apt-get install -y redis-server haproxy >&2 || { apt-get update >&2 && apt-get install -y redis-server haproxy >&2; }
fi
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 1 100); do
    grep -q 'Ready to accept connections' "$WORK/redis.log" && break
    sleep 0.1
done
grep -q 'Ready to accept connections' "$WORK/redis.log" || { cat "$WORK/redis.log" >&2; die "redis did not start"; }
SHARED=(REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" CONFIRM_KEY_FILE="$WORK/confirm.key")

start_server alone
ALONE="http://$ADDR/mcp/tool/call"
start_server a "${SHARED[@]}"
A_ADDR=$ADDR
A_URL="http://$A_ADDR/mcp/tool/call"
start_server b "${SHARED[@]}"
B_ADDR=$ADDR

LB_PORT=$(free_port)
cat >"$WORK/haproxy.cfg" <<EOF
global
  maxconn 4096
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
frontend mcp
  bind 127.0.0.1:$LB_PORT
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk
  http-check send meth GET uri / ver HTTP/1.1 hdr Host localhost
  server a $A_ADDR check inter 1s
  server b $B_ADDR check inter 1s
EOF
haproxy -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.log" 2>&1 &
PIDS+=("$!")
LB="http://127.0.0.1:$LB_PORT/mcp/tool/call"
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$LB_PORT/" >/dev/null 2>&1 && break
    sleep 0.1
done

for u in "$ALONE" "$A_URL" "$LB"; do
    check "$u" "$WORK/body.json" >/dev/null
    check "$u" "$WORK/exec.json" >/dev/null
done

RESULTS=$WORK/results.txt
{
    printf '%-44s %9s %9s %9s %12s\n' "find (\"$QUERY\"), $CLIENTS clients" "calls/s" "p50 ms" "p99 ms" "200/all"
    load "$ALONE" "$WORK/body.json" "$CLIENTS" "$DURATION"
    row "one replica, no Redis, direct"
    load "$A_URL" "$WORK/body.json" "$CLIENTS" "$DURATION"
    row "one replica with Redis, direct"
    load "$LB" "$WORK/body.json" "$CLIENTS" "$DURATION"
    row "two replicas with Redis, through HAProxy"
    printf '%-44s %9s %9s %9s %12s\n' "execute (dry run of a write), 1 client" "calls/s" "p50 ms" "p99 ms" "200/all"
    load "$ALONE" "$WORK/exec.json" 1 "$DURATION"
    row "one replica, no Redis"
    load "$A_URL" "$WORK/exec.json" 1 "$DURATION"
    row "one replica with Redis"
} >"$RESULTS"
cat <<EOF

finished:        $(date -u +%Y-%m-%dT%H:%M:%SZ)
machine:         $(nproc) cores, $(uname -srm); $(redis-server --version | cut -d' ' -f1-3), $(haproxy -v | sed -n 1p | cut -d' ' -f1-3)
generator:       $GEN, $DURATION per line, on the same machine as every server
EOF
cat "$RESULTS"
