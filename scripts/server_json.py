#!/usr/bin/env python3
"""server.json (the MCP registry's description of this server) against the registry's schema.

    server_json.py check --schema SCHEMA [--bundle FILE.mcpb] SERVER_JSON
    server_json.py fill --sha256 HEX --identifier URL [--repository OWNER/NAME] IN OUT

`check` validates SERVER_JSON against SCHEMA (the registry's published server.schema.json; its
sha256 must be the pinned one), then applies the rules the official registry adds at publish time
for an MCPB package (an https GitHub/GitLab release URL containing "mcp", one exact version) and
holds the file to this repository: its versions are Cargo.toml's, and its environment variables
are exactly those of bundle/manifest.json's mcp_config.env (secret, required and default alike).
With --bundle the package's fileSha256 must be that file's sha256 and its URL must end with the
file's name. The placeholder owner OWNER is accepted with a notice.

`fill` writes the publishable copy: IN with the version from Cargo.toml, the package's
identifier and fileSha256, and (with --repository) the real owner in name and repository.url.

Needs the `jsonschema` package (scripts/bundle.sh runs this in a venv that has it).
"""

import argparse
import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# sha256 of the published 2025-12-11 schema, as shipped by the PyPI package skillsaw 0.22.0.
SCHEMA_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
PLACEHOLDER_OWNER = "OWNER"
VERSION_RANGE = re.compile(r"[\^~<>=*\s|]|(^|\.)[xX](\.|$)|^latest$")
MCPB_URL = re.compile(r"^https://(github\.com/[^/]+/[^/]+/releases/download/|gitlab\.com/)")


def cargo_version():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["package"]["version"]


