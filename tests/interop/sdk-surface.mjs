// SPDX-License-Identifier: MIT
// sdk-surface: two official TypeScript SDK clients, each through its own `mcpctl bridge`, use
// the prompts, resources, templates, subscriptions and completion of the real server-everything
// behind mcpd: list and read resources, get a prompt, complete arguments, and subscribe to one
// URI together; when one unsubscribes the other still hears the updates.
//
// Run by meson through run.sh (which installs the pinned packages); needs MCPD_BINARY,
// MCPCTL_BINARY and EVERYTHING_JS.

import assert from "node:assert/strict";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { requireEnv, everythingServer, startDaemon, runChecks } from "./daemon.mjs";

const { MCPCTL_BINARY: mcpctl } = requireEnv("MCPD_BINARY", "MCPCTL_BINARY", "EVERYTHING_JS");

// server-everything sends its simulated updates every 5 s; waits allow several of them on a
// loaded machine (tests check behaviour, never speed).
const UPDATE_WAIT_MS = 60000;
const d = startDaemon("mcpd-sdk-surface-", { everything: everythingServer() });
const { sock, env } = d;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function agent(name) {
  const transport = new StdioClientTransport({
    command: mcpctl, args: ["--socket", sock, "bridge"], env, stderr: "inherit",
  });
  const client = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  client.updates = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { client.updates.push(n.params.uri); });
  await client.connect(transport);
  return client;
}

async function until(what, cond) {
  for (let waited = 0; waited < UPDATE_WAIT_MS; waited += 100) {
    if (cond()) return;
    await sleep(100);
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function allResources(client) {
  const all = [];
  let cursor;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    all.push(...page.resources);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

async function main() {
  await d.wait("everything");
  const a = await agent("surface-a"), b = await agent("surface-b");

  const caps = a.getServerCapabilities();
  assert.ok(caps.prompts && caps.resources && caps.completions, JSON.stringify(caps));
  assert.equal(caps.resources.subscribe, true, JSON.stringify(caps));
  assert.match(a.getInstructions() ?? "", /## everything/);

  // Resources and templates: listed over every page, read back.
  // The lists come in the background after the connect: wait for them.
  let resources = [];
  for (let i = 0; i < 100 && !resources.length; i++) {
    resources = await allResources(a);
    if (!resources.length) await sleep(100);
  }
  const doc = resources.find((r) => r.uri.startsWith("demo://resource/static/document/"));
  assert.ok(doc, `no static document among ${resources.length} resources`);
  assert.equal(doc._meta["mcpd/server"], "everything");
  const read = await a.readResource({ uri: doc.uri });
  assert.equal(read.contents[0].uri, doc.uri);
  assert.ok(read.contents[0].text.length > 0);
  const { resourceTemplates } = await a.listResourceTemplates();
  const tmpl = resourceTemplates.find((t) => t.uriTemplate === "demo://resource/dynamic/text/{resourceId}");
  assert.ok(tmpl, JSON.stringify(resourceTemplates.map((t) => t.uriTemplate)));
  const dyn = await a.readResource({ uri: "demo://resource/dynamic/text/3" });
  assert.match(dyn.contents[0].text, /3/);

  // Prompts: named like tools, routed back under the original name.
  const { prompts } = await a.listPrompts();
  const names = prompts.map((p) => p.name);
  assert.ok(names.includes("mcp_everything_args_prompt"), names.join(", "));
  const got = await a.getPrompt({ name: "mcp_everything_args_prompt", arguments: { city: "Paris" } });
  assert.equal(got.messages[0].content.text, "What's weather in Paris?");

  // Completion: a prompt argument and a template argument.
  const c1 = await a.complete({
    ref: { type: "ref/prompt", name: "mcp_everything_completable_prompt" },
    argument: { name: "department", value: "Eng" },
  });
  assert.deepEqual(c1.completion.values, ["Engineering"]);
  const c2 = await a.complete({
    ref: { type: "ref/resource", uri: tmpl.uriTemplate },
    argument: { name: "resourceId", value: "1" },
  });
  assert.ok(Array.isArray(c2.completion.values), JSON.stringify(c2));

  // Two agents subscribe to one URI; the server's simulated updates reach both.
  await a.subscribeResource({ uri: doc.uri });
  await b.subscribeResource({ uri: doc.uri });
  const t = await a.callTool({ name: "mcp_everything_toggle_subscriber_updates", arguments: {} });
  assert.ok(!t.isError, JSON.stringify(t));
  await until("updates to both agents", () => a.updates.length >= 1 && b.updates.length >= 1);
  assert.ok(a.updates.every((u) => u === doc.uri) && b.updates.every((u) => u === doc.uri));

  // b leaves: a keeps hearing, b hears nothing more.
  await b.unsubscribeResource({ uri: doc.uri });
  const bCount = b.updates.length, aCount = a.updates.length;
  await until("two more updates to a", () => a.updates.length >= aCount + 2);
  assert.equal(b.updates.length, bCount, "b still got updates after unsubscribing");

  await a.callTool({ name: "mcp_everything_toggle_subscriber_updates", arguments: {} });
  await a.close();
  await b.close();
}

await runChecks("sdk-surface", d, main);
