// SPDX-License-Identifier: MIT
// fixture-server: the MCP server the conformance suite's server scenarios expect (the named
// tools, resources and prompts of its requirement texts), written for mcpd's tests on the v1
// TypeScript SDK: the suite's own reference server is not published. Run with "stdio" (as
// mcpd's upstream) or "http" (Streamable HTTP on 127.0.0.1:$PORT/mcp, the baseline the suite
// scores alone; Host and Origin checked, as the spec asks of a local server).

import http from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema, ListToolsRequestSchema, ListResourcesRequestSchema,
  ReadResourceRequestSchema, ListResourceTemplatesRequestSchema, SubscribeRequestSchema,
  UnsubscribeRequestSchema, ListPromptsRequestSchema, GetPromptRequestSchema,
  CompleteRequestSchema, SetLevelRequestSchema, ElicitResultSchema, CreateMessageResultSchema,
} from "@modelcontextprotocol/sdk/types.js";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const obj = (properties, required) => ({ type: "object", properties, ...(required ? { required } : {}) });
const text = (t) => ({ content: [{ type: "text", text: t }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tools = [
  { name: "test_simple_text", description: "A simple text", inputSchema: obj({}) },
  { name: "test_image_content", description: "An image", inputSchema: obj({}) },
  { name: "test_audio_content", description: "Audio", inputSchema: obj({}) },
  { name: "test_embedded_resource", description: "An embedded resource", inputSchema: obj({}) },
  { name: "test_multiple_content_types", description: "Mixed content", inputSchema: obj({}) },
  { name: "test_tool_with_logging", description: "Logs three times", inputSchema: obj({}) },
  { name: "test_error_handling", description: "Fails", inputSchema: obj({}) },
  { name: "test_tool_with_progress", description: "Reports progress", inputSchema: obj({}) },
  { name: "test_sampling", description: "Asks for sampling", inputSchema: obj({ prompt: { type: "string" } }, ["prompt"]) },
  { name: "test_elicitation", description: "Asks for input", inputSchema: obj({ message: { type: "string" } }, ["message"]) },
  { name: "test_elicitation_sep1034_defaults", description: "Defaults", inputSchema: obj({}) },
  { name: "test_elicitation_sep1330_enums", description: "Enums", inputSchema: obj({}) },
  {
    name: "json_schema_2020_12_tool", description: "Tool with JSON Schema 2020-12 features",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema", type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
];

function makeServer() {
  const server = new Server({ name: "conformance-fixture", version: "1.0.0" }, {
    capabilities: { tools: {}, resources: { subscribe: true }, prompts: {}, logging: {}, completions: {} },
  });
  const log = (data, extra) => server.notification({ method: "notifications/message", params: { level: "info", data } }, { relatedRequestId: extra.requestId });
  const elicit = (params, extra) => extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const a = req.params.arguments ?? {};
    switch (req.params.name) {
    case "test_simple_text": return text("This is a simple text response for testing.");
    case "test_image_content": return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
    case "test_audio_content": return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
    case "test_embedded_resource":
      return { content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }] };
    case "test_multiple_content_types":
      return { content: [{ type: "text", text: "Multiple content types test:" }, { type: "image", data: PNG, mimeType: "image/png" },
        { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: "{\"test\":\"data\",\"value\":123}" } }] };
    case "test_tool_with_logging":
      await log("Tool execution started", extra); await sleep(50);
      await log("Tool processing data", extra); await sleep(50);
      await log("Tool execution completed", extra);
      return text("Tool with logging executed successfully");
    case "test_error_handling":
      return { isError: true, content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] };
    case "test_tool_with_progress": {
      const token = req.params._meta?.progressToken;
      for (const p of [0, 50, 100]) {
        if (token !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: p, total: 100 } });
        await sleep(50);
      }
      return text(String(token));
    }
    case "test_sampling": {
      const r = await extra.sendRequest({ method: "sampling/createMessage", params: {
        messages: [{ role: "user", content: { type: "text", text: a.prompt } }], maxTokens: 100 } }, CreateMessageResultSchema);
      return text(`LLM response: ${r.content?.text ?? ""}`);
    }
    case "test_elicitation": {
      const r = await elicit({ message: a.message, requestedSchema: obj({
        username: { type: "string", description: "User's response" },
        email: { type: "string", description: "User's email address" } }, ["username", "email"]) }, extra);
      return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case "test_elicitation_sep1034_defaults": {
      const r = await elicit({ message: "Defaults", requestedSchema: obj({
        name: { type: "string", default: "John Doe" }, age: { type: "integer", default: 30 },
        score: { type: "number", default: 95.5 },
        status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", default: true } }) }, extra);
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case "test_elicitation_sep1330_enums": {
      const r = await elicit({ message: "Enums", requestedSchema: obj({
        untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
        titledSingle: { type: "string", oneOf: [{ const: "value1", title: "First Option" }, { const: "value2", title: "Second Option" }, { const: "value3", title: "Third Option" }] },
        legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
        untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
        titledMulti: { type: "array", items: { anyOf: [{ const: "value1", title: "First Choice" }, { const: "value2", title: "Second Choice" }, { const: "value3", title: "Third Choice" }] } },
      }) }, extra);
      return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
    }
    case "json_schema_2020_12_tool": return text(`ok: ${JSON.stringify(a)}`);
    }
    return { isError: true, content: [{ type: "text", text: `unknown tool ${req.params.name}` }] };
  });
  const resources = [
    { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
    { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
    { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
  ];
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" }] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const uri = req.params.uri;
    if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
    const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (m) return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }] };
    return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [
    { name: "test_simple_prompt", description: "simple" },
    { name: "test_prompt_with_arguments", description: "args", arguments: [{ name: "arg1", required: true }, { name: "arg2", required: true }] },
    { name: "test_prompt_with_embedded_resource", description: "resource", arguments: [{ name: "resourceUri", required: true }] },
    { name: "test_prompt_with_image", description: "image" },
  ] }));
  server.setRequestHandler(GetPromptRequestSchema, async (req) => {
    const a = req.params.arguments ?? {};
    const user = (content) => ({ role: "user", content });
    switch (req.params.name) {
    case "test_simple_prompt": return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
    case "test_prompt_with_arguments": return { messages: [user({ type: "text", text: `Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'` })] };
    case "test_prompt_with_embedded_resource": return { messages: [
      user({ type: "resource", resource: { uri: a.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
      user({ type: "text", text: "Please process the embedded resource above." })] };
    case "test_prompt_with_image": return { messages: [user({ type: "image", data: PNG, mimeType: "image/png" }),
      user({ type: "text", text: "Please analyze the image above." })] };
    }
    throw new Error(`unknown prompt ${req.params.name}`);
  });
  server.setRequestHandler(CompleteRequestSchema, async () => ({ completion: { values: ["paris", "park", "party"], total: 3, hasMore: false } }));
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  return server;
}

if (process.argv[2] === "http") {
  const port = Number(process.env.PORT);
  const sessions = new Map();
  const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
  http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers["mcp-session-id"];
    let t = sid && sessions.get(sid);
    if (!t) {
      t = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(), enableDnsRebindingProtection: true, allowedHosts: allowed,
        allowedOrigins: allowed.map((h) => `http://${h}`),
        onsessioninitialized: (id) => sessions.set(id, t),
      });
      await makeServer().connect(t);
    }
    await t.handleRequest(req, res, body);
  }).listen(port, "127.0.0.1");
} else {
  await makeServer().connect(new StdioServerTransport());
}
