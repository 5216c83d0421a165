// SPDX-License-Identifier: MIT
// sdk-http: the official TypeScript SDK client talks Streamable HTTP to mcpd itself (issue 35),
// no bridge: on the loopback port with the bearer token, and on the Unix socket (the
// transport's fetch replaced by one over the socket). Against the real server-everything behind
// mcpd it lists and calls tools (with progress), answers the server's sampling and elicitation
// requests, reads resources, subscribes to one and hears its updates, gets prompts and
// completes; through /servers/everything/mcp it sees the server's own names. A client without
// the token, or with a foreign Origin, is refused.
//   node sdk-http.mjs v1   the v1 SDK (@modelcontextprotocol/sdk), 2025 era
//   node sdk-http.mjs v2   the v2 SDK (@modelcontextprotocol/client), the 2025 era and 2026-07-28
// SDK_HTTP_TRACE=1 prints each step to stderr (which one hangs or fails).
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";

import { requireEnv, everythingServer, startDaemon, runChecks } from "./daemon.mjs";
import { nodeFetch } from "./http-fetch.mjs";

requireEnv("MCPD_BINARY", "MCPCTL_BINARY", "EVERYTHING_JS");
const which = process.argv[2] ?? "v1";
if (which !== "v1" && which !== "v2") {
  console.error(`sdk-http: unknown SDK '${which}' (v1 or v2)`);
  process.exit(99);
}
// server-everything sends its simulated resource updates every 5 s; waits allow several of them
// on a loaded machine (tests check behaviour, never speed).
const UPDATE_WAIT_MS = 60000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* What differs between the two SDKs' client APIs, behind one shape. */
async function loadSdk(which) {
  if (which === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
    const t = await import("@modelcontextprotocol/sdk/types.js");
    const schemas = {
      "sampling/createMessage": t.CreateMessageRequestSchema,
      "elicitation/create": t.ElicitRequestSchema,
      "notifications/resources/updated": t.ResourceUpdatedNotificationSchema,
    };
    return {
      Transport: StreamableHTTPClientTransport,
      client: (info, caps) => new Client(info, { capabilities: caps }),
      onRequest: (c, method, fn) => c.setRequestHandler(schemas[method], fn),
      onNotification: (c, method, fn) => c.setNotificationHandler(schemas[method], fn),
      call: (c, params, opts) => c.callTool(params, undefined, opts),
      // v1 checks an accepted form against the schema it asked for: decline.
      elicit: { answer: { action: "decline" }, seen: /declined/ },
    };
  }
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  return {
    Transport: StreamableHTTPClientTransport,
    client: (info, caps, era) => new Client(info, {
      capabilities: caps, ...(era === "2026-07-28" ? { versionNegotiation: { mode: { pin: era } } } : {}),
    }),
    onRequest: (c, method, fn) => c.setRequestHandler(method, fn),
    onNotification: (c, method, fn) => c.setNotificationHandler(method, fn),
    call: (c, params, opts) => c.callTool(params, opts),
    elicit: { answer: { action: "accept", content: { name: "Ada" } }, seen: /Ada/ },
  };
}
const sdk = await loadSdk(which);

const d = startDaemon("mcpd-sdk-http-", { everything: everythingServer() }, null,
  { args: ["--listen", "127.0.0.1:0"], captureLog: true });

async function connect(url, opts = {}, era = "2025") {
  const client = sdk.client({ name: `sdk-http-${which}`, version: "1.0.0" },
    { sampling: {}, elicitation: {} }, era);
  // In the 2025 era server requests arrive on the SSE stream of the call that caused them; in
  // 2026-07-28 as input_required, answered by the same handlers.
  client.samples = 0;
  sdk.onRequest(client, "sampling/createMessage", async () => {
    client.samples++;
    return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled over http" } };
  });
  sdk.onRequest(client, "elicitation/create", async () => sdk.elicit.answer);
  client.updates = [];
  sdk.onNotification(client, "notifications/resources/updated", (n) => { client.updates.push(n.params.uri); });
  await client.connect(new sdk.Transport(new URL(url), opts));
  return client;
}

// server-everything's simulated updates are one switch for its one session (mcpd's): on once.
let updatesOn = false;

/* What every agent does: tools (with progress, sampling, elicitation), resources, a
 * subscription, prompts, completion. */
