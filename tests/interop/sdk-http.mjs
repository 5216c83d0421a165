// SPDX-License-Identifier: MIT
// sdk-http: the official TypeScript SDK client (v1) talks Streamable HTTP to mcpd itself
// (issue 35), no bridge: on the loopback port with the bearer token, and on the Unix socket
// (the transport's fetch replaced by one over the socket). Against the real server-everything
// behind mcpd it lists and calls tools (with progress), reads resources, gets prompts,
// completes, and through /servers/everything/mcp sees the server's own names; a client
// without the token, or with a foreign Origin, is refused.
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const mcpd = process.env.MCPD_BINARY, mcpctl = process.env.MCPCTL_BINARY;
const everything = process.env.EVERYTHING_JS;
if (!mcpd || !mcpctl || !everything) {
  console.error("MCPD_BINARY, MCPCTL_BINARY and EVERYTHING_JS must be set (run through run.sh)");
  process.exit(99);
}

const dir = mkdtempSync(join(tmpdir(), "mcpd-sdk-http-"));
const sock = join(dir, "run", "mcpd.sock");
const env = {
  ...process.env,
  HOME: join(dir, "home"),
  XDG_CONFIG_HOME: join(dir, "config"),
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_RUNTIME_DIR: join(dir, "run"),
  MCPD_SOCKET: sock,
};
for (const d of ["home", "config", "cache", "run"]) mkdirSync(join(dir, d), { mode: 0o700 });
const config = join(dir, "mcp.json");
writeFileSync(config, JSON.stringify({
  mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"], timeout: 60000 } },
}));
const log = join(dir, "mcpd.log");
const daemon = spawn(mcpd, ["--config", config, "--socket", sock, "--listen", "127.0.0.1:0"], {
  env, stdio: ["ignore", "ignore", "pipe"],
});
let logText = "";
daemon.stderr.on("data", (d) => { logText += d; });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* fetch over the Unix socket: what a client does with undici's socketPath, in plain node:http. */
function unixFetch(path) {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    // A length, as fetch sends for a string body (mcpd takes no chunked request bodies).
    if (init.body) headers["content-length"] = Buffer.byteLength(init.body);
    const req = http.request({ socketPath: path, path: u.pathname + u.search, method: init.method ?? "GET", headers }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
      const empty = res.statusCode === 202 || res.statusCode === 204;
      if (empty) res.resume();
      resolve(new Response(empty ? null : Readable.toWeb(res), { status: res.statusCode, headers: h }));
    });
    req.on("error", reject);
    const abort = () => req.destroy(new Error("aborted"));
    init.signal?.addEventListener("abort", abort, { once: true });
    req.on("close", () => init.signal?.removeEventListener("abort", abort));
    if (init.body) req.write(init.body);
    req.end();
  });
}

async function connect(url, opts = {}) {
  const client = new Client({ name: "sdk-http", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } });
  // Server requests arrive on the SSE stream of the call that caused them.
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    model: "test-model", role: "assistant", content: { type: "text", text: "sampled over http" },
  }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "decline" }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), opts));
  return client;
}

