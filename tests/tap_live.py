#!/usr/bin/env python3
"""The panel of a live tapped session: the official Python Agent SDK
(`claude-agent-sdk`) drives `acp-bridge` as its claude, with the tap on
(`ACP_BRIDGE_TAP`, the way a panel user turns it on), in front of a real
agent that `acp-harness sandbox` started in the recorder's sandbox.

It plays a scenario's panel side as a user would: each prompt in turn, each
permission request answered with the scenario's next decision, and waits
for each turn's result. The scripted model server (the sandbox's) answers
the agent from the same scenario. Run by .ci/tap-live; by hand:

    acp-harness sandbox --agent codex-acp@2.6.0 --scenario unity-call-allowed -- \\
        python tests/tap_live.py --bridge target/debug/acp-bridge \\
        --scenario scenarios/unity-call-allowed.toml --tap target/tap-live/session.jsonl

Exit 0 when every turn ended in a result and the tap was written.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import tomllib
from pathlib import Path

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolUseBlock,
)

TURN_TIMEOUT_S = 180
READY_TIMEOUT_S = 60
TAP_TIMEOUT_S = 20


def sandbox(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        sys.exit(f"tap_live: {name} is not set: run this under `acp-harness sandbox`")
    return value


async def wait_for(path: Path, what: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not path.exists():
        if time.monotonic() > deadline:
            sys.exit(f"tap_live: waited {limit} s for {what} ({path})")
        await asyncio.sleep(0.1)


async def session(args) -> int:
    scenario = tomllib.loads(Path(args.scenario).read_text())
    steps = scenario.get("step", [])
    if any(s["panel"] not in ("prompt", "permission") for s in steps):
        sys.exit("tap_live: plays prompts and permission answers only")
    prompts = [s["text"] for s in steps if s["panel"] == "prompt"]
    decisions = [s["decision"] for s in steps if s["panel"] == "permission"]
    tap = Path(args.tap).resolve()
    tap.parent.mkdir(parents=True, exist_ok=True)
    if tap.exists():
        sys.exit(f"tap_live: {tap} exists; a tap is never replaced here")
    ready = Path(sandbox("ACP_HARNESS_MCP_READY"))
    # the bridge installed in the (fresh) home, as a user's would be: the
    # tap's note of the bridge's command line then names `<home>/...`
    bin_dir = Path(os.environ["HOME"]) / ".local" / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    bridge = bin_dir / "acp-bridge"
    bridge.symlink_to(Path(args.bridge).resolve())

    asked: list[str] = []

    async def can_use_tool(tool_name, tool_input, _context):
        asked.append(tool_name)
        decision = decisions.pop(0) if decisions else "deny"
        print(f"tap_live: permission for {tool_name}: {decision}", file=sys.stderr)
        if decision in ("allow", "allow_always"):
            return PermissionResultAllow(updated_input=tool_input)
        return PermissionResultDeny(message="The user denied this tool call.", interrupt=decision == "cancel")

    options = ClaudeAgentOptions(
        cli_path=str(bridge),
        cwd=sandbox("ACP_HARNESS_WORKSPACE"),
        can_use_tool=can_use_tool,
        mcp_servers={
            "unity-ops": {
                "type": "http",
                "url": sandbox("ACP_HARNESS_MCP_URL"),
                "headers": {"Authorization": sandbox("ACP_HARNESS_MCP_AUTHORIZATION")},
            }
        },
        env={
            "ACP_BRIDGE_AGENT": sandbox("ACP_BRIDGE_AGENT"),
            "ACP_BRIDGE_TAP": str(tap),
            "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK": "1",
        },
        stderr=lambda line: print(f"[bridge] {line}", file=sys.stderr),
        # the panel's launch flags, as the SDK turns its options into them
        model=args.model,
        permission_mode=args.permission_mode,
    )
    if args.append_system_prompt is not None:
        options.system_prompt = {"type": "preset", "preset": "claude_code", "append": args.append_system_prompt}
    elif args.system_prompt is not None:
        options.system_prompt = args.system_prompt
    results: list[ResultMessage] = []
    tool_uses: list[str] = []
    async with ClaudeSDKClient(options=options) as client:
        # the agent takes the panel's MCP server once its session exists
        await wait_for(ready, "the agent to list unity-ops' tools", READY_TIMEOUT_S)
        for prompt in prompts:
            await client.query(prompt)

            async def drain():
                async for message in client.receive_response():
                    if isinstance(message, AssistantMessage):
                        tool_uses.extend(b.name for b in message.content if isinstance(b, ToolUseBlock))
                    elif isinstance(message, ResultMessage):
                        results.append(message)

            await asyncio.wait_for(drain(), TURN_TIMEOUT_S)
    await wait_for(tap, "the tap", TAP_TIMEOUT_S)
    print(
        f"tap_live: {len(prompts)} prompt(s), {len(results)} result(s), tool calls {tool_uses}, "
        f"permission requests {asked}; tap written to {tap}"
    )
    if len(results) != len(prompts):
        print("tap_live: a turn ended without a result", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bridge", required=True, help="the acp-bridge executable")
    p.add_argument("--scenario", required=True, help="the scenario file whose panel side to play")
    p.add_argument("--tap", required=True, help="where the tap goes (must not exist)")
    p.add_argument("--model", help="the SDK's model option (the bridge's --model)")
    p.add_argument("--permission-mode", help="the SDK's permission_mode option (--permission-mode)")
    p.add_argument("--system-prompt", help="the SDK's system_prompt option (--system-prompt)")
    p.add_argument("--append-system-prompt", help="appended to the preset prompt (--append-system-prompt)")
    return asyncio.run(session(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
