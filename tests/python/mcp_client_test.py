"""The official Python MCP SDK (mcp 2.3.0) as a client of aegis-gitea-mcp over stdio.

Run through scripts/python-mcp-tests.sh (which creates the venv and passes --bin/--spec):

    python tests/python/mcp_client_test.py --bin target/debug/aegis-gitea-mcp \
        --spec tests/fixtures/gitea-mini.swagger.json

No Gitea is needed: GITEA_URL points at a closed local port, so the start-up token probe
fails fast and nothing here depends on an instance (validation, withheld actions, resources
that fail before any request, the catalog resources). Plain asserts; every check runs even when
an earlier one fails; the last line is "python mcp client: N passed, M failed" and the exit
status is non-zero when anything failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import sys
import traceback
import warnings
from typing import Any, Awaitable, Callable

from mcp import Client, MCPDeprecationWarning, MCPError, StdioServerParameters, types

DYNAMIC_TOOLS = {"gitea_find_action", "gitea_execute_action", "gitea_api_request"}
# The mini fixture has repoGet but not userGet, issueGetComments, repoGetPullRequest, ...: the
# server announces only the entity templates whose operations the loaded document has.
TEMPLATES = {
    "gitea://actions/{name}",
    "gitea://owner/{owner}",
    "gitea://repo/{owner}/{repo}",
    "gitea://repo/{owner}/{repo}/commit/{sha}",
    "gitea://repo/{owner}/{repo}/commit/{sha}/status",
    "gitea://repo/{owner}/{repo}/issue/{index}",
    "gitea://repo/{owner}/{repo}/issue/{index}/comment/{id}",
    "gitea://repo/{owner}/{repo}/pr/{index}",
}
TIMEOUT = 60.0
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def closed_port() -> int:
    """A local port nothing listens on (bound, read, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_params(binary: str, spec: str, **extra_env: str) -> StdioServerParameters:
    # `env` is merged over the SDK's small default environment (PATH, HOME, ...), so nothing
    # from the host's configuration (GITEA_TOKEN, READ_ONLY, ...) leaks into the server.
    env = {
        "GITEA_URL": f"http://127.0.0.1:{closed_port()}",
        "GITEA_SPEC": spec,
        "GITEA_RETRIES": "0",
        "LOG_LEVEL": "error",
    }
    env.update(extra_env)
    return StdioServerParameters(command=binary, args=["serve"], env=env)


def text_of(result: Any) -> str:
    assert result.content, f"empty content: {result}"
    block = result.content[0]
    assert block.type == "text", f"first block is {block.type}"
    return block.text


def dump(result: Any) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True))[:600]


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed: list[str] = []

    async def run(self, name: str, check: Callable[[], Awaitable[None]]) -> None:
        try:
            await asyncio.wait_for(check(), TIMEOUT)
        except Exception:  # noqa: BLE001 - every failure is reported, the run goes on
            self.failed.append(name)
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()
        else:
            self.passed += 1
            print(f"ok   {name}", flush=True)


async def read_error(client: Client, uri: str) -> MCPError:
    """Reads resource `uri`, which must fail with an MCP error; returns that error."""
    try:
        await client.read_resource(uri)
    except MCPError as e:
        return e
    raise AssertionError(f"{uri} was read")


