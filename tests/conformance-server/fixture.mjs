// SPDX-License-Identifier: MIT
// fixture: an MCP stdio server with the named fixtures the conformance suite's server
// scenarios call (tools, resources, templates, subscriptions, prompts, completion), written
// from the requirement table in the suite's scenario texts. Run directly and behind mcpd.

import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

// A 1x1 PNG and a 44-byte silent WAV header, as the smallest valid payloads.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = new McpServer({ name: "conformance-fixture", version: "1.0.0" },
  { capabilities: { logging: {}, completions: {}, resources: { subscribe: true, listChanged: true } } });
const text = (t) => ({ content: [{ type: "text", text: t }] });

server.registerTool("test_simple_text", { description: "simple text" },
  async () => text("This is a simple text response for testing."));
server.registerTool("test_image_content", { description: "image" },
  async () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }));
server.registerTool("test_audio_content", { description: "audio" },
  async () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }));
server.registerTool("test_embedded_resource", { description: "embedded resource" },
  async () => ({ content: [{ type: "resource", resource: {
    uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }] }));
server.registerTool("test_multiple_content_types", { description: "mixed content" },
  async () => ({ content: [
    { type: "text", text: "Multiple content types test:" },
    { type: "image", data: PNG, mimeType: "image/png" },
    { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json",
      text: "{\"test\":\"data\",\"value\":123}" } },
  ] }));
server.registerTool("test_tool_with_logging", { description: "logs while running" }, async (_a, extra) => {
  for (const data of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
    await server.server.sendLoggingMessage({ level: "info", data }, extra.sessionId);
    await sleep(50);
  }
  return text("Tool with logging executed successfully");
});
server.registerTool("test_error_handling", { description: "always fails" },
  async () => ({ isError: true, content: [{ type: "text", text: "This tool intentionally returns an error for testing" }] }));
server.registerTool("test_tool_with_progress", { description: "reports progress" }, async (_a, extra) => {
  const token = extra._meta?.progressToken;
  for (const progress of [0, 50, 100]) {
    if (token !== undefined)
      await extra.sendNotification({ method: "notifications/progress",
        params: { progressToken: token, progress, total: 100, message: `Completed step ${progress}` } });
    await sleep(50);
  }
  return text(String(token ?? "no progress token"));
});
server.registerTool("test_sampling", { description: "asks the client to sample", inputSchema: { prompt: z.string() } },
  async ({ prompt }) => {
    const r = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 });
    return text(`LLM response: ${r.content?.text ?? JSON.stringify(r.content)}`);
  });
server.registerTool("test_elicitation", { description: "asks the user", inputSchema: { message: z.string() } },
  async ({ message }) => {
    const r = await server.server.elicitInput({ message, requestedSchema: { type: "object",
      properties: { username: { type: "string", description: "User's response" },
        email: { type: "string", description: "User's email address" } }, required: ["username", "email"] } });
    return text(`User response: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
  });
server.registerTool("test_elicitation_sep1034_defaults", { description: "elicitation with defaults" }, async () => {
  const r = await server.server.elicitInput({ message: "Please review and update the form fields with defaults",
    requestedSchema: { type: "object", properties: {
      name: { type: "string", description: "User name", default: "John Doe" },
      age: { type: "integer", description: "User age", default: 30 },
      score: { type: "number", description: "User score", default: 95.5 },
      status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
      verified: { type: "boolean", description: "Verification status", default: true } } } });
  return text(`Elicitation completed: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`);
});

server.registerResource("static-text", "test://static-text", { mimeType: "text/plain", description: "static text" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }] }));
server.registerResource("static-binary", "test://static-binary", { mimeType: "image/png", description: "static binary" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }] }));
server.registerResource("watched-resource", "test://watched-resource", { mimeType: "text/plain", description: "watched" },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content" }] }));
server.registerResource("template", new ResourceTemplate("test://template/{id}/data", { list: undefined }),
  { mimeType: "application/json", description: "templated data" },
  async (uri, { id }) => ({ contents: [{ uri: uri.href, mimeType: "application/json",
    text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] }));
server.server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
server.server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

server.registerPrompt("test_simple_prompt", { description: "simple" },
  () => ({ messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }] }));
server.registerPrompt("test_prompt_with_arguments", { description: "with arguments", argsSchema: {
  arg1: completable(z.string().describe("First test argument"), (v) => ["paris", "park", "party"].filter((x) => x.startsWith(v))),
  arg2: z.string().describe("Second test argument") } },
  ({ arg1, arg2 }) => ({ messages: [{ role: "user", content: { type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }));
server.registerPrompt("test_prompt_with_embedded_resource", { description: "embedded resource",
  argsSchema: { resourceUri: z.string().describe("URI of the resource to embed") } },
  ({ resourceUri }) => ({ messages: [
    { role: "user", content: { type: "resource", resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } } },
    { role: "user", content: { type: "text", text: "Please process the embedded resource above." } }] }));
server.registerPrompt("test_prompt_with_image", { description: "image" },
  () => ({ messages: [
    { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
    { role: "user", content: { type: "text", text: "Please analyze the image above." } }] }));

await server.connect(new StdioServerTransport());
