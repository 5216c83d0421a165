// SPDX-License-Identifier: MIT
// bench-http: tools/call round trips to server-everything over Streamable HTTP: with a bare
// keep-alive HTTP client (raw), with the TypeScript SDK client (direct), and through mcpd
// (NDJSON over its socket), in alternating rounds.
// Usage: node bench-http.mjs <server-url> <mcpd-socket> <mcpd-tool-name> [calls]
import http from 'node:http';
import net from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, sock, tool, callsArg] = process.argv.slice(2);
const calls = Number(callsArg || 2000), rounds = 4, warm = 100;

function socketClient(path) {
  const s = net.connect(path);
  let buf = '', next = 1;
  const waiting = new Map();
  s.setEncoding('utf8');
  s.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const m = JSON.parse(line);
      if (m.id !== undefined && waiting.has(m.id)) {
        waiting.get(m.id)(m);
        waiting.delete(m.id);
      }
    }
  });
  const request = (method, params) => new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    s.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
  });
  return { request, close: () => s.end() };
}

// The floor: a bare keep-alive HTTP client that POSTs and reads the whole (SSE) answer.
async function rawClient(endpoint) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let session = null, next = 1;
  const post = (msg) => new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' };
    if (session) headers['Mcp-Session-Id'] = session;
    const req = http.request(endpoint, { method: 'POST', agent, headers }, (res) => {
      session = res.headers['mcp-session-id'] || session;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end(JSON.stringify(msg));
  });
  await post({ jsonrpc: '2.0', id: next++, method: 'initialize', params: {
    protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { call: (params) => post({ jsonrpc: '2.0', id: next++, method: 'tools/call', params }),
    close: () => agent.destroy() };
}

const pct = (v, p) => v[Math.floor((v.length - 1) * p)];
const ms = (ns) => (Number(ns) / 1e6).toFixed(3);

const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
await direct.connect(new StreamableHTTPClientTransport(new URL(url)));
const raw = await rawClient(url);
const viaMcpd = socketClient(sock);
await viaMcpd.request('initialize', { protocolVersion: '2025-11-25', capabilities: {},
  clientInfo: { name: 'bench-http', version: '1.0.0' } });

const args = { message: 'bench' };
const once = {
  raw: async () => {
    const body = await raw.call({ name: 'echo', arguments: args });
    if (!body.includes('Echo: bench')) throw new Error('raw call failed: ' + body);
  },
  direct: async () => { await direct.callTool({ name: 'echo', arguments: args }); },
  mcpd: async () => {
    const r = await viaMcpd.request('tools/call', { name: tool, arguments: args });
    if (!r.result || r.result.isError) throw new Error('call failed: ' + JSON.stringify(r));
  },
};
const times = { raw: [], direct: [], mcpd: [] };
for (const k of Object.keys(once)) for (let i = 0; i < warm; i++) await once[k]();
for (let r = 0; r < rounds; r++) {
  for (const k of Object.keys(once)) {
    for (let i = 0; i < calls / rounds; i++) {
      const t0 = process.hrtime.bigint();
      await once[k]();
      times[k].push(process.hrtime.bigint() - t0);
    }
  }
}
for (const k of Object.keys(times)) {
  const v = times[k].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  console.log(`${k.padEnd(7)} calls=${v.length} p50=${ms(pct(v, 0.5))}ms p99=${ms(pct(v, 0.99))}ms`);
}
viaMcpd.close();
raw.close();
await direct.close();