async def dynamic_surface(client: Client, checks: Checks) -> None:
    async def handshake() -> None:
        # mode="auto": the SDK probes `server/discover` (2026-07-28) first. rmcp 3.11 speaks
        # 2026-07-28, so the probe succeeds and the connection is stateless-modern; a server
        # without it must answer the probe with a JSON-RPC error so the SDK falls back.
        assert client.protocol_version == MODERN, client.protocol_version
        assert client.server_info is not None and client.server_info.name == "aegis-gitea-mcp"
        assert client.instructions and "gitea_find_action" in client.instructions
        caps = client.server_capabilities
        assert caps.tools is not None and caps.resources is not None, caps
        assert caps.prompts is None and caps.logging is None, caps

    async def list_tools() -> None:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == DYNAMIC_TOOLS, [t.name for t in tools]
        for t in tools:
            assert t.description, t.name
            assert t.input_schema.get("type") == "object", t.input_schema
        find = next(t for t in tools if t.name == "gitea_find_action")
        assert find.annotations is not None and find.annotations.read_only_hint is True

    async def call_find() -> None:
        res = await client.call_tool(
            "gitea_find_action", {"query": "list issues of a repository", "limit": 3}
        )
        assert not res.is_error, dump(res)
        top = res.structured_content["results"][0]
        assert top["name"] == "gitea_issue_list", dump(res)
        assert top["required"] == {"owner": "string", "repo": "string"}, top
        assert text_of(res).startswith("1. gitea_issue_list"), text_of(res)

    async def execute_bad_argument() -> None:
        res = await client.call_tool(
            "gitea_execute_action",
            {
                "action": "gitea_issue_get",
                "arguments": {"owner": "alice", "repo": "demo", "index": "abc"},
            },
        )
        assert res.is_error, dump(res)
        assert "index" in text_of(res), text_of(res)

    async def execute_unknown_argument_of_the_tool() -> None:
        res = await client.call_tool(
            "gitea_execute_action", {"action": "gitea_issue_list", "argumnets": {}}
        )
        assert res.is_error, dump(res)
        assert "did you mean `arguments`" in text_of(res), text_of(res)

    async def execute_dry_run_needs_no_gitea() -> None:
        res = await client.call_tool(
            "gitea_execute_action",
            {
                "action": "gitea_issue_create",
                "arguments": {"owner": "alice", "repo": "demo", "body": {"title": "Hi"}},
                "dry_run": True,
            },
        )
        assert not res.is_error, dump(res)
        assert "/repos/alice/demo/issues" in json.dumps(res.structured_content), dump(res)

    async def unreachable_gitea_is_an_error_result() -> None:
        res = await client.call_tool(
            "gitea_execute_action",
            {"action": "gitea_issue_list", "arguments": {"owner": "alice", "repo": "demo"}},
        )
        assert res.is_error, dump(res)
        assert text_of(res), dump(res)

    async def unknown_tool() -> None:
        res = await client.call_tool("no_such_tool", {})
        assert res.is_error, dump(res)
        assert "unknown tool" in text_of(res), text_of(res)

    async def templates() -> None:
        listed = (await client.list_resource_templates()).resource_templates
        assert {t.uri_template for t in listed} == TEMPLATES, [t.uri_template for t in listed]
        resources = (await client.list_resources()).resources
        assert [str(r.uri) for r in resources] == ["gitea://actions"], resources

    async def read_action_card() -> None:
        res = await client.read_resource("gitea://actions/gitea_issue_list")
        assert len(res.contents) == 1, res
        block = res.contents[0]
        assert block.mime_type == "application/json", block
        card = json.loads(block.text)
        assert card["name"] == "gitea_issue_list", card
        assert card["input_schema"]["type"] == "object", card

    async def read_actions() -> None:
        res = await client.read_resource("gitea://actions")
        body = json.loads(res.contents[0].text)
        assert body["columns"] == ["name", "method", "path", "summary"], body
        assert any(row[0] == "gitea_issue_list" for row in body["actions"]), body

    async def read_malformed() -> None:
        for uri in ("gitea://repo/alice/demo/issue/abc", "gitea://repo/a%2Fb/demo"):
            e = await read_error(client, uri)
            assert e.code == -32602, (uri, e.code, e.message)

    async def read_unknown_action() -> None:
        # Resource-not-found is -32602 from 2026-07-28 on (-32002 is retired there).
        e = await read_error(client, "gitea://actions/gitea_no_such_action")
        assert e.code == -32602, (e.code, e.message)
        assert "gitea_no_such_action" in e.message, e.message

    await checks.run("handshake (auto mode: server/discover, 2026-07-28)", handshake)
    await checks.run("list_tools: the three dynamic tools", list_tools)
    await checks.run("call gitea_find_action", call_find)
    await checks.run("execute with a bad argument -> isError", execute_bad_argument)
    await checks.run("execute with a misspelt key -> isError", execute_unknown_argument_of_the_tool)
    await checks.run("execute dry_run needs no Gitea", execute_dry_run_needs_no_gitea)
    await checks.run("unreachable Gitea -> isError result", unreachable_gitea_is_an_error_result)
    await checks.run("unknown tool -> isError result", unknown_tool)
    await checks.run("list_resource_templates and list_resources", templates)
    await checks.run("read gitea://actions/{name}", read_action_card)
    await checks.run("read gitea://actions", read_actions)
    await checks.run("malformed resource -> MCPError -32602", read_malformed)
    await checks.run("unknown action resource -> MCPError -32602 (2026-07-28)", read_unknown_action)


