// SPDX-License-Identifier: MIT
// v2-server: a stateless MCP server written with the v2 TypeScript SDK (@modelcontextprotocol/server,
// the 2026-07-28 revision), for mcpd's interop tests. "stdio" serves stdin/stdout (modern only:
// a 2025 opening is refused, so mcpd must detect the era); "http PORTFILE" serves Streamable
// HTTP on 127.0.0.1 at a free port, written to PORTFILE. Tools: echo, slow (progress; a cancel
// is written to $V2_CANCEL_FILE), confirm (an input_required elicitation), grow (adds the tool
// "grown" and announces the list change through subscriptions/listen), flaky (over HTTP its
// first response stream breaks before the answer; each id it comes under goes to the file).

import { appendFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

import {
  McpServer,
  acceptedContent,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const mode = process.argv[2];
let grown = false; // stateless: every instance the factory makes sees the same surface
let notifyGrown = () => {};
let flakyBroken = false;

const object = (properties, required = []) =>
  fromJsonSchema({ type: "object", properties, required });
const text = (t) => ({ content: [{ type: "text", text: t }] });
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });

function factory() {
  const server = new McpServer({ name: "v2-fixture", version: "2.4.0" },
                               { capabilities: { tools: { listChanged: true } } });
  server.registerTool("echo", { description: "Echo the text", inputSchema: object({ text: { type: "string" } }, ["text"]) },
                      async ({ text: t }) => text(t));
  server.registerTool("slow", { description: "Report progress, then answer",
                                inputSchema: object({ steps: { type: "integer" }, ms: { type: "integer" } }, ["steps", "ms"]) },
                      async ({ steps, ms }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    try {
      for (let i = 1; i <= steps; i++) {
        await sleep(ms, ctx.mcpReq.signal);
        if (token !== undefined)
          await ctx.mcpReq.notify({ method: "notifications/progress",
                                    params: { progressToken: token, progress: i, total: steps } });
      }
    } catch (e) {
      if (process.env.V2_CANCEL_FILE) appendFileSync(process.env.V2_CANCEL_FILE, `${mode} cancelled\n`);
      throw e;
    }
    return text(`done after ${steps} steps`);
  });
  server.registerTool("confirm", { description: "Ask the user, through input_required", inputSchema: object({}) },
                      async (_args, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, "who");
    if (!answer?.name)
      return inputRequired({
        inputRequests: {
          who: inputRequired.elicit({
            message: "Who is asking?",
            requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
          }),
        },
        requestState: "round-1",
      });
    return text(`confirmed by ${answer.name} (state ${ctx.mcpReq.requestState()})`);
  });
  const addGrown = () =>
    server.registerTool("grown", { description: "Added at run time", inputSchema: object({}) },
                        async () => text("I am new"));
  server.registerTool("flaky", { description: "Survives a broken stream", inputSchema: object({}) },
                      async () => text("survived"));
  server.registerTool("grow", { description: "Add the tool grown", inputSchema: object({}) }, async () => {
    if (!grown && mode === "stdio")
      addGrown(); // the one instance pinned to this connection
    grown = true;
    notifyGrown(server);
    return text("grown");
  });
  if (grown)
    addGrown();
  return server;
}

if (mode === "stdio") {
  notifyGrown = (server) => server.sendToolListChanged();
  serveStdio(factory, { legacy: "reject" });
} else if (mode === "http") {
  const handler = createMcpHandler(factory, { legacy: "reject" });
  notifyGrown = () => handler.notify.toolsChanged();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    let msg = null;
    try {
      msg = JSON.parse(body.toString());
    } catch {
      // not JSON: the handler answers it
    }
    if (msg?.method === "tools/call" && msg.params?.name === "flaky") {
      appendFileSync(process.env.V2_CANCEL_FILE, `flaky ${msg.id}\n`);
      if (!flakyBroken) {
        flakyBroken = true; // the first stream breaks before its answer: the request is lost
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        res.write(": about to break\n\n");
        return setTimeout(() => res.destroy(), 200);
      }
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const controller = new AbortController();
    res.on("close", () => controller.abort()); // the client closed the stream: a cancel
    const response = await handler.fetch(new Request(`http://127.0.0.1${req.url}`, {
      method: req.method, headers, body: body.length ? body : undefined, signal: controller.signal,
    }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return res.end();
    try {
      for await (const chunk of response.body) res.write(chunk);
    } catch {
      // the client went away mid-stream
    }
    res.end();
  });
  http.listen(0, "127.0.0.1", () => writeFileSync(process.argv[3], String(http.address().port)));
} else {
  console.error("usage: v2-server.mjs stdio | http PORTFILE");
  process.exit(2);
}
