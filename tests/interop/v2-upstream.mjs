// SPDX-License-Identifier: MIT
// v2-upstream: stateless servers written with the v2 TypeScript SDK (2026-07-28, v2-server.mjs)
// as mcpd's upstreams, over stdio and over Streamable HTTP, used by a 2025-era agent (the v1 SDK
// client through `mcpctl bridge`): era detection, list, call, progress, cancel, an
// input_required elicitation answered by the agent, and a list change delivered through
// subscriptions/listen.
//
// Run by meson through run-netns.sh (the HTTP server binds 127.0.0.1 only; the namespace is for
// the rest of the suite); needs MCPD_BINARY, MCPCTL_BINARY.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const mcpd = process.env.MCPD_BINARY, mcpctl = process.env.MCPCTL_BINARY;
if (!mcpd || !mcpctl) {
  console.error("MCPD_BINARY and MCPCTL_BINARY must be set (run through run.sh)");
  process.exit(99);
}
const fixture = join(dirname(fileURLToPath(import.meta.url)), "v2-server.mjs");
// Every wait below is generous: the test checks behaviour, never speed, on a loaded machine.
const WAIT_MS = 60000;

const dir = mkdtempSync(join(tmpdir(), "mcpd-v2-"));
const sock = join(dir, "run", "mcpd.sock");
const cancelFile = join(dir, "cancelled.txt");
const env = {
  ...process.env,
  HOME: join(dir, "home"),
  XDG_CONFIG_HOME: join(dir, "config"),
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_RUNTIME_DIR: join(dir, "run"),
  MCPD_SOCKET: sock,
  V2_CANCEL_FILE: cancelFile,
};
for (const d of ["home", "config", "cache", "run", "project"]) mkdirSync(join(dir, d), { mode: 0o700 });
let failed = false;
const fail = (msg) => { failed = true; console.error("FAIL:", msg); };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];

function status() {
  return JSON.parse(execFileSync(mcpctl, ["--socket", sock, "--json", "status"], { env }).toString());
}
const server = (name) => status().servers.find((s) => s.name === name);

async function until(what, fn) {
  for (let t = 0; t < WAIT_MS; t += 100) {
    if (await fn()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// One server (stdio or http) through the agent: everything the brief of the test names.
async function exercise(client, name, changes) {
  const p = `mcp_${name}_`;
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["echo", "slow", "confirm", "grow", "flaky"])
    assert.ok(names.includes(p + n), `${name}: tools/list lacks ${p + n}: ${names.join(", ")}`);
  const st = server(name);
  assert.equal(st.protocolVersion, "2026-07-28", `${name} speaks ${st.protocolVersion}`);

  const echo = await client.callTool({ name: p + "echo", arguments: { text: `hello ${name}` } });
  assert.equal(echo.content[0].text, `hello ${name}`);

  let progress = 0;
  const slow = await client.callTool({ name: p + "slow", arguments: { steps: 3, ms: 100 } }, undefined,
                                     { onprogress: () => { progress++; }, timeout: WAIT_MS });
  assert.equal(slow.content[0].text, "done after 3 steps", JSON.stringify(slow));
  assert.ok(progress >= 2, `${name}: only ${progress} progress notifications arrived`);

  // Cancel: stdio sends notifications/cancelled, HTTP closes the stream; the server hears it.
  const ac = new AbortController();
  const cancelled = client.callTool({ name: p + "slow", arguments: { steps: 300, ms: 100 } }, undefined,
                                    { signal: ac.signal, timeout: WAIT_MS });
  await until(`${name}: the slow call in flight`, () => server(name).callsInFlight === 1);
  ac.abort("test cancels");
  await assert.rejects(cancelled);
  await until(`${name}: the server saw the cancel`,
              () => existsSync(cancelFile) && readFileSync(cancelFile, "utf8").includes(`${changes.mode} cancelled`));
  await until(`${name}: no call in flight`, () => server(name).callsInFlight === 0);

  if (changes.mode === "http") {
    // A broken response stream loses the request: mcpd sends it again under a new id.
    const flaky = await client.callTool({ name: p + "flaky", arguments: {} }, undefined, { timeout: WAIT_MS });
    assert.equal(flaky.content[0].text, "survived", JSON.stringify(flaky));
    const ids = readFileSync(cancelFile, "utf8").split("\n").filter((l) => l.startsWith("flaky "));
    assert.equal(ids.length, 2, ids.join("; "));
    assert.notEqual(ids[0], ids[1], "the request went again under a new id");
  }

  // input_required: mcpd asks this agent (elicitation/create) and retries with its answer.
  const before = changes.elicited();
  const confirm = await client.callTool({ name: p + "confirm", arguments: {} }, undefined, { timeout: WAIT_MS });
  assert.equal(confirm.content[0].text, "confirmed by Ada (state round-1)", JSON.stringify(confirm));
  assert.equal(changes.elicited(), before + 1);

  // A list change comes through subscriptions/listen and reaches the agent.
  const seen = changes.count();
  const grow = await client.callTool({ name: p + "grow", arguments: {} });
  assert.equal(grow.content[0].text, "grown");
  await until(`${name}: tools/list_changed`, () => changes.count() > seen);
  await until(`${name}: the grown tool listed`,
              async () => (await client.listTools()).tools.some((t) => t.name === p + "grown"));
  const grown = await client.callTool({ name: p + "grown", arguments: {} });
  assert.equal(grown.content[0].text, "I am new");
}

async function main() {
  const portFile = join(dir, "port");
  const http = spawn(process.execPath, [fixture, "http", portFile], { env, stdio: ["ignore", "inherit", "inherit"] });
  children.push(http);
  await until("the HTTP fixture's port", () => existsSync(portFile) && readFileSync(portFile, "utf8").length > 0);
  const url = `http://127.0.0.1:${readFileSync(portFile, "utf8")}/mcp`;
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({
    mcpServers: {
      v2stdio: { command: process.execPath, args: [fixture, "stdio"], timeout: WAIT_MS },
      v2http: { url, timeout: WAIT_MS },
    },
  }));
  const daemon = spawn(mcpd, ["--config", config, "--socket", sock, "--log-level", "debug"],
                       { env, stdio: ["ignore", "inherit", "inherit"] });
  children.push(daemon);
  await until("mcpd's socket", () => existsSync(sock));
  for (const s of ["v2stdio", "v2http"])
    execFileSync(mcpctl, ["--socket", sock, "--timeout", String(WAIT_MS), "wait", s], { env });

  const client = new Client({ name: "v2-interop", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  let elicited = 0, listChanged = 0;
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    elicited++;
    assert.equal(req.params.message, "Who is asking?");
    return { action: "accept", content: { name: "Ada" } };
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++; });
  await client.connect(new StdioClientTransport({
    command: mcpctl, args: ["--socket", sock, "bridge", "--cwd", join(dir, "project")], env, stderr: "inherit",
  }));
  const changes = { elicited: () => elicited, count: () => listChanged };
  await exercise(client, "v2stdio", { ...changes, mode: "stdio" });
  await exercise(client, "v2http", { ...changes, mode: "http" });
  await client.close();
}

try {
  await main();
} catch (e) {
  fail(e.stack || String(e));
} finally {
  for (const c of children.reverse()) {
    c.kill("SIGTERM");
    if (c.exitCode === null) await new Promise((r) => c.once("exit", r));
  }
  rmSync(dir, { recursive: true, force: true });
}
if (failed) process.exit(1);
console.log("v2-upstream: all checks passed");