/* What every agent does: tools (a call with progress), resources, prompts, completion. */
async function exercise(client, prefix) {
  // mcpd's names turn '-' into '_'; one server's endpoint keeps the server's own.
  const tool = (n) => (prefix ? prefix + n.replaceAll("-", "_") : n);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes(tool("echo")), names.join(", "));
  const echo = await client.callTool({ name: tool("echo"), arguments: { message: "over http" } });
  assert.equal(echo.content[0].text, "Echo: over http");
  const sum = await client.callTool({ name: tool("get-sum"), arguments: { a: 40, b: 2 } });
  assert.match(sum.content[0].text, /42/);
  const sampled = await client.callTool({ name: tool("trigger-sampling-request"), arguments: { prompt: "hi", maxTokens: 10 } });
  assert.match(JSON.stringify(sampled.content), /sampled over http/);
  const elicited = await client.callTool({ name: tool("trigger-elicitation-request"), arguments: {} });
  assert.match(JSON.stringify(elicited.content), /declined/);
  const progress = [];
  const long = await client.callTool(
    { name: tool("trigger-long-running-operation"), arguments: { duration: 1, steps: 3 } },
    undefined, { onprogress: (p) => progress.push(p.progress) });
  assert.ok(long.content[0].text.length > 0);
  assert.ok(progress.length >= 2, `progress seen: ${JSON.stringify(progress)}`);

  let resources = [];
  for (let i = 0; i < 100 && !resources.length; i++) {
    resources = (await client.listResources()).resources;
    if (!resources.length) await sleep(100);
  }
  const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/document/"));
  assert.ok(doc, `no static document among ${resources.length} resources`);
  const read = await client.readResource({ uri: doc.uri });
  assert.ok(read.contents[0].text.length > 0);

  const { prompts } = await client.listPrompts();
  const pnames = prompts.map((p) => p.name);
  assert.ok(pnames.includes(tool("args-prompt")), pnames.join(", "));
  const got = await client.getPrompt({ name: tool("args-prompt"), arguments: { city: "Paris" } });
  assert.equal(got.messages[0].content.text, "What's weather in Paris?");
  const c = await client.complete({
    ref: { type: "ref/prompt", name: tool("completable-prompt") },
    argument: { name: "department", value: "Eng" },
  });
  assert.deepEqual(c.completion.values, ["Engineering"]);
}

async function refused(url, headers, status) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" } } }),
  });
  assert.equal(r.status, status, `${JSON.stringify(headers)} gave ${r.status}`);
}

async function main() {
  for (let i = 0; i < 400 && !/port \d+/.test(logText); i++) await sleep(50);
  const port = Number(/serving MCP over HTTP on 127\.0\.0\.1 port (\d+)/.exec(logText)?.[1]);
  assert.ok(port > 0, `no loopback port in the log: ${logText}`);
  execFileSync(mcpctl, ["--socket", sock, "--timeout", "60000", "wait", "everything"], { env });
  const token = execFileSync(mcpctl, ["--socket", sock, "http-token"], { env }).toString().trim();
  assert.equal(token, readFileSync(join(dir, "run", "http-token"), "utf8"));
  const auth = { requestInit: { headers: { Authorization: `Bearer ${token}` } } };

  // Loopback, the aggregate: mcpd's names.
  const a = await connect(`http://127.0.0.1:${port}/mcp`, auth);
  assert.equal(a.getServerVersion().name, "mcpd");
  await exercise(a, "mcp_everything_");
  await a.transport.terminateSession();
  await a.close();

  // Loopback, one server: its own names, as bridge --server.
  const b = await connect(`http://127.0.0.1:${port}/servers/everything/mcp`, auth);
  await exercise(b, "");
  await b.close();

  // The Unix socket: no token (the socket's owner check stands for it).
  const s = await connect("http://localhost/mcp", { fetch: unixFetch(sock) });
  await exercise(s, "mcp_everything_");
  await s.close();

  // Refusals.
  await refused(`http://127.0.0.1:${port}/mcp`, {}, 401);
  await refused(`http://127.0.0.1:${port}/mcp`, { Authorization: `Bearer ${token}`, Origin: "http://evil.example.com" }, 403);
  await refused(`http://127.0.0.1:${port}/mcp`, { Authorization: `Bearer ${"0".repeat(64)}` }, 401);
  console.log("sdk-http: ok (loopback /mcp and /servers/everything/mcp, unix socket, refusals)");
}

let status = 0;
try {
  await main();
} catch (e) {
  console.error("sdk-http FAILED:", e);
  console.error(logText.split("\n").slice(-40).join("\n"));
  status = 1;
} finally {
  daemon.kill("SIGTERM");
  await new Promise((r) => daemon.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
