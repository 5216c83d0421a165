// SPDX-License-Identifier: MIT
// sdk-modern-bridge: the v2 TypeScript SDK client (@modelcontextprotocol/client) in the MCP
// 2026-07-28 era drives mcpd through `mcpctl bridge`, with the real (2025-era) server-everything
// upstream: discover, list, call, progress, cancel, an elicitation the server sends reaching
// the client as input_required and answered by its handler, and a list change delivered through
// subscriptions/listen. Both the pinned modern era and auto-detection are run.
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

import { requireEnv, everythingServer, startDaemon, runChecks } from "./daemon.mjs";

const { MCPCTL_BINARY: mcpctl } = requireEnv("MCPD_BINARY", "MCPCTL_BINARY", "EVERYTHING_JS");
const d = startDaemon("mcpd-sdk-modern-", { everything: everythingServer(), spare: everythingServer() });
const { sock, env } = d;
let failed = false;
const fail = (msg) => { failed = true; console.error("FAIL:", msg); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const mcpctlRun = d.mcpctl;
const status = () => JSON.parse(mcpctlRun("--json", "status"));
const inFlight = () => status().servers.find((s) => s.name === "everything").callsInFlight;

async function connect(mode, name) {
  const transport = new StdioClientTransport({
    command: mcpctl,
    args: ["--socket", sock, "bridge", "--cwd", d.project],
    env,
    stderr: "inherit",
  });
  const client = new Client({ name, version: "1.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode } });
  await client.connect(transport);
  return client;
}

async function modernSession(mode) {
  const client = await connect(mode, "sdk-modern");
  let elicited = 0;
  client.setRequestHandler("elicitation/create", async (req) => {
    elicited++;
    assert.ok(req.params.requestedSchema, "the elicitation carries its schema");
    return { action: "accept", content: { name: "Ada" } };
  });
  assert.equal(client.getServerVersion()?.name, "mcpd", "serverInfo names mcpd");
  const echo0 = await client.callTool({ name: "mcp_everything_echo", arguments: { message: "first" } });
  assert.equal(echo0.content[0].text, "Echo: first");
  // mcpd sees a 2026-07-28 agent, placed in the bridge's project by the identity it forwards.
  const me = status().agents.find((a) => a.name === "sdk-modern");
  assert.ok(me, JSON.stringify(status().agents));
  assert.equal(me.protocolVersion, "2026-07-28", JSON.stringify(me));
  assert.ok(me.root && me.root.endsWith("/project"), JSON.stringify(me));

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["mcp_everything_echo", "mcp_everything_trigger_long_running_operation"])
    assert.ok(names.includes(n), `tools/list lacks ${n}: ${names.join(", ")}`);

  const echo = await client.callTool({ name: "mcp_everything_echo", arguments: { message: "modern" } });
  assert.equal(echo.content[0].text, "Echo: modern");

  // Progress reaches the caller under its own token.
  let progress = 0;
  const long = await client.callTool(
    { name: "mcp_everything_trigger_long_running_operation", arguments: { duration: 1, steps: 4 } },
    { onprogress: () => { progress++; }, timeout: 60000 });
  assert.ok(!long.isError, JSON.stringify(long));
  assert.ok(progress >= 2, `only ${progress} progress notifications arrived`);

  // Cancel: the client aborts, mcpd cancels upstream, nothing stays in flight.
  const ac = new AbortController();
  const cancelled = client.callTool(
    { name: "mcp_everything_trigger_long_running_operation", arguments: { duration: 30, steps: 30 } },
    { signal: ac.signal, timeout: 60000 });
  let mid = 0;
  for (let i = 0; i < 100 && !mid; i++) { await sleep(50); mid = inFlight(); }
  assert.equal(mid, 1, "the long call is in flight");
  ac.abort("test cancels");
  await assert.rejects(cancelled);
  let left = 1;
  for (let i = 0; i < 200 && left; i++) { await sleep(50); left = inFlight(); }
  assert.equal(left, 0, "the cancelled call left mcpd's books");

  // The server's elicitation/create becomes input_required; the SDK answers and retries.
  if (names.includes("mcp_everything_trigger_elicitation_request")) {
    const e = await client.callTool({ name: "mcp_everything_trigger_elicitation_request", arguments: {} },
      { timeout: 60000 });
    const text = e.content.map((c) => c.text).join("\n");
    assert.match(text, /Ada/);
    assert.equal(elicited, 1, "the handler answered once");
  } else {
    fail("server-everything did not offer trigger-elicitation-request to mcpd");
  }

  // A list change through subscriptions/listen: another server leaves the workspace.
  let changed = 0;
  client.setNotificationHandler("notifications/tools/list_changed", () => { changed++; });
  const sub = await client.listen({ toolsListChanged: true });
  assert.ok(sub.honoredFilter.toolsListChanged, JSON.stringify(sub.honoredFilter));
  mcpctlRun("disconnect", "spare");
  for (let i = 0; i < 200 && !changed; i++) await sleep(50);
  assert.ok(changed >= 1, "no tools/list_changed arrived on the listen stream");
  await sub.close();
  mcpctlRun("connect", "spare");
  mcpctlRun("--timeout", "60000", "wait", "spare");

  await client.close();
}

async function main() {
  await d.wait("everything", "spare");
  await modernSession({ pin: "2026-07-28" });
  await modernSession("auto");
}

await runChecks("sdk-modern-bridge", d, main, () => failed);