async function exercise(client, prefix, era, mrtr = true) {
  const step = (s) => process.env.SDK_HTTP_TRACE && console.error("sdk-http:", which, era, prefix || "/servers", s);
  const where = `${which} ${era} ${prefix ? "/mcp" : "/servers/everything/mcp"}`;
  // mcpd's names turn '-' into '_'; one server's endpoint keeps the server's own.
  const tool = (n) => (prefix ? prefix + n.replaceAll("-", "_") : n);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  assert.ok(names.includes(tool("echo")), `${where}: ${names.join(", ")}`);
  const echo = await sdk.call(client, { name: tool("echo"), arguments: { message: "over http" } });
  assert.equal(echo.content[0].text, "Echo: over http");
  const sum = await sdk.call(client, { name: tool("get-sum"), arguments: { a: 40, b: 2 } });
  assert.match(sum.content[0].text, /42/);
  if (mrtr) {
    step("sampling");
    const sampled = await sdk.call(client, { name: tool("trigger-sampling-request"), arguments: { prompt: "hi", maxTokens: 10 } },
      { timeout: 60000 });
    assert.match(JSON.stringify(sampled.content), /sampled over http/, `${where}: sampling`);
    step("elicitation");
    const elicited = await sdk.call(client, { name: tool("trigger-elicitation-request"), arguments: {} }, { timeout: 60000 });
    assert.match(JSON.stringify(elicited.content), sdk.elicit.seen, `${where}: elicitation`);
    assert.ok(client.samples >= 1, `${where}: the sampling handler was not asked`);
  }
  const progress = [];
  const long = await sdk.call(client,
    { name: tool("trigger-long-running-operation"), arguments: { duration: 1, steps: 3 } },
    { onprogress: (p) => progress.push(p.progress), timeout: 60000 });
  assert.ok(long.content[0].text.length > 0);
  assert.ok(progress.length >= 2, `${where}: progress seen: ${JSON.stringify(progress)}`);

  step("resources");
  let resources = [];
  for (let i = 0; i < 100 && !resources.length; i++) {
    resources = (await client.listResources()).resources;
    if (!resources.length) await sleep(100);
  }
  const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/document/"));
  assert.ok(doc, `${where}: no static document among ${resources.length} resources`);
  const read = await client.readResource({ uri: doc.uri });
  assert.ok(read.contents[0].text.length > 0);

  // Subscribe (2025: resources/subscribe, updates on the GET stream; 2026-07-28:
  // subscriptions/listen, updates on its own stream), then hear an update.
  const sub = era === "2026-07-28" ? await client.listen({ resourceSubscriptions: [doc.uri] })
    : await client.subscribeResource({ uri: doc.uri });
  if (!updatesOn) {
    const t = await sdk.call(client, { name: tool("toggle-subscriber-updates"), arguments: {} });
    assert.ok(!t.isError, JSON.stringify(t));
    updatesOn = true;
  }
  for (let w = 0; w < UPDATE_WAIT_MS && !client.updates.length; w += 100) await sleep(100);
  assert.ok(client.updates.length > 0, `${where}: no resources/updated within ${UPDATE_WAIT_MS} ms`);
  assert.ok(client.updates.every((u) => u === doc.uri), `${where}: ${client.updates}`);
  if (era === "2026-07-28") await sub.close();
  else await client.unsubscribeResource({ uri: doc.uri });

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
  const port = await d.httpPort();
  assert.ok(port > 0, `no loopback port in the log: ${d.log()}`);
  await d.wait("everything");
  const token = d.mcpctl("http-token").trim();
  assert.equal(token, readFileSync(join(d.dir, "run", "http-token"), "utf8"));
  const auth = { requestInit: { headers: { Authorization: `Bearer ${token}` } } };
  const eras = which === "v1" ? ["2025"] : ["2025", "2026-07-28"];

  for (const era of eras) {
    // Loopback, the aggregate: mcpd's names, with the SDK's own fetch (undici). In 2026-07-28
    // mcpd keeps the era's agent per connection, and undici may send the retry of an
    // input_required call on another connection than the call, or give a connection to another
    // client (docs/http.md): sampling and elicitation in that era are checked with a fetch that
    // keeps its connections to itself (the next two).
    const a = await connect(`http://127.0.0.1:${port}/mcp`, auth, era);
    assert.equal(a.getServerVersion().name, "mcpd");
    await exercise(a, "mcp_everything_", era, era !== "2026-07-28");
    if (era === "2025") await a.transport.terminateSession();
    await a.close();

    // Loopback, one server: its own names, as bridge --server.
    const b = await connect(`http://127.0.0.1:${port}/servers/everything/mcp`, { ...auth, fetch: nodeFetch() }, era);
    await exercise(b, "", era);
    await b.close();

    // The Unix socket: no token (the socket's owner check stands for it).
    const s = await connect("http://localhost/mcp", { fetch: nodeFetch(d.sock) }, era);
    await exercise(s, "mcp_everything_", era);
    await s.close();
  }

  // Refusals.
  await refused(`http://127.0.0.1:${port}/mcp`, {}, 401);
  await refused(`http://127.0.0.1:${port}/mcp`, { Authorization: `Bearer ${token}`, Origin: "http://evil.example.com" }, 403);
  await refused(`http://127.0.0.1:${port}/mcp`, { Authorization: `Bearer ${"0".repeat(64)}` }, 401);
}

await runChecks(`sdk-http ${which}`, d, main);