def manifest():
    return json.loads((ROOT / "bundle" / "manifest.json").read_text())


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def schema_problems(doc, schema_path):
    from jsonschema import Draft7Validator, FormatChecker

    raw = Path(schema_path).read_bytes()
    got = hashlib.sha256(raw).hexdigest()
    if got != SCHEMA_SHA256:
        return [f"{schema_path}: sha256 {got} is not the pinned {SCHEMA_SHA256}"]
    schema = json.loads(raw)
    if schema.get("$id") != SCHEMA_URL:
        return [f"{schema_path}: $id {schema.get('$id')} is not {SCHEMA_URL}"]
    validator = Draft7Validator(schema, format_checker=FormatChecker())
    return [
        f"schema: /{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    ]


def registry_problems(doc):
    """The official registry's own rules for this kind of entry (beyond the schema)."""
    problems = []
    if doc.get("$schema") != SCHEMA_URL:
        problems.append(f"$schema must be {SCHEMA_URL}")
    if not re.fullmatch(r"io\.github\.[A-Za-z0-9-]+/[A-Za-z0-9._-]+", doc.get("name", "")):
        problems.append(f"name {doc.get('name')!r} is not io.github.<owner>/<server>")
    for where, v in [("version", doc.get("version"))] + [
        (f"packages[{i}].version", p.get("version"))
        for i, p in enumerate(doc.get("packages", []))
        if "version" in p
    ]:
        if not isinstance(v, str) or VERSION_RANGE.search(v):
            problems.append(f"{where} {v!r} must be one exact version")
    for i, p in enumerate(doc.get("packages", [])):
        if p.get("registryType") != "mcpb":
            continue
        url = p.get("identifier", "")
        if not MCPB_URL.match(url):
            problems.append(f"packages[{i}].identifier must be a GitHub or GitLab release URL: {url}")
        if "mcp" not in url.lower():
            problems.append(f"packages[{i}].identifier must contain 'mcp': {url}")
    return problems


def repository_problems(doc):
    """What this repository's own files say the entry must be."""
    problems = []
    version = cargo_version()
    if doc.get("version") != version:
        problems.append(f"version {doc.get('version')!r} is not Cargo.toml's {version!r}")
    packages = [p for p in doc.get("packages", []) if p.get("registryType") == "mcpb"]
    if len(packages) != 1:
        return problems + [f"expected one mcpb package, found {len(packages)}"]
    p = packages[0]
    if p.get("version", version) != version:
        problems.append(f"the package's version {p['version']!r} is not {version!r}")
    if f"/v{version}/" not in p["identifier"] or f"-{version}-" not in p["identifier"]:
        problems.append(f"the package URL does not name version {version}: {p['identifier']}")
    if p.get("transport") != {"type": "stdio"}:
        problems.append(f"the package's transport must be stdio: {p.get('transport')}")
    m = manifest()
    env = m["server"]["mcp_config"].get("env", {})
    described = {e["name"]: e for e in p.get("environmentVariables", [])}
    if set(described) != set(env):
        problems.append(
            f"environmentVariables {sorted(described)} are not bundle/manifest.json's "
            f"mcp_config.env {sorted(env)}"
        )
    for name, value in env.items():
        e = described.get(name)
        key = re.fullmatch(r"\$\{user_config\.([A-Za-z0-9_]+)\}", value)
        if e is None or key is None:
            continue
        option = m.get("user_config", {}).get(key.group(1), {})
        if bool(e.get("isSecret", False)) != bool(option.get("sensitive", False)):
            problems.append(f"{name}: isSecret differs from user_config.{key.group(1)}.sensitive")
        if bool(e.get("isRequired", False)) != bool(option.get("required", False)):
            problems.append(f"{name}: isRequired differs from user_config.{key.group(1)}.required")
        default = option.get("default")
        if isinstance(default, bool):
            default = "true" if default else "false"
        if default not in (None, "") and e.get("default") != str(default):
            problems.append(
                f"{name}: default {e.get('default')!r} is not user_config's {str(default)!r}"
            )
    return problems


def bundle_problems(doc, bundle):
    p = next(p for p in doc["packages"] if p.get("registryType") == "mcpb")
    problems = []
    digest = sha256_of(bundle)
    if p.get("fileSha256") != digest:
        problems.append(f"fileSha256 {p.get('fileSha256')} is not {bundle}'s sha256 {digest}")
    if not p["identifier"].endswith("/" + Path(bundle).name):
        problems.append(f"the package URL does not end with {Path(bundle).name}: {p['identifier']}")
    return problems


def check(args):
    doc = json.loads(Path(args.server_json).read_text())
    problems = schema_problems(doc, args.schema)
    problems += registry_problems(doc)
    problems += repository_problems(doc)
    if args.bundle:
        problems += bundle_problems(doc, args.bundle)
    if problems:
        print(f"{args.server_json}: INVALID", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)
        return 1
    notes = []
    if PLACEHOLDER_OWNER in json.dumps(doc):
        notes.append(f"placeholder owner {PLACEHOLDER_OWNER} (pack with GITHUB_REPOSITORY=owner/name)")
    if not args.bundle:
        notes.append("fileSha256 not compared with a bundle (no --bundle)")
    print(
        f"{args.server_json}: valid against {SCHEMA_URL} (sha256 {SCHEMA_SHA256[:12]}…) and the "
        f"registry's mcpb rules; name {doc['name']}, version {doc['version']}"
        + "".join(f"; {n}" for n in notes)
    )
    return 0


def fill(args):
    doc = json.loads(Path(args.input).read_text())
    version = cargo_version()
    doc["version"] = version
    if args.repository:
        owner, name = args.repository.split("/", 1)
        doc["name"] = re.sub(r"^io\.github\.[^/]+/", f"io.github.{owner}/", doc["name"])
        doc["repository"]["url"] = f"https://github.com/{owner}/{name}"
    p = next(p for p in doc["packages"] if p.get("registryType") == "mcpb")
    p["identifier"] = args.identifier
    p["version"] = version
    p["fileSha256"] = args.sha256
    Path(args.output).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--schema", required=True)
    c.add_argument("--bundle")
    c.add_argument("server_json")
    f = sub.add_parser("fill")
    f.add_argument("--sha256", required=True)
    f.add_argument("--identifier", required=True)
    f.add_argument("--repository")
    f.add_argument("input")
    f.add_argument("output")
    args = ap.parse_args()
    return check(args) if args.cmd == "check" else fill(args)


if __name__ == "__main__":
    sys.exit(main())