async def legacy_read_only(binary: str, spec: str, checks: Checks) -> None:
    params = server_params(binary, spec, READ_ONLY="true", DISABLED_TOOLS="gitea_issue_get,gitea_repo_get")
    async with Client(params, mode="legacy", read_timeout_seconds=TIMEOUT) as client:

        async def handshake() -> None:
            assert client.protocol_version == LEGACY, client.protocol_version
            assert client.server_info is not None and client.server_info.name == "aegis-gitea-mcp"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.send_ping()

        async def legacy_error_codes() -> None:
            # Handshake-era peers keep -32002 for resource-not-found; -32602 stays for
            # malformed parameters.
            for uri, code in (
                ("gitea://actions/gitea_no_such_action", -32002),
                ("gitea://repo/alice/demo/issue/abc", -32602),
            ):
                e = await read_error(client, uri)
                assert e.code == code, (uri, e.code, e.message)

        async def read_only_tools() -> None:
            tools = (await client.list_tools()).tools
            assert {t.name for t in tools} == DYNAMIC_TOOLS
            for t in tools:
                assert t.annotations is not None and t.annotations.read_only_hint is True, t

        async def withheld_write() -> None:
            res = await client.call_tool(
                "gitea_execute_action",
                {"action": "gitea_issue_create", "arguments": {"owner": "a", "repo": "b"}},
            )
            assert res.is_error, dump(res)
            assert "READ_ONLY" in text_of(res), text_of(res)
            assert res.structured_content["withheld"]["code"] == "read_only", dump(res)

        async def withheld_resource() -> None:
            e = await read_error(client, "gitea://repo/alice/demo")
            assert "DISABLED_TOOLS" in e.message, e.message
            assert e.code != -32003, e.code

        await checks.run("legacy handshake + ping", handshake)
        await checks.run("legacy error codes (-32002, -32602)", legacy_error_codes)
        await checks.run("READ_ONLY: every tool readOnlyHint", read_only_tools)
        await checks.run("READ_ONLY: a write is withheld with the reason", withheld_write)
        await checks.run("DISABLED_TOOLS: a withheld resource names the reason", withheld_resource)


DELETE = {"action": "gitea_repo_delete", "arguments": {"owner": "alice", "repo": "demo"}}


def has_token(res: Any) -> bool:
    """True when an answer carries a confirmation token (the `c<expiry>.` spelling)."""
    return '"confirm"' in dump(res) or " c1" in text_of(res) or '"c1' in text_of(res)


