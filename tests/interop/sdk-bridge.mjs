// SPDX-License-Identifier: MIT
// sdk-bridge: the official TypeScript SDK client drives mcpd through `mcpctl bridge`, with the
// real server-everything upstream: initialize, list, call, progress, cancel, and sampling and
// elicitation requests from the server answered by the SDK client's handlers.
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { requireEnv, everythingServer, startDaemon, runChecks } from "./daemon.mjs";

const { MCPCTL_BINARY: mcpctl } = requireEnv("MCPD_BINARY", "MCPCTL_BINARY", "EVERYTHING_JS");
const d = startDaemon("mcpd-sdk-", { everything: everythingServer() });
const { sock, env } = d;
let failed = false;
const fail = (msg) => { failed = true; console.error("FAIL:", msg); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function status() {
  return JSON.parse(d.mcpctl("--json", "status"));
}

async function main() {
  await d.wait("everything");

  const transport = new StdioClientTransport({
    command: mcpctl,
    args: ["--socket", sock, "bridge", "--cwd", d.project],
    env,
    stderr: "inherit",
  });
  const client = new Client({ name: "sdk-interop", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } });
  let sampled = 0, elicited = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    sampled++;
    assert.ok(req.params.messages.length > 0);
    return { role: "assistant", content: { type: "text", text: "sampled by the SDK client" }, model: "test-model" };
  });
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicited++;
    assert.ok(req.params.requestedSchema);
    // Accept without the defaulted fields: mcpd fills them in from the schema.
    return { action: "accept", content: { name: "Ada" } };
  });
  await client.connect(transport);
  const info = client.getServerVersion();
  assert.equal(info.name, "mcpd");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["mcp_everything_echo", "mcp_everything_trigger_long_running_operation"])
    assert.ok(names.includes(n), `tools/list lacks ${n}: ${names.join(", ")}`);

  const echo = await client.callTool({ name: "mcp_everything_echo", arguments: { message: "via the bridge" } });
  assert.equal(echo.content[0].text, "Echo: via the bridge");

  // Progress reaches the caller, under the token the SDK chose.
  let progress = 0;
  const long = await client.callTool(
    { name: "mcp_everything_trigger_long_running_operation", arguments: { duration: 1, steps: 4 } },
    undefined, { onprogress: () => { progress++; }, timeout: 60000 });
  assert.ok(!long.isError, JSON.stringify(long));
  assert.ok(progress >= 2, `only ${progress} progress notifications arrived`);

  // Cancel: the SDK aborts; mcpd cancels upstream; nothing stays in flight.
  const ac = new AbortController();
  const cancelled = client.callTool(
    { name: "mcp_everything_trigger_long_running_operation", arguments: { duration: 30, steps: 30 } },
    undefined, { signal: ac.signal, timeout: 60000 });
  await sleep(700);
  const mid = status().servers.find((s) => s.name === "everything");
  assert.equal(mid.callsInFlight, 1, "the long call is in flight");
  ac.abort("test cancels");
  await assert.rejects(cancelled);
  let inflight = 1;
  for (let i = 0; i < 100 && inflight; i++) {
    await sleep(50);
    inflight = status().servers.find((s) => s.name === "everything").callsInFlight;
  }
  assert.equal(inflight, 0, "the cancelled call left mcpd's books");

  // The next call works after the cancel.
  const again = await client.callTool({ name: "mcp_everything_echo", arguments: { message: "after cancel" } });
  assert.equal(again.content[0].text, "Echo: after cancel");

  // sampling/createMessage from the server reaches the SDK's handler; its answer goes back.
  if (names.includes("mcp_everything_trigger_sampling_request")) {
    const s = await client.callTool({ name: "mcp_everything_trigger_sampling_request", arguments: { prompt: "hello", maxTokens: 10 } },
      undefined, { timeout: 60000 });
    assert.ok(!s.isError, JSON.stringify(s));
    assert.match(s.content[0].text, /sampled by the SDK client/);
    assert.equal(sampled, 1);
  } else {
    fail("server-everything did not offer trigger-sampling-request: mcpd did not advertise sampling");
  }
  if (names.includes("mcp_everything_trigger_elicitation_request")) {
    const e = await client.callTool({ name: "mcp_everything_trigger_elicitation_request", arguments: {} },
      undefined, { timeout: 60000 });
    const text = e.content.map((c) => c.text).join("\n");
    assert.match(text, /Name: Ada/);
    assert.match(text, /It was a dark and stormy night\./, "mcpd filled in the schema default");
    assert.equal(elicited, 1);
  } else {
    fail("server-everything did not offer trigger-elicitation-request: mcpd did not advertise elicitation");
  }

  // The agent is listed with its name and workspace.
  const agents = status().agents;
  const me = agents.find((a) => a.name === "sdk-interop");
  assert.ok(me, JSON.stringify(agents));
  assert.ok(me.root && me.root.endsWith("/project"), JSON.stringify(me));

  await client.close();
}

await runChecks("sdk-bridge", d, main, () => failed);
