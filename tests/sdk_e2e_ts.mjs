// The TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk) as the panel, for
// one case of tests/sdk_e2e.py (which runs it with --ts and applies the same
// checks). Reads the case as JSON on stdin:
//   {"cli": "<acp-bridge wrapper>", "cwd": "...", "env": {...}, "mcp": {...},
//    "mcp_delivery": "argv" | "initialize", "prompts": ["..."],
//    "decisions": ["allow", ...]}
// runs query() with pathToClaudeCodeExecutable = the bridge and the MCP
// servers delivered as asked (on the command line, or in the initialize
// request under --await-initialize), each prompt after the previous turn's
// result, and prints what the SDK delivered as one JSON object: tool_uses,
// asked, tool_results, results, the initialize answer's
// mcp_servers_applied, and after the last turn mcpServerStatus() and
// getContextUsage() (or its error), then each of `controls` ({method, args,
// subtype}; "<mode>" stands for the session's permission mode) called on
// the Query, bounded, with what it returned or raised.
import { query } from "@anthropic-ai/claude-agent-sdk";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (d) => (text += d));
  process.stdin.on("end", () => resolve(text));
}));

const asked = [];
const decisions = [...input.decisions];
let turnDone = () => {};

async function* prompts() {
  for (const text of input.prompts) {
    const done = new Promise((resolve) => (turnDone = resolve));
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    await done;
  }
}

const seen = {
  tool_uses: [], asked, tool_results: [], results: [], mcp_servers_applied: null,
  mcp_status: null, context_usage: null, context_usage_error: null, controls: [],
};
let mode = "default";
const CONTROL_TIMEOUT_MS = 15000;

// Each control method, bounded: its value, its error, or that it hung.
async function callControls(run) {
  for (const c of input.controls ?? []) {
    const args = c.args.map((a) => (a === "<mode>" ? mode : a));
    const o = { method: c.method, subtype: c.subtype };
    let timer;
    const hung = new Promise((resolve) => (timer = setTimeout(() => resolve("hung"), CONTROL_TIMEOUT_MS)));
    try {
      const value = await Promise.race([run[c.method](...args), hung]);
      if (value === "hung") Object.assign(o, { ok: false, timeout: true });
      else Object.assign(o, { ok: true, value: value ?? null });
    } catch (e) {
      Object.assign(o, { ok: false, error: String(e?.message ?? e) });
    } finally {
      clearTimeout(timer);
    }
    seen.controls.push(o);
  }
}
const run = query({
  prompt: prompts(),
  options: {
    pathToClaudeCodeExecutable: input.cli,
    cwd: input.cwd,
    env: { ...process.env, ...input.env },
    mcpServers: input.mcp,
    mcpServersDelivery: input.mcp_delivery,
    canUseTool: async (toolName, toolInput) => {
      asked.push(toolName);
      const decision = decisions.shift() ?? "deny";
      return decision === "allow" || decision === "allow_always"
        ? { behavior: "allow", updatedInput: toolInput }
        : { behavior: "deny", message: "The user denied this tool call.", interrupt: decision === "cancel" };
    },
  },
});
// the initialize answer, asked for before the session ends
const initialized = run.initializationResult().catch(() => ({}));
for await (const message of run) {
  if (message.type === "system" && message.subtype === "init") mode = message.permissionMode ?? mode;
  if (message.type === "assistant") {
    for (const b of message.message.content) if (b.type === "tool_use") seen.tool_uses.push(b.name);
  } else if (message.type === "user" && Array.isArray(message.message.content)) {
    for (const b of message.message.content) {
      if (b.type === "tool_result") seen.tool_results.push({ is_error: b.is_error ?? false, content: b.content });
    }
  } else if (message.type === "result") {
    seen.results.push({ session_id: message.session_id, num_turns: message.num_turns, duration_ms: message.duration_ms });
    if (seen.results.length === input.prompts.length) {
      // the session queries, while it is still up
      seen.mcp_status = { mcpServers: await run.mcpServerStatus() };
      try {
        seen.context_usage = await run.getContextUsage();
      } catch (e) {
        seen.context_usage_error = String(e?.message ?? e);
      }
      await callControls(run);
    }
    turnDone();
  }
}
seen.mcp_servers_applied = (await initialized).mcp_servers_applied ?? null;
process.stdout.write(JSON.stringify(seen) + "\n");
