#!/usr/bin/env python3
"""The official Python Agent SDK (`claude-agent-sdk`) as the panel.

For the main scenarios of every recorded ACP agent, the SDK's
`ClaudeSDKClient` runs with `cli_path` pointing at `acp-bridge`, whose agent
is `acp-harness fake-agent <recording>` (the recording served on stdio, so no
network is needed). Checked per case:

- the SDK receives the scenario's tool calls as `ToolUseBlock`s under their
  Claude names;
- its `can_use_tool` callback is asked, and its answer reaches the agent (the
  fake agent serves the rest of the recording only when the bridge's answer
  matches the recorded one; a mismatch is a `fake-agent: divergence` on
  stderr, and the allowed tool's output arrives);
- images arrive as image blocks inside the `ToolResultBlock`;
- every turn ends in a `ResultMessage` that parses;
- every line the bridge printed passes the SDK's own message parser;
- every client method that sends a control request answers as its row of
  contracts/sdk-surface/matrix.toml says (see `check_controls`);
- the SDK's `get_mcp_status()` lists the panel's server (unknown, or
  connected once a call reached it, when the agent did not take it), and its `get_context_usage()` answers from the
  agent's last `usage_update` (an error naming it when the agent sent none);
- the bridge exits 0.

With `--ts <node_modules>`, each case runs through the TypeScript Agent SDK
(`@anthropic-ai/claude-agent-sdk` installed there) via tests/sdk_e2e_ts.mjs,
with the same checks, twice: with the MCP servers on the command line
(`mcpServersDelivery: 'argv'`, `--mcp-config`) and in the `initialize`
request (`'initialize'`, `--await-initialize`), where the SDK's answer must
also say `mcp_servers_applied`: true exactly when the agent took the server
(the recorded session/new carried it). The Python SDK has only the command
line.

Usage: python tests/sdk_e2e.py [--bridge PATH] [--harness PATH] [--filter S]
[--ts NODE_MODULES] (defaults: target/debug/acp-bridge, target/debug/acp-harness;
build them first). Exit 0 when every case passed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import inspect
import json
import re
import os
import shlex
import sys
import tempfile
import tomllib
from types import SimpleNamespace
from dataclasses import dataclass, field
from pathlib import Path

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk._internal.message_parser import parse_message

ROOT = Path(__file__).resolve().parent.parent
# The scenarios every agent is run through: text, a tool call allowed, an
# image result, a denied call.
MAIN_SCENARIOS = ["text-only", "unity-call-allowed", "screenshot", "permission-denied"]
TURN_TIMEOUT_S = 60
# Longest a control method may take: the bridge answers each at once or
# within its own control timeout; past this it hangs.
CONTROL_TIMEOUT_S = 15


def py_controls(mode: str) -> list[tuple[str, list, str]]:
    """Every method of the Python client that sends a control request:
    (method, arguments, subtype), with arguments the bridge answers without
    asking the recorded agent anything it did not record (the session's own
    permission mode, no model)."""
    return [
        ("interrupt", [], "interrupt"),
        ("set_permission_mode", [mode], "set_permission_mode"),
        ("set_model", [None], "set_model"),
        ("rewind_files", ["msg-0"], "rewind_files"),
        ("reconnect_mcp_server", ["unity-ops"], "mcp_reconnect"),
        ("toggle_mcp_server", ["unity-ops", True], "mcp_toggle"),
        ("stop_task", ["task-0"], "stop_task"),
        ("get_mcp_status", [], "mcp_status"),
        ("get_context_usage", [], "get_context_usage"),
    ]


# The client's public methods that send no control request.
PY_WITHOUT_CONTROL = {"connect", "disconnect", "query", "receive_messages", "receive_response", "get_server_info"}


def ts_controls(mode: str) -> list[tuple[str, list, str]]:
    """The same for the TypeScript SDK's `Query` (tests/sdk_e2e_ts.mjs calls
    each by name)."""
    return [
        ("interrupt", [], "interrupt"),
        ("setPermissionMode", [mode], "set_permission_mode"),
        ("setMcpPermissionModeOverride", ["unity-ops", None], "set_mcp_permission_mode_override"),
        ("setModel", [], "set_model"),
        ("setMaxThinkingTokens", [None], "set_max_thinking_tokens"),
        ("applyFlagSettings", [{}], "apply_flag_settings"),
        ("updateSettings", ["localSettings", {}], "update_settings"),
        ("reinitialize", [], "initialize"),
        ("mcpServerStatus", [], "mcp_status"),
        ("getContextUsage", [], "get_context_usage"),
        ("usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET", [{"skipBehaviors": True}], "get_usage"),
        ("readFile", ["notes.md"], "read_file"),
        ("reloadPlugins", [], "reload_plugins"),
        ("reloadSkills", [], "reload_skills"),
        ("reloadOutputStyles", [], "reload_output_styles"),
        ("rewindFiles", ["msg-0"], "rewind_files"),
        ("seedReadState", ["notes.md", 0], "seed_read_state"),
        ("reconnectMcpServer", ["unity-ops"], "mcp_reconnect"),
        ("toggleMcpServer", ["unity-ops", True], "mcp_toggle"),
        ("readMcpResource", ["unity-ops", "unity://scene"], "mcp_read_resource"),
        ("setMcpServers", [{}], "mcp_set_servers"),
        ("stopTask", ["task-0"], "stop_task"),
        ("backgroundTasks", [], "background_tasks"),
    ]


# Query's methods that send no control request (they read the initialize
# answer, or drive the stream).
TS_WITHOUT_CONTROL = {
    "initializationResult", "supportedCommands", "supportedModels", "supportedAgents",
    "accountInfo", "streamInput", "close",
}
# Methods whose SDK turns a control error into a value of its own: readFile
# answers null for a file it cannot read.
TS_SWALLOWS = {"readFile": None}
# The errors a mapped request may end in, each naming its cause.
MAPPED_ERRORS = {
    "set_permission_mode": "offers no mode",
    "get_context_usage": "usage_update",
    "set_max_thinking_tokens": "thought-level",
}


@functools.cache
def matrix_rows() -> dict[str, dict]:
    with open(ROOT / "contracts/sdk-surface/matrix.toml", "rb") as f:
        return {r["subtype"]: r for r in tomllib.load(f)["control"]}


def uncovered_methods() -> list[str]:
    """Public methods of either SDK that send a control request but that no
    table above calls: a new SDK method fails the suite until it is added."""
    declared = {
        name
        for name, _ in inspect.getmembers(ClaudeSDKClient)
        if not name.startswith("_") and callable(getattr(ClaudeSDKClient, name))
    }
    called = {m for m, _, _ in py_controls("default")} | PY_WITHOUT_CONTROL
    out = [f"python ClaudeSDKClient.{m}" for m in sorted(declared - called)]
    out += [f"python table names {m}, which ClaudeSDKClient has not" for m in sorted(called - declared)]
    return out


def ts_uncovered_methods(node_modules: Path) -> list[str]:
    """The same for the TypeScript `Query` interface in its sdk.d.ts."""
    dts = (node_modules / "@anthropic-ai/claude-agent-sdk/sdk.d.ts").read_text()
    body = dts.split("export declare interface Query extends", 1)[1].split("\n}", 1)[0]
    declared = set(re.findall(r"^    (\w+)\(", body, re.M))
    called = {m for m, _, _ in ts_controls("default")} | TS_WITHOUT_CONTROL
    out = [f"typescript Query.{m}" for m in sorted(declared - called)]
    out += [f"typescript table names {m}, which Query has not" for m in sorted(called - declared)]
    return out


async def call_controls(target, calls) -> list[dict]:
    """Calls each method, bounded: what it returned, raised, or that it hung."""
    out = []
    for method, args, subtype in calls:
        o = {"method": method, "subtype": subtype}
        try:
            value = await asyncio.wait_for(getattr(target, method)(*args), CONTROL_TIMEOUT_S)
            o.update(ok=True, value=value)
        except asyncio.TimeoutError:
            o.update(ok=False, timeout=True)
        except Exception as e:  # the SDK's own error path
            o.update(ok=False, error=str(e))
        out.append(o)
    return out


def check_controls(case: Case, outcomes: list[dict], swallows: dict | None = None) -> None:
    """Each control method against its matrix row: a mapped or local one
    returns (or fails naming its cause, never unsupported); an unsupported
    one fails through the SDK's error path naming the subtype (or returns
    the value the SDK makes of that failure); none hangs."""
    fail = case.failures.append
    rows = matrix_rows()
    for o in outcomes:
        method, subtype = o["method"], o["subtype"]
        row = rows.get(subtype)
        if row is None:
            fail(f"{method}: no matrix row for {subtype}")
        elif o.get("timeout"):
            fail(f"{method} ({subtype}) hung past {CONTROL_TIMEOUT_S} s")
        elif row["bridge"] == "unsupported":
            if swallows and method in swallows:
                if not o["ok"] or o.get("value") != swallows[method]:
                    fail(f"{method} ({subtype}): expected the SDK's {swallows[method]!r}, got {o}")
            elif o["ok"] or subtype not in o.get("error", ""):
                fail(f"{method} ({subtype}) is unsupported by its row, but the SDK {'returned' if o['ok'] else 'raised'}: {o.get('value', o.get('error'))}")
        elif not o["ok"]:
            why = o.get("error", "")
            cause = MAPPED_ERRORS.get(subtype)
            if "unsupported" in why or cause is None or cause not in why:
                fail(f"{method} ({subtype}) is {row['bridge']} by its row, but failed: {why}")


@dataclass
class Case:
    recording: Path
    agent: str
    scenario: str
    prompts: list[str]
    decisions: list[str]
    tools: list[str]
    # The recorder's placeholders, which the bridge must send as recorded.
    authorization: str
    # What the recorded agent did: how many permission requests it sent
    # (codex 0.x runs MCP tools without asking), and whether a PNG image
    # reached it (Gemini CLI passes only the text `[Image: image/png]`).
    permission_requests: int
    agent_saw_image: bool
    # Whether the agent reported a tool call at all (an agent whose MCP
    # connection failed never calls the tool).
    agent_called_tools: bool
    # Whether the recorded session/new or session/load carried the MCP server
    # (the agent advertises mcpCapabilities.http): only then is a server
    # sent in the initialize request applied.
    agent_took_server: bool
    # Whether the agent sent a usage_update with the context used and its size.
    agent_sent_usage: bool
    # How the panel hands the bridge its MCP servers: "argv" (--mcp-config)
    # or "initialize" (the initialize request, TypeScript SDK only).
    mcp_delivery: str = "argv"
    # The ACP revision the recording negotiated: the bridge offers the same.
    protocol: int = 1
    # Whether some call the agent reported completed (codex-acp 2.6.0 under
    # ACP v2 fails every MCP call that needs approval itself).
    agent_completed_calls: bool = True
    failures: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.agent}/{self.scenario} [mcp via {self.mcp_delivery}]"


def raw_of(event: dict, recording: Path) -> str:
    """An event's raw frame as the agent sent it: payloads stored by content
    (recording format 2, docs/recording-format.md) put back in place of
    their markers, from the nearest `blobs/sha256` above the recording."""
    raw = event["raw"]
    refs = event.get("blobs")
    if not refs:
        return raw
    store = next(d / "blobs" / "sha256" for d in recording.parents if (d / "blobs" / "sha256").is_dir())
    out, at = [], 0
    for ref in refs:
        marker = f"<blob:sha256:{ref['sha256']}>"
        start = len(raw.encode()[: ref["at"]].decode())
        if not raw.startswith(marker, start):
            raise ValueError(f"{recording}: blob {ref['sha256']} does not stand at byte {ref['at']}")
        out += [raw[at:start], (store / ref["sha256"]).read_text()]
        at = start + len(marker)
    return "".join(out) + raw[at:]


def load_case(recording: Path) -> Case | None:
    header = json.loads(recording.open().readline())
    if header.get("protocol") == "stream-json":
        return None  # Claude Code itself, not an ACP agent
    scenario = header["scenario"]
    if scenario not in MAIN_SCENARIOS:
        return None
    doc = tomllib.loads((ROOT / "scenarios" / f"{scenario}.toml").read_text())
    prompts, decisions, tools = [], [], []
    for step in doc.get("step", []):
        if step["panel"] == "prompt":
            if step.get("images"):
                raise SystemExit(f"{scenario}: prompt images are not supported by this test yet")
            prompts.append(step["text"])
            for reply in step.get("model", []):
                tools += [f"mcp__unity-ops__{c['tool']}" for c in reply.get("tool_calls", []) if c.get("tool")]
        elif step["panel"] == "permission":
            decisions.append(step["decision"])
        else:
            return None
    # recordings/<agent>/<version>/<scenario>.jsonl
    agent, version = recording.parent.parent.name, recording.parent.name
    token = "<mcp-token>" if "<mcp-token>" in header.get("placeholders", {}) else "<redacted>"
    asks, image, called, took_server, usage = 0, False, False, False, False
    completed = False
    for line in recording.open():
        event = json.loads(line)
        if event.get("type") != "event" or event.get("leg") != "acp":
            continue
        event["raw"] = raw_of(event, recording)
        if event.get("dir") == "to_agent":
            frame = json.loads(event["raw"])
            if frame.get("method") in ("session/new", "session/load", "session/resume"):
                took_server |= bool(frame.get("params", {}).get("mcpServers"))
            continue
        if event.get("dir") != "from_agent":
            continue
        asks += '"method":"session/request_permission"' in event["raw"]
        image |= "iVBORw0KGgo" in event["raw"]  # base64 of the PNG signature
        # v2 may report a call first as an update (`tool_call_update`)
        called |= '"sessionUpdate":"tool_call' in event["raw"] or '"toolCall"' in event["raw"]
        completed |= '"status":"completed"' in event["raw"]
        if '"sessionUpdate":"usage_update"' in event["raw"]:
            u = json.loads(event["raw"]).get("params", {}).get("update", {})
            # claude-agent-acp sends `used: null` until it knows
            usage |= isinstance(u.get("used"), int) and isinstance(u.get("size"), int)
    return Case(
        recording,
        f"{agent} {version}",
        scenario,
        prompts,
        decisions,
        tools,
        f"Bearer {token}",
        asks,
        image,
        called,
        took_server,
        usage,
        protocol=2 if header.get("protocol_version") == 2 else 1,
        agent_completed_calls=completed or not called,
    )


def fake_agent(harness: Path, case: Case, tmp: Path) -> str:
    """The bridge's agent: the recording served on stdio, with the session's
    real directory standing for the recorded `<workspace>`."""
    return shlex.join([str(harness), "fake-agent", "--workspace", str(tmp.resolve()), str(case.recording)])


def bridge_env(harness: Path, case: Case, tmp: Path) -> dict[str, str]:
    """The bridge's environment: the recording as its agent, offered the
    ACP revision the recording negotiated."""
    return {
        "ACP_BRIDGE_AGENT": fake_agent(harness, case, tmp),
        "ACP_BRIDGE_ACP_PROTOCOL": str(case.protocol),
    }


def wrapper_script(tmp: Path, bridge: Path) -> Path:
    """A cli_path that runs the bridge and keeps its stdout, stderr and exit
    code for the checks (the SDK only sees the stdout)."""
    script = tmp / "claude"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "set -o pipefail\n"
        f'{shlex.quote(str(bridge))} "$@" 2>>{shlex.quote(str(tmp / "stderr"))}'
        f" | tee {shlex.quote(str(tmp / 'stdout'))}\n"
        f"echo $? > {shlex.quote(str(tmp / 'exit'))}\n"
    )
    script.chmod(0o755)
    return script


async def run_case_ts(case: Case, bridge: Path, harness: Path, node_modules: Path) -> None:
    """The same case through the TypeScript SDK (tests/sdk_e2e_ts.mjs)."""
    with tempfile.TemporaryDirectory(prefix="sdk-e2e-ts-") as t:
        tmp = Path(t)
        spec = {
            "cli": str(wrapper_script(tmp, bridge)),
            "cwd": str(tmp.resolve()),
            "env": bridge_env(harness, case, tmp),
            "mcp": {"unity-ops": {"type": "http", "url": "<mcp-url>", "headers": {"Authorization": case.authorization}}},
            "mcp_delivery": case.mcp_delivery,
            "prompts": case.prompts,
            "decisions": case.decisions,
            # the mode is filled in by the script from the session's init line
            "controls": [{"method": m, "args": a, "subtype": st} for m, a, st in ts_controls("<mode>")],
        }
        # ESM resolves packages from the script's own directory: run a copy
        # beside the node_modules the SDK was installed into.
        script = node_modules.parent / "sdk_e2e_ts.mjs"
        script.write_text((ROOT / "tests" / "sdk_e2e_ts.mjs").read_text())
        proc = await asyncio.create_subprocess_exec(
            "node",
            str(script),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(node_modules.parent),
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(json.dumps(spec).encode()), TURN_TIMEOUT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        if proc.returncode != 0:
            case.failures.append(f"the TypeScript SDK run failed ({proc.returncode}): {err.decode()[-1500:]}")
            return
        seen = json.loads(out.decode().strip().splitlines()[-1])
        if case.mcp_delivery == "initialize" and seen["mcp_servers_applied"] is not case.agent_took_server:
            case.failures.append(
                f"the initialize answer says mcp_servers_applied {seen['mcp_servers_applied']!r}, "
                f"not {case.agent_took_server} (whether the agent took the server)"
            )
        check_queries(case, seen["mcp_status"], seen["context_usage"], seen["context_usage_error"])
        check_controls(case, seen["controls"], TS_SWALLOWS)
        tool_results = [SimpleNamespace(**r) for r in seen["tool_results"]]
        results = [SimpleNamespace(**r) for r in seen["results"]]
        check(case, tmp, seen["asked"], seen["tool_uses"], tool_results, results)


async def run_case(case: Case, bridge: Path, harness: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="sdk-e2e-") as t:
        tmp = Path(t)
        asked: list[str] = []
        decisions = list(case.decisions)

        async def can_use_tool(tool_name, tool_input, _context):
            asked.append(tool_name)
            decision = decisions.pop(0) if decisions else "deny"
            if decision in ("allow", "allow_always"):
                return PermissionResultAllow(updated_input=tool_input)
            return PermissionResultDeny(message="The user denied this tool call.", interrupt=decision == "cancel")

        options = ClaudeAgentOptions(
            cli_path=str(wrapper_script(tmp, bridge)),
            cwd=str(tmp.resolve()),
            can_use_tool=can_use_tool,
            # The panel's unity-ops server as the recorder registered it (its
            # placeholders); the cwd is real and the fake agent maps it (`--workspace`).
            mcp_servers={
                "unity-ops": {"type": "http", "url": "<mcp-url>", "headers": {"Authorization": case.authorization}}
            },
            env={
                **bridge_env(harness, case, tmp),
                "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
            },
        )
        tool_uses: list[str] = []
        results: list[ResultMessage] = []
        tool_results: list[ToolResultBlock] = []
        modes: list[str] = []
        async with ClaudeSDKClient(options=options) as client:
            for prompt in case.prompts:
                await client.query(prompt)

                async def drain():
                    async for message in client.receive_response():
                        if isinstance(message, AssistantMessage):
                            tool_uses.extend(b.name for b in message.content if isinstance(b, ToolUseBlock))
                        elif isinstance(message, UserMessage) and isinstance(message.content, list):
                            tool_results.extend(b for b in message.content if isinstance(b, ToolResultBlock))
                        elif isinstance(message, ResultMessage):
                            results.append(message)
                        elif isinstance(message, SystemMessage) and message.subtype == "init":
                            modes.append(message.data.get("permissionMode", "default"))

                await asyncio.wait_for(drain(), TURN_TIMEOUT_S)
            status = await asyncio.wait_for(client.get_mcp_status(), TURN_TIMEOUT_S)
            try:
                usage, usage_error = await asyncio.wait_for(client.get_context_usage(), TURN_TIMEOUT_S), None
            except Exception as e:  # the SDK raises the control error's text
                usage, usage_error = None, str(e)
            controls = await call_controls(client, py_controls(modes[-1] if modes else "default"))
        check_queries(case, status, usage, usage_error)
        check_controls(case, controls)
        check(case, tmp, asked, tool_uses, tool_results, results)


def check_queries(case: Case, status, usage, usage_error) -> None:
    """The SDK's session queries the bridge answers from what it knows
    (docs/sdk-surface.md): the MCP server status and the context usage."""
    fail = case.failures.append
    servers = {s["name"]: s["status"] for s in (status or {}).get("mcpServers", [])}
    if "unity-ops" not in servers:
        fail(f"the MCP status lists no unity-ops: {status}")
    elif not case.agent_took_server and servers["unity-ops"] not in ("unknown", "connected"):
        fail(f"the MCP status says unity-ops is {servers['unity-ops']}, but the agent did not take it")
    if usage_error is not None:
        if case.agent_sent_usage or "usage_update" not in usage_error:
            fail(f"get_context_usage failed: {usage_error}")
        return
    if not case.agent_sent_usage:
        fail(f"get_context_usage answered without a usage_update from the agent: {usage}")
    elif not usage.get("maxTokens") or usage.get("totalTokens") is None:
        fail(f"get_context_usage has no maxTokens or totalTokens: {usage}")


def divergences(stderr: str) -> list[str]:
    """The fake agent's divergence reports, each a headline and its indented
    field lines joined. The fake agent is told the session's real directory
    (`--workspace`), so nothing here is expected: every report fails."""
    out: list[list[str]] = []
    for line in stderr.splitlines():
        body = line.removeprefix("[agent] ")
        if "fake-agent: divergence" in body:
            out.append([body])
        elif out and body.startswith("  /"):
            out[-1].append(body.strip())
    return [" / ".join(d) for d in out]


def check(case, tmp, asked, tool_uses, tool_results, results) -> None:
    fail = case.failures.append
    if len(results) != len(case.prompts):
        fail(f"{len(results)} ResultMessage(s) for {len(case.prompts)} prompt(s)")
    for r in results:
        if not r.session_id or r.num_turns is None or r.duration_ms is None:
            fail(f"result without session_id/num_turns/duration_ms: {r}")
    allowed = ("allow" in case.decisions or "allow_always" in case.decisions) and case.agent_called_tools
    # a denial needs a request to answer: an agent that asks no permission
    # (pi) runs the call, and the bridge has nothing to deny
    denied = ("deny" in case.decisions or "cancel" in case.decisions) and case.permission_requests > 0
    for tool in case.tools:
        if allowed and tool not in tool_uses:
            fail(f"no ToolUseBlock {tool} (got {tool_uses})")
        if case.permission_requests and tool not in asked:
            fail(f"can_use_tool was not asked about {tool} (asked {asked})")
    if len(asked) != case.permission_requests:
        fail(f"can_use_tool asked {len(asked)} time(s); the agent sent {case.permission_requests} permission request(s)")
    if allowed and case.agent_completed_calls:
        ok = [b for b in tool_results if not b.is_error]
        if not ok:
            fail(f"the allowed call's output never arrived as a successful ToolResultBlock ({tool_results})")
    elif allowed:
        # the agent failed its calls itself: the panel sees that failure
        if not tool_results or any(not b.is_error for b in tool_results):
            fail(f"the agent failed its calls, but the panel's ToolResultBlocks say otherwise ({tool_results})")
    if denied and any(not b.is_error for b in tool_results):
        fail("a denied call's ToolResultBlock is not an error")
    if case.scenario == "screenshot" and case.agent_saw_image:
        images = [
            c for b in tool_results if isinstance(b.content, list) for c in b.content if c.get("type") == "image"
        ]
        if not images or not images[0].get("source", {}).get("data"):
            fail("the screenshot did not arrive as an image block with base64 data")
    stderr = (tmp / "stderr").read_text() if (tmp / "stderr").exists() else ""
    for divergence in divergences(stderr):
        fail(f"the bridge sent the agent something the recording does not hold: {divergence}")
    exit_code = (tmp / "exit").read_text().strip() if (tmp / "exit").exists() else "?"
    if exit_code != "0":
        fail(f"acp-bridge exited {exit_code}; stderr tail:\n{stderr[-2000:]}")
    stdout = (tmp / "stdout").read_text() if (tmp / "stdout").exists() else ""
    for n, line in enumerate(stdout.splitlines(), 1):
        try:
            data = json.loads(line)
            if data.get("type") not in ("control_request", "control_response", "control_cancel_request"):
                parse_message(data)
        except Exception as e:  # any parse error is a bridge shape bug
            fail(f"bridge stdout line {n} does not pass the SDK's parser: {e}: {line[:300]}")


async def run_startup_failure(bridge: Path, peer: Path) -> list[str]:
    """A resume target the agent cannot load (the scripted ACP peer answers
    `session/load` with an error): the bridge refuses the start as Claude
    Code does, and the SDK raises its own error naming the reason, or hands
    over a result that carries it; the raw result line says
    `startup_failure_reason: resume_target_not_found`."""
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sdk-e2e-") as t:
        tmp = Path(t)
        script = tmp / "script.json"
        script.write_text(
            json.dumps(
                {
                    "steps": [
                        {
                            "expect": "initialize",
                            "reply": {"protocolVersion": 1, "agentCapabilities": {"loadSession": True}, "authMethods": []},
                        },
                        {"expect": "session/load", "error": {"code": -32603, "message": "No previous sessions found"}},
                    ],
                    "after": "exit_on_eof",
                }
            )
        )
        options = ClaudeAgentOptions(
            cli_path=str(wrapper_script(tmp, bridge)),
            cwd=str(tmp.resolve()),
            resume="missing-session",
            env={
                "ACP_BRIDGE_AGENT": shlex.join([str(peer), str(script)]),
                "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
            },
        )
        seen: list[str] = []
        try:
            async with ClaudeSDKClient(options=options) as client:
                await client.query("hello again")
                async for message in client.receive_response():
                    if isinstance(message, ResultMessage):
                        seen.append(f"{message.subtype} {message.result}")
        except Exception as e:  # the SDK's own error is what the host shows
            seen.append(f"{type(e).__name__}: {e}")
        want = "No conversation found with session ID: missing-session"
        if not any(want in s for s in seen):
            failures.append(f"neither an SDK error nor a result names {want!r}: {seen}")
        stdout = (tmp / "stdout").read_text() if (tmp / "stdout").exists() else ""
        reasons = [
            json.loads(line).get("startup_failure_reason")
            for line in stdout.splitlines()
            if line.strip().startswith("{") and json.loads(line).get("type") == "result"
        ]
        if "resume_target_not_found" not in reasons:
            failures.append(f"no result with startup_failure_reason resume_target_not_found: {reasons}")
    return failures


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bridge", default=str(ROOT / "target/debug/acp-bridge"))
    ap.add_argument("--harness", default=str(ROOT / "target/debug/acp-harness"))
    ap.add_argument("--filter", default="")
    ap.add_argument(
        "--ts",
        metavar="NODE_MODULES",
        help="run each case through the TypeScript SDK installed in this node_modules instead",
    )
    args = ap.parse_args()
    bridge, harness = Path(args.bridge).resolve(), Path(args.harness).resolve()
    for p in (bridge, harness):
        if not os.access(p, os.X_OK):
            print(f"sdk_e2e: {p} is not an executable; build it first (cargo build --workspace)", file=sys.stderr)
            return 2
    cases = [c for r in sorted((ROOT / "recordings").rglob("*.jsonl")) if (c := load_case(r)) is not None]
    if args.ts:
        cases = [dataclasses.replace(c, mcp_delivery=d, failures=[]) for c in cases for d in ("argv", "initialize")]
    cases = [c for c in cases if args.filter in c.name]
    if not cases:
        print("sdk_e2e: no recordings of the main scenarios found", file=sys.stderr)
        return 2
    failed = 0
    uncovered = ts_uncovered_methods(Path(args.ts).resolve()) if args.ts else uncovered_methods()
    print(f"test sdk_e2e{'_ts' if args.ts else ''}::every control method is called ... {'ok' if not uncovered else 'FAILED'}")
    for u in uncovered:
        print(f"    not called: {u}")
    failed += bool(uncovered)
    for case in cases:
        try:
            run = (
                run_case_ts(case, bridge, harness, Path(args.ts).resolve())
                if args.ts
                else run_case(case, bridge, harness)
            )
            await asyncio.wait_for(run, TURN_TIMEOUT_S * (len(case.prompts) + 1))
        except Exception as e:  # the SDK raising is a failure of this case, not of the run
            case.failures.append(f"{type(e).__name__}: {e}")
        status = "ok" if not case.failures else "FAILED"
        print(f"test sdk_e2e{'_ts' if args.ts else ''}::{case.name} ... {status}")
        for f in case.failures:
            print(f"    {f}")
        failed += bool(case.failures)
    if not args.ts and not args.filter:
        peer = bridge.with_name("scripted-acp-peer")
        try:
            startup = await asyncio.wait_for(run_startup_failure(bridge, peer), TURN_TIMEOUT_S)
        except Exception as e:
            startup = [f"{type(e).__name__}: {e}"]
        print(f"test sdk_e2e::startup failure: resume target not found ... {'ok' if not startup else 'FAILED'}")
        for f in startup:
            print(f"    {f}")
        failed += bool(startup)
        cases.append(None)
    cases.append(None)  # the coverage line
    print(f"\nsdk_e2e: {len(cases) - failed} passed; {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