async def elicitation(binary: str, spec: str, checks: Checks) -> None:
    """Destructive calls are confirmed by the person through the client's elicitation form, on
    2025-11-25 as a server-to-client request and on 2026-07-28 in input_required rounds; the
    model never sees a token there. Gitea is a closed port: an
    accepted delete is sent and fails to connect (code "transport"), proof it went through."""
    answer: dict[str, Any] = {}
    asked: list[str] = []

    async def person(context: Any, params: Any) -> Any:
        asked.append(params.message)
        return types.ElicitResult(**answer)

    for mode, era in (("legacy", LEGACY), ("auto", MODERN)):
        async with Client(
            server_params(binary, spec),
            mode=mode,
            read_timeout_seconds=TIMEOUT,
            elicitation_callback=person,
        ) as client:

            async def accepted() -> None:
                assert client.protocol_version == era, client.protocol_version
                answer.clear()
                answer.update(action="accept", content={"allow": True})
                res = await client.call_tool("gitea_execute_action", DELETE)
                assert asked and "gitea_repo_delete" in asked[-1] and "DELETE" in asked[-1], asked
                assert res.is_error and res.structured_content["code"] == "transport", dump(res)
                assert not has_token(res), dump(res)

            async def declined() -> None:
                for action, content, code in (
                    ("decline", None, "confirmation_declined"),
                    ("accept", {"allow": False}, "confirmation_declined"),
                    ("cancel", None, "confirmation_cancelled"),
                ):
                    answer.clear()
                    answer.update(action=action, content=content)
                    before = len(asked)
                    res = await client.call_tool("gitea_execute_action", DELETE)
                    assert len(asked) == before + 1, asked
                    assert res.is_error and res.structured_content["code"] == code, (action, dump(res))
                    assert "nothing was sent" in text_of(res), text_of(res)
                    assert not has_token(res), dump(res)

            how = "server-to-client request" if mode == "legacy" else "input_required rounds"
            await checks.run(f"elicitation ({era}, {how}): accept lets the call through", accepted)
            await checks.run(f"elicitation ({era}, {how}): decline, allow=false, cancel", declined)

    # A client that cannot ask keeps the token flow, on either era.
    for mode, era in (("legacy", LEGACY), ("auto", MODERN)):
        async with Client(server_params(binary, spec), mode=mode, read_timeout_seconds=TIMEOUT) as client:

            async def token_flow() -> None:
                before = len(asked)
                res = await client.call_tool("gitea_execute_action", DELETE)
                assert not res.is_error, dump(res)
                assert res.structured_content["confirmation_required"] is True, dump(res)
                assert len(asked) == before, "the person was not asked"

            await checks.run(f"no elicitation capability ({era}): the token flow", token_flow)

    # CONFIRM_VIA=elicitation: a client that cannot ask is refused, and gets no token.
    params = server_params(binary, spec, CONFIRM_VIA="elicitation")
    async with Client(params, mode="legacy", read_timeout_seconds=TIMEOUT) as client:

        async def refused() -> None:
            res = await client.call_tool("gitea_execute_action", DELETE)
            assert res.is_error, dump(res)
            assert res.structured_content["code"] == "confirmation_unavailable", dump(res)
            assert not has_token(res), dump(res)

        await checks.run("CONFIRM_VIA=elicitation: a client that cannot ask is refused", refused)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="the aegis-gitea-mcp binary")
    parser.add_argument("--spec", required=True, help="the swagger document to serve")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    spec = os.path.abspath(args.spec)
    checks = Checks()

    async def connect_and_run() -> None:
        async with Client(server_params(binary, spec), read_timeout_seconds=TIMEOUT) as client:
            await dynamic_surface(client, checks)

    for name, part in (
        ("dynamic surface (auto mode)", connect_and_run),
        ("read-only server (legacy mode)", lambda: legacy_read_only(binary, spec, checks)),
        ("confirmation by the person", lambda: elicitation(binary, spec, checks)),
    ):
        try:
            await asyncio.wait_for(part(), 4 * TIMEOUT)
        except Exception:  # noqa: BLE001 - a connection failure counts as one failed check
            checks.failed.append(name)
            print(f"FAIL {name}", flush=True)
            traceback.print_exc()

    if checks.failed:
        print("failed: " + "; ".join(checks.failed), flush=True)
    print(f"python mcp client: {checks.passed} passed, {len(checks.failed)} failed", flush=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
