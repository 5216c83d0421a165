// SPDX-License-Identifier: MIT
// search-bridge: through `mcpctl bridge --profile`, the official TypeScript SDK client (v1, the
// 2025 era) and the v2 client in the 2026-07-28 era start in search mode (a profile of
// mcpd.json), find a tool of the real server-everything with mcpd_search_tools, are told
// tools/list_changed, see the tool join their list, and call it by its name and through
// mcpd_call_tool; a tool outside the profile is refused.
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import { execFileSync } from "node:child_process";
import assert from "node:assert/strict";

import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as Stdio1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as Client2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as Stdio2 } from "@modelcontextprotocol/client/stdio";

import { startDaemon } from "./daemon.mjs";

const mcpd = process.env.MCPD_BINARY, mcpctl = process.env.MCPCTL_BINARY;
const everything = process.env.EVERYTHING_JS;
if (!mcpd || !mcpctl || !everything) {
  console.error("MCPD_BINARY, MCPCTL_BINARY and EVERYTHING_JS must be set (run through run.sh)");
  process.exit(99);
}

// The profile: search mode over some of everything's tools (echo is not among them).
const d = startDaemon("mcpd-search-",
  { everything: { command: process.execPath, args: [everything, "stdio"], timeout: 60000 } },
  { profiles: { finder: { mode: "search", tools: ["everything/*sum*", "everything/get-*", "everything/trigger-*"] } } });
const { sock, env } = d;
let failed = false;
const fail = (msg) => { failed = true; console.error("FAIL:", msg); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const names = (tools) => tools.map((t) => t.name).sort();
const text = (r) => r.content.map((c) => c.text).join("");
const bridgeArgs = ["--socket", sock, "bridge", "--cwd", d.project, "--profile", "finder"];

async function waitFor(what, pred) {
  for (let i = 0; i < 400 && !pred(); i++) await sleep(50);
  assert.ok(pred(), what);
}

// One client's run: start with mcpd's two tools, search, list_changed, list, call.
async function session(client, era, listen) {
  let changed = 0;
  client.setNotificationHandler(era === "2025" ? ToolListChangedNotificationSchema
    : "notifications/tools/list_changed", () => { changed++; });
  const sub = listen ? await client.listen({ toolsListChanged: true }) : null;
  const start = names((await client.listTools()).tools);
  assert.deepEqual(start, ["mcpd_call_tool", "mcpd_search_tools"], `${era}: starts with ${start}`);

  const found = await client.callTool({ name: "mcpd_search_tools", arguments: { query: "add two numbers", limit: 3 } });
  assert.ok(!found.isError, `${era}: search failed: ${text(found)}`);
  const hits = found.structuredContent?.tools ?? JSON.parse(text(found)).tools;
  assert.equal(hits[0].name, "mcp_everything_get_sum", `${era}: first hit ${hits[0]?.name}`);
  assert.ok(hits[0].inputSchema?.properties?.a, `${era}: the hit carries its schema`);
  await waitFor(`${era}: no tools/list_changed after the search`, () => changed > 0);

  const after = names((await client.listTools()).tools);
  assert.ok(after.includes("mcp_everything_get_sum"), `${era}: list after the search: ${after}`);
  assert.ok(!after.includes("mcp_everything_echo"), `${era}: echo is outside the profile`);
  const sum = await client.callTool({ name: "mcp_everything_get_sum", arguments: { a: 40, b: 2 } });
  assert.match(text(sum), /The sum of 40 and 2 is 42/, `${era}: ${text(sum)}`);
  const viaCall = await client.callTool({ name: "mcpd_call_tool",
    arguments: { name: "mcp_everything_get_sum", arguments: { a: 1, b: 2 } } });
  assert.match(text(viaCall), /The sum of 1 and 2 is 3/, `${era}: ${text(viaCall)}`);
  let refused = null;
  try {
    const r = await client.callTool({ name: "mcp_everything_echo", arguments: { message: "x" } });
    refused = r.isError ? text(r) : null;
  } catch (e) {
    refused = String(e.message);
  }
  assert.ok(refused && /profile finder/.test(refused), `${era}: echo outside the profile: ${refused}`);
  if (sub) await sub.close();
  await client.close();
}

async function main() {
  await d.ready();
  execFileSync(mcpctl, ["--socket", sock, "--timeout", "60000", "wait", "everything"], { env });

  const c1 = new Client1({ name: "sdk-search", version: "1.0.0" }, { capabilities: {} });
  await c1.connect(new Stdio1({ command: mcpctl, args: bridgeArgs, env, stderr: "inherit" }));
  await session(c1, "2025", false);

  const c2 = new Client2({ name: "sdk-search-modern", version: "1.0.0" },
    { capabilities: {}, versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await c2.connect(new Stdio2({ command: mcpctl, args: bridgeArgs, env, stderr: "inherit" }));
  await session(c2, "2026-07-28", true);
}

try {
  await main();
} catch (e) {
  fail(e.stack || String(e));
} finally {
  await d.stop();
}
if (failed) process.exit(1);
console.log("search-bridge: all checks passed");
