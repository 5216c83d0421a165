// SPDX-License-Identifier: MIT
// mcp-peers: mcpd against its peers through MCP itself, as a user compares them. The official
// TypeScript SDK v1 client calls the `echo` tool of one fake server (tests/helpers/fake-server.c,
// the cheapest server there is, so that each hub's own cost shows) through every path:
//   direct        SDK client -> fake server over stdio (the baseline)
//   mcpd          SDK client -> `mcpctl bridge` (stdio) -> mcpd (unix socket) -> fake server,
//                 and the same mcpd with the client on its socket directly (no bridge)
//   mcp-hub       SDK client -> mcp-hub's MCP endpoint (SSE at /mcp) -> fake server
//   mcp-proxy     SDK client -> mcp-proxy (Streamable HTTP at /mcp, and SSE at /sse) -> fake server
//   supergateway  SDK client -> supergateway (--stateful Streamable HTTP at /mcp, and its default
//                 SSE at /sse) -> fake server
// Sequential latency (p50/p90/p99) in alternating rounds so every path sees the same machine,
// then calls/s with K calls in flight from one client, CPU per call and the RSS/PSS of each
// hub's process tree. Prints a table and one JSON line ({"peersMcp": ...}). Every call must come
// back with its own echo text; the exit status says only that (never anything about time).
//
// With --http HTTP_SERVER (issue 35) the paths are the SDK's Streamable HTTP client's instead:
//   http direct   SDK client -> tests/helpers/http-server (a C Streamable HTTP server) (baseline)
//   mcpd http     SDK client -> mcpd's loopback port (/servers/echo1/mcp, and /mcp) -> fake
//                 server, and /servers/eh/mcp -> a second http-server (the same server as the
//                 baseline's, behind mcpd)
//   the peers     mcp-hub, mcp-proxy and supergateway with their HTTP endpoints, as above
// with the added latency of each against http direct, each peer's against mcpd's, and what an
// idle HTTP session costs each hub (sessions opened with initialize and left).
//
// Run through tests/bench/run.sh --peers (installs the pinned packages of this folder); needs
// FAKE_SERVER, MCPD_BINARY and MCPCTL_BINARY (absolute paths). Options: --short (the suite's
// quick proof), --calls N, --rounds R, --inflight K, --http HTTP_SERVER.

import { spawn, execFileSync } from "node:child_process";
import {
  mkdtempSync, mkdirSync, writeFileSync, readFileSync, readdirSync, readlinkSync, rmSync,
  existsSync, openSync, closeSync, realpathSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import net from "node:net";
import http from "node:http";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.PEER_MODULES || join(here, "node_modules");

// Sequential calls per path: 2000 in 10 rounds gives a stable p99 (20 samples above it) in
// about a minute for all five paths; the short mode only proves every path answers.
const FULL_CALLS = 2000, FULL_ROUNDS = 10;
const SHORT_CALLS = 60, SHORT_ROUNDS = 2;
// Calls per path before measuring, so that JIT warm-up (client and Node hubs) and first-call
// setup are not counted against whichever path happens to run first.
const FULL_WARMUP = 200, SHORT_WARMUP = 10;
// Calls in flight for the throughput phase: enough to keep a single-threaded hub busy, small
// enough that every peer's default limits (sessions, queues) accept it.
const DEFAULT_INFLIGHT = 16;
// Calls per path in the throughput phase, spread over the same number of alternating rounds.
const FULL_LOAD_CALLS = 8000, SHORT_LOAD_CALLS = 64;
// How long a hub may take to listen and get its server connected: mcp-hub needs a few
// seconds on an idle machine; the machine may be loaded by other jobs.
const READY_MS = 60000;
// How long a process tree gets after SIGTERM before SIGKILL (hubs stop their servers first).
const STOP_GRACE_MS = 5000;
// One tools/call may wait this long (the SDK's default is 60 s; a loaded machine is slow, a
// hung hub must still fail the run instead of blocking it).
const CALL_TIMEOUT_MS = 60000;

function usage(msg) {
  console.error(`mcp-peers: ${msg}\nusage: mcp-peers.mjs [--short] [--calls N] [--rounds R] [--inflight K] [--http HTTP_SERVER]`);
  process.exit(99);
}

const opts = { short: false, calls: 0, rounds: 0, inflight: DEFAULT_INFLIGHT, http: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const num = () => {
    const v = Number(process.argv[++i]);
    if (!Number.isInteger(v) || v <= 0) usage(`${a} needs a positive integer`);
    return v;
  };
  if (a === "--short") opts.short = true;
  else if (a === "--calls") opts.calls = num();
  else if (a === "--rounds") opts.rounds = num();
  else if (a === "--inflight") opts.inflight = num();
  else if (a === "--http") opts.http = process.argv[++i] || usage("--http needs the http-server binary");
  else usage(`unknown argument '${a}'`);
}
const calls = opts.calls || (opts.short ? SHORT_CALLS : FULL_CALLS);
const rounds = opts.rounds || (opts.short ? SHORT_ROUNDS : FULL_ROUNDS);
const warmup = opts.short ? SHORT_WARMUP : FULL_WARMUP;
const loadCalls = opts.short ? SHORT_LOAD_CALLS : FULL_LOAD_CALLS;
if (calls % rounds) usage(`--calls ${calls} must be a multiple of --rounds ${rounds}`);

const fake = process.env.FAKE_SERVER, mcpd = process.env.MCPD_BINARY;
const mcpctl = process.env.MCPCTL_BINARY;
if (!fake || !mcpd || !mcpctl) {
  console.error("mcp-peers: FAKE_SERVER, MCPD_BINARY and MCPCTL_BINARY must be set (absolute paths; meson sets them)");
  process.exit(99);
}
const fakeReal = realpathSync(fake);

function pkgVersion(name) {
  return JSON.parse(readFileSync(join(modules, name, "package.json"), "utf8")).version;
}
for (const p of ["mcp-hub", "mcp-proxy", "supergateway", "@modelcontextprotocol/sdk"]) {
  if (!existsSync(join(modules, p, "package.json"))) {
    console.error(`mcp-peers: ${p} is not installed in ${modules}; run through tests/bench/run.sh --peers`);
    process.exit(99);
  }
}

const dir = mkdtempSync(join(tmpdir(), "mcpd-peers-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* ---- processes: every one we start, and its descendants, goes at the end ---- */

// pid -> { ppid } for every process, from /proc/<pid>/stat.
function procTable() {
  const t = new Map();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    let s;
    try { s = readFileSync(`/proc/${e}/stat`, "utf8"); } catch { continue; }
    // The command name may hold spaces and parentheses: fields are counted after the last ')'.
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    t.set(Number(e), { ppid: Number(f[1]) });
  }
  return t;
}

// The pids of roots and all their descendants that are alive now.
function treePids(roots, table = procTable()) {
  const kids = new Map();
  for (const [pid, { ppid }] of table) {
    if (!kids.has(ppid)) kids.set(ppid, []);
    kids.get(ppid).push(pid);
  }
  const out = [], todo = roots.filter((p) => table.has(p));
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    for (const k of kids.get(p) || []) todo.push(k);
  }
  return out;
}

function statusKiB(pid, field) {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

function pssKiB(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}

function isUpstream(pid) {
  try { return readlinkSync(`/proc/${pid}/exe`) === fakeReal; } catch { return false; }
}

// Memory of a tree: all of it, and the hub's part (the tree without the fake server processes).
function treeMemory(roots) {
  const m = { rssKiB: 0, pssKiB: 0, hubRssKiB: 0, hubPssKiB: 0, processes: 0 };
  for (const pid of treePids(roots)) {
    const rss = statusKiB(pid, "VmRSS"), pss = pssKiB(pid);
    m.rssKiB += rss;
    m.pssKiB += pss;
    m.processes++;
    if (!isUpstream(pid)) {
      m.hubRssKiB += rss;
      m.hubPssKiB += pss;
    }
  }
  return m;
}

// CPU time of a tree in ns: the sum over every thread of /proc/<pid>/task/<tid>/schedstat
// (time on CPU, ns resolution; clock ticks in /proc/<pid>/stat are 10 ms, too coarse for a few
// thousand calls of a few microseconds each).
function treeCpuNs(roots) {
  let sum = 0;
  for (const pid of treePids(roots)) {
    let tasks;
    try { tasks = readdirSync(`/proc/${pid}/task`); } catch { continue; }
    for (const tid of tasks) {
      try { sum += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]); } catch { /* gone */ }
    }
  }
  return sum;
}

// Signal every descendant of this process (collected first, so that a hub dying before its
// children cannot orphan them), wait for them to go, SIGKILL what is left.
async function stopAll() {
  const pids = treePids([process.pid]).filter((p) => p !== process.pid);
  for (const p of pids) { try { process.kill(p, "SIGTERM"); } catch { /* gone */ } }
  const deadline = Date.now() + STOP_GRACE_MS;
  let alive = pids;
  while (alive.length && Date.now() < deadline) {
    await sleep(50);
    const table = procTable();
    alive = alive.filter((p) => table.has(p) && !isZombie(p));
  }
  for (const p of alive) { try { process.kill(p, "SIGKILL"); } catch { /* gone */ } }
  return alive.length;
}

function isZombie(pid) {
  try { return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8")); } catch { return true; }
}

// Last resort on an unexpected exit: kill whatever is still ours, at once.
process.on("exit", () => {
  for (const p of treePids([process.pid]).filter((q) => q !== process.pid)) {
    try { process.kill(p, "SIGKILL"); } catch { /* gone */ }
  }
  rmSync(dir, { recursive: true, force: true });
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { console.error(`mcp-peers: ${sig}, stopping`); process.exit(1); });

// A private environment for every process we start (no user config, state or cache is read).
const env = {
  ...process.env,
  HOME: join(dir, "home"),
  XDG_CONFIG_HOME: join(dir, "config"),
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_STATE_HOME: join(dir, "state"),
  XDG_DATA_HOME: join(dir, "data"),
  XDG_RUNTIME_DIR: join(dir, "run"),
};
for (const d of ["home", "config", "cache", "state", "data", "run", "logs"]) mkdirSync(join(dir, d), { mode: 0o700 });

function startProcess(name, cmd, args, extraEnv = {}) {
  const log = join(dir, "logs", `${name}.log`);
  const fd = openSync(log, "w");
  const child = spawn(cmd, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  child.log = log;
  child.exited = null;
  child.on("exit", (code, sig) => { child.exited = sig || `status ${code}`; });
  child.on("error", (e) => { child.exited = e.message; });
  return child;
}

function tail(file) {
  try { return readFileSync(file, "utf8").split("\n").slice(-15).join("\n"); } catch { return ""; }
}

async function freePort() {
  const s = net.createServer();
  await new Promise((r, j) => s.listen(0, "127.0.0.1", r).on("error", j));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return port;
}

// Wait until something accepts on 127.0.0.1:port, or the child dies, or the deadline passes.
async function waitPort(child, port) {
  const deadline = Date.now() + READY_MS;
  while (Date.now() < deadline) {
    if (child.exited) throw new Error(`exited (${child.exited}) before listening; log:\n${tail(child.log)}`);
    const ok = await new Promise((r) => {
      const c = net.connect(port, "127.0.0.1", () => { c.destroy(); r(true); });
      c.on("error", () => r(false));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`did not listen on 127.0.0.1:${port} within ${READY_MS} ms; log:\n${tail(child.log)}`);
}

// The local addresses of the listening TCP sockets on port, from /proc/net/tcp{,6}: the
// benchmark refuses a peer that listens beyond loopback.
function listeners(port) {
  const out = [];
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text;
    try { text = readFileSync(f, "utf8"); } catch { continue; }
    for (const line of text.split("\n").slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 3 && c[3] === "0A" && c[1].endsWith(`:${hex}`)) out.push(c[1].split(":")[0]);
    }
  }
  return out;
}
const LOOPBACK = new Set(["0100007F", "00000000000000000000000001000000"]);

function assertLoopback(name, port) {
  const addrs = listeners(port);
  const wide = addrs.filter((a) => !LOOPBACK.has(a));
  if (!addrs.length || wide.length)
    throw new Error(`${name} listens on ${addrs.join(", ") || "nothing"} for port ${port}, not on 127.0.0.1 only`);
}

/* ---- the paths ---- */

const upstreamConfig = () => JSON.stringify({ mcpServers: { echo1: { command: fake, args: [] } } });

async function connect(transport, name, want) {
  const client = new Client({ name: "mcp-peers", version: "1.0.0" }, { capabilities: {} });
  client.onerror = () => {}; // transport noise (e.g. an SSE stream the hub ends) is not a call failure
  // A transport may wait forever for a stream that never opens: bound the handshake too.
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: no MCP session within ${READY_MS} ms`)), READY_MS);
  });
  try {
    await Promise.race([client.connect(transport), late]);
  } finally {
    clearTimeout(timer);
  }
  // The hub may take the connection before its server is up: wait for the echo tool.
  const deadline = Date.now() + READY_MS;
  for (;;) {
    const { tools } = await client.listTools();
    const echo = want ? tools.find((t) => t.name === want)
      : tools.find((t) => t.name === "echo") || tools.find((t) => /[_.:-]echo$/.test(t.name));
    if (echo) return { client, tool: echo.name };
    if (Date.now() > deadline)
      throw new Error(`${name} lists no echo tool after ${READY_MS} ms (tools: ${tools.map((t) => t.name).join(", ")})`);
    await sleep(200);
  }
}

// The SDK's stdio framing (one JSON-RPC message a line) over mcpd's unix socket, which speaks
// just that: an agent that can open the socket needs no bridge process.
class SocketTransport {
  constructor(path) { this.path = path; this.buf = new ReadBuffer(); }
  start() {
    return new Promise((resolve, reject) => {
      this.sock = net.connect(this.path, resolve);
      this.sock.once("error", reject);
      this.sock.on("data", (chunk) => {
        this.buf.append(chunk);
        try {
          for (let m; (m = this.buf.readMessage());) this.onmessage?.(m);
        } catch (e) { this.onerror?.(e); }
      });
      this.sock.on("close", () => this.onclose?.());
    });
  }
  send(message) {
    return new Promise((resolve) => this.sock.write(serializeMessage(message), resolve));
  }
  async close() { this.sock?.destroy(); }
}

function stdioTransport(command, args) {
  return new StdioClientTransport({ command, args, env, stderr: "ignore" });
}

// A peer that fronts the fake server over HTTP on a free 127.0.0.1 port: kind is "stream"
// (Streamable HTTP) or "sse" (GET path, then POST to the endpoint it names).
function httpPeer(name, label, kind, path, argv, note) {
  return {
    name, label, note,
    async start() {
      const port = await freePort();
      const child = startProcess(name, process.execPath, argv(String(port)));
      await waitPort(child, port);
      assertLoopback(label, port);
      const url = new URL(`http://127.0.0.1:${port}${path}`);
      // Listening is not ready: mcp-hub answers 500 on /mcp until its endpoint is set up. Poll
      // the MCP endpoint itself, a new session each time, until it connects or the deadline.
      const deadline = Date.now() + READY_MS;
      for (;;) {
        const t = kind === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
        try {
          return { ...(await connect(t, label)), roots: () => [child.pid], url, headers: {}, kind };
        } catch (e) {
          await t.close().catch(() => {});
          if (child.exited) throw new Error(`exited (${child.exited}); log:\n${tail(child.log)}`);
          if (Date.now() > deadline) throw new Error(`${e.message} (for ${READY_MS} ms); log:\n${tail(child.log)}`);
          await sleep(100);
        }
      }
    },
  };
}

let mcpdDaemon = null; // { pid, sock } once the mcpd path has started it, for mcpdSocket

const paths = [
  {
    name: "direct",
    label: "direct (stdio)",
    async start() {
      const t = stdioTransport(fake, []);
      const c = await connect(t, "the fake server");
      return { ...c, roots: () => [t.pid] };
    },
  },
  {
    name: "mcpd",
    label: "mcpd (mcpctl bridge)",
    note: "includes the `mcpctl bridge` hop (stdio <-> unix socket) that a stdio-only client needs; " +
      "its RSS is in the tree",
    async start() {
      const sock = join(dir, "run", "mcpd.sock");
      const cfg = join(dir, "mcpd.json");
      writeFileSync(cfg, upstreamConfig());
      const d = startProcess("mcpd", mcpd, ["--config", cfg, "--socket", sock], { MCPD_SOCKET: sock });
      const deadline = Date.now() + READY_MS;
      while (!existsSync(sock)) {
        if (d.exited) throw new Error(`mcpd exited (${d.exited}); log:\n${tail(d.log)}`);
        if (Date.now() > deadline) throw new Error(`mcpd made no socket in ${READY_MS} ms; log:\n${tail(d.log)}`);
        await sleep(50);
      }
      mcpdDaemon = { pid: d.pid, sock };
      const t = stdioTransport(mcpctl, ["--socket", sock, "bridge", "--cwd", join(dir, "home")]);
      const c = await connect(t, "mcpd");
      return { ...c, roots: () => [d.pid, t.pid] };
    },
  },
  {
    name: "mcpdSocket",
    label: "mcpd (unix socket, no bridge)",
    note: "the same mcpd, the SDK's line framing straight over its socket: the bridge hop is the " +
      "difference to the row above",
    async start() {
      if (!mcpdDaemon) throw new Error("mcpd did not start (see the mcpd row)");
      const c = await connect(new SocketTransport(mcpdDaemon.sock), "mcpd's socket");
      const pid = mcpdDaemon.pid;
      return { ...c, roots: () => [pid] };
    },
  },
  // mcp-hub's MCP endpoint is the SSE transport (GET /mcp, then POST /messages?sessionId=); it
  // has no listen-address option, so the loopback preload binds it to 127.0.0.1.
  httpPeer("mcpHub", `mcp-hub ${pkgVersion("mcp-hub")} (SSE /mcp)`, "sse", "/mcp", (port) => {
    const cfg = join(dir, "hub.json");
    writeFileSync(cfg, upstreamConfig());
    return ["--require", join(here, "loopback.cjs"), join(modules, "mcp-hub/dist/cli.js"), "--port", port, "--config", cfg];
  }),
  httpPeer("mcpProxy", `mcp-proxy ${pkgVersion("mcp-proxy")} (stream /mcp)`, "stream", "/mcp",
    (port) => [join(modules, "mcp-proxy/dist/bin/mcp-proxy.mjs"), "--host", "127.0.0.1", "--port", port,
      "--server", "stream", "--", fake]),
  httpPeer("mcpProxySse", `mcp-proxy ${pkgVersion("mcp-proxy")} (SSE /sse)`, "sse", "/sse",
    (port) => [join(modules, "mcp-proxy/dist/bin/mcp-proxy.mjs"), "--host", "127.0.0.1", "--port", port,
      "--server", "sse", "--", fake]),
  // supergateway has no listen-address option: the loopback preload, as for mcp-hub.
  httpPeer("supergateway", `supergateway ${pkgVersion("supergateway")} (stateful stream /mcp)`, "stream", "/mcp",
    (port) => ["--require", join(here, "loopback.cjs"), join(modules, "supergateway/dist/index.js"),
      "--stdio", fake, "--outputTransport", "streamableHttp", "--stateful", "--port", port, "--logLevel", "none"],
    "--stateful: one server per session (its default, stateless, starts a new server per POST); " +
    "it runs the server through /bin/sh -c, counted in its hub RSS"),
  httpPeer("supergatewaySse", `supergateway ${pkgVersion("supergateway")} (SSE /sse)`, "sse", "/sse",
    (port) => ["--require", join(here, "loopback.cjs"), join(modules, "supergateway/dist/index.js"),
      "--stdio", fake, "--port", port, "--logLevel", "none"],
    "its default output transport for a stdio server"),
];

/* ---- the Streamable HTTP paths (--http) ---- */

// Idle sessions opened per hub for the memory figure: enough that one session's cost shows
// above the page granularity of RSS (4 KiB); supergateway --stateful starts a server for each.
const FULL_IDLE = 100, SHORT_IDLE = 5;

// tests/helpers/http-server on a free loopback port (it keeps one session: one per client).
async function startHttpServer(name) {
  const port = await freePort();
  const child = startProcess(name, opts.http, ["--port", String(port)]);
  await waitPort(child, port);
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

let mcpdHttp = null; // { pid, port, token } once started, shared by the mcpd rows

// One mcpd serving HTTP on loopback with two servers: the fake server (stdio) and a second
// http-server (Streamable HTTP), the same kind of server as the baseline's.
async function startMcpdHttp() {
  if (mcpdHttp) return mcpdHttp;
  const up = await startHttpServer("http-server-behind-mcpd");
  const sock = join(dir, "run", "mcpd-http.sock");
  const cfg = join(dir, "mcpd-http.json");
  writeFileSync(cfg, JSON.stringify({ mcpServers: { echo1: { command: fake, args: [] }, eh: { type: "http", url: up.url } } }));
  const port = await freePort();
  const d = startProcess("mcpd-http", mcpd, ["--config", cfg, "--socket", sock, "--listen", `127.0.0.1:${port}`],
    { MCPD_SOCKET: sock });
  await waitPort(d, port);
  assertLoopback("mcpd", port);
  const token = execFileSync(mcpctl, ["--socket", sock, "http-token"], { env }).toString().trim();
  mcpdHttp = { pid: d.pid, port, token };
  return mcpdHttp;
}

function mcpdHttpPath(name, label, path, want, note) {
  return {
    name, label, note,
    async start() {
      const m = await startMcpdHttp();
      const url = new URL(`http://127.0.0.1:${m.port}${path}`);
      const headers = { Authorization: `Bearer ${m.token}` };
      const c = await connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }), label, want);
      return { ...c, roots: () => [m.pid], url, headers, kind: "stream" };
    },
  };
}

const httpPaths = [
  paths.find((p) => p.name === "direct"),
  {
    name: "httpDirect",
    label: "http direct (C http-server)",
    note: "the baseline of the HTTP rows: the same SDK client straight to tests/helpers/http-server",
    async start() {
      const srv = await startHttpServer("http-server");
      const c = await connect(new StreamableHTTPClientTransport(new URL(srv.url)), "http-server");
      return { ...c, roots: () => [srv.child.pid] };
    },
  },
  mcpdHttpPath("mcpdHttp", "mcpd http /servers/echo1/mcp", "/servers/echo1/mcp", "echo",
    "mcpd's loopback port with the token, one server's endpoint, the fake server behind it over stdio"),
  mcpdHttpPath("mcpdHttpAgg", "mcpd http /mcp", "/mcp", "mcp_echo1_echo", "the aggregate endpoint of the same mcpd"),
  mcpdHttpPath("mcpdHttpUp", "mcpd http -> http-server", "/servers/eh/mcp", "echo",
    "the same mcpd in front of a second http-server (Streamable HTTP upstream): the baseline's server behind mcpd"),
  ...paths.filter((p) => ["mcpHub", "mcpProxy", "supergateway"].includes(p.name)),
];
const active = opts.http ? httpPaths : paths;

// One idle session: initialize and notifications/initialized, each on a connection of its own
// that is closed after it; no GET stream. Returns a function that ends it (DELETE). Throws when
// the hub gives no session id.
async function rawSession(url, headers) {
  const post = (body, sid, method = "POST") => new Promise((resolve, reject) => {
    const h = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers };
    if (sid) Object.assign(h, { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" });
    const req = http.request(url, { method, agent: false, headers: h }, (res) => {
      res.resume();
      res.on("end", () => resolve({ sid: res.headers["mcp-session-id"], status: res.statusCode }));
    });
    req.setTimeout(CALL_TIMEOUT_MS, () => req.destroy(new Error("no answer")));
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
  const r = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
    protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "idle", version: "1" } } });
  if (!r.sid) throw new Error(`initialize gave ${r.status} and no Mcp-Session-Id`);
  const n = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, r.sid);
  if (n.status >= 300) throw new Error(`notifications/initialized gave ${n.status}`);
  return () => post(undefined, r.sid, "DELETE");
}

// What N idle sessions add to a hub's tree, per session, measured on the fresh hub (before any
// load, whose freed memory would hide them); then the sessions are ended (DELETE).
async function idleCost(p, n) {
  const before = treeMemory(p.roots()), ends = [];
  for (let i = 0; i < n; i++) ends.push(await rawSession(p.url, p.headers));
  await sleep(1000); // let servers a hub starts per session come up
  const after = treeMemory(p.roots());
  for (const end of ends) await end().catch(() => {});
  const per = (k) => Number(((after[k] - before[k]) / n).toFixed(1));
  return { sessions: n, hubRssKiB: per("hubRssKiB"), rssKiB: per("rssKiB"), pssKiB: per("pssKiB"),
    processes: per("processes") };
}

/* ---- measuring ---- */

let seq = 0;
// One tools/call; returns its time in ns, or throws when the answer is not the echo text.
async function call(p) {
  const text = `peer ${p.name} ${++seq}`;
  const t0 = process.hrtime.bigint();
  const res = await p.client.callTool({ name: p.tool, arguments: { text } }, undefined, { timeout: CALL_TIMEOUT_MS });
  const ns = Number(process.hrtime.bigint() - t0);
  const got = res && Array.isArray(res.content) && res.content[0] ? res.content[0].text : undefined;
  if (res.isError || got !== text) throw new Error(`wrong answer: ${JSON.stringify(res).slice(0, 200)} (wanted "${text}")`);
  return ns;
}

// Runs fn for a path, counting failures; a path whose calls fail is reported, not measured.
async function guarded(p, fn) {
  try {
    await fn();
  } catch (e) {
    p.failures++;
    if (!p.finding) p.finding = `calls fail: ${e.message}`;
  }
}

function pct(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
}
const us = (ns) => Math.round(ns / 1000);

async function main() {
  const started = Date.now();
  const live = [];
  for (const p of active) {
    p.failures = 0;
    p.lat = [];
    try {
      Object.assign(p, await p.start());
      live.push(p);
    } catch (e) {
      p.finding = `could not be driven: ${e.message}`;
      console.error(`mcp-peers: ${p.label}: ${p.finding}`);
    }
  }

  // Idle sessions (--http), on the fresh hubs: one row per hub process with a Streamable HTTP
  // endpoint.
  if (opts.http) {
    for (const p of live.filter((q) => q.kind === "stream" && !q.finding && !["mcpdHttpAgg", "mcpdHttpUp"].includes(q.name))) {
      try { p.idle = await idleCost(p, opts.short ? SHORT_IDLE : FULL_IDLE); } catch (e) { p.idleFinding = e.message; }
    }
  }

  for (const p of live) await guarded(p, async () => { for (let i = 0; i < warmup; i++) await call(p); });

  // Sequential latency: every round visits every path, starting one further each round.
  const per = calls / rounds;
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < live.length; k++) {
      const p = live[(r + k) % live.length];
      if (p.finding) continue;
      await guarded(p, async () => { for (let i = 0; i < per; i++) p.lat.push(await call(p)); });
    }
  }

  // Throughput: windows of K concurrent calls from the one client, in the same rounds.
  const K = opts.inflight, windows = Math.max(1, Math.round(loadCalls / K / rounds));
  for (const p of live) { p.loadNs = 0; p.loadCalls = 0; p.cpuNs = 0; }
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < live.length; k++) {
      const p = live[(r + k) % live.length];
      if (p.finding) continue;
      const roots = p.roots(), cpu0 = treeCpuNs(roots), t0 = process.hrtime.bigint();
      await guarded(p, async () => {
        for (let w = 0; w < windows; w++) {
          await Promise.all(Array.from({ length: K }, () => call(p)));
          p.loadCalls += K;
        }
      });
      p.loadNs += Number(process.hrtime.bigint() - t0);
      p.cpuNs += treeCpuNs(roots) - cpu0;
    }
  }
  for (const p of live) p.mem = treeMemory(p.roots());

  for (const p of live) await p.client.close().catch(() => {});
  const leftover = await stopAll();
  return { seconds: (Date.now() - started) / 1000, leftover };
}

// --http: mcpd's added latency against the fastest peer's (issue 35's target: at most a tenth),
// and the idle-session table.
function httpVerdict(direct, mcpdPath, measured, json) {
  const peers = active.filter((p) => ["mcpHub", "mcpProxy", "supergateway"].includes(p.name) && measured(p));
  // Against both baselines: the SDK's stdio client to the fake server (how the peers' figures
  // of issue 21 are taken) and its HTTP client to a C HTTP server (the HTTP client's own cost
  // left out).
  const stdio = active.find((p) => p.name === "direct");
  json.target = {};
  for (const base of [stdio, direct]) {
    if (!measured(base) || !measured(mcpdPath) || !peers.length) continue;
    const fastest = peers.reduce((a, b) => (a.p50 <= b.p50 ? a : b));
    const madd = mcpdPath.p50 - base.p50, padd = fastest.p50 - base.p50;
    const madd99 = mcpdPath.p99 - base.p99, padd99 = fastest.p99 - base.p99;
    const ratio = padd > 0 ? madd / padd : null, ratio99 = padd99 > 0 ? madd99 / padd99 : null;
    const f = (v) => (v === null ? "- (the peer added nothing)" : v.toFixed(3));
    console.log(`target (issue 35), against ${base.label}: mcpd's added p50 ${us(madd)} us is ${f(ratio)} of the ` +
      `fastest peer's (${fastest.label}, ${us(padd)} us); p99 ${us(madd99)} us, ${f(ratio99)} of ${us(padd99)} us; ` +
      `wanted <= 0.100: ${ratio !== null && ratio <= 0.1 ? "met" : "NOT met"}`);
    json.target[base.name] = { mcpdAddedP50Us: us(madd), fastestPeer: fastest.name, peerAddedP50Us: us(padd),
      mcpdAddedP99Us: us(madd99), peerAddedP99Us: us(padd99),
      ratioP50: ratio === null ? null : Number(ratio.toFixed(3)), ratioP99: ratio99 === null ? null : Number(ratio99.toFixed(3)) };
  }
  const rows = active.filter((p) => p.idle || p.idleFinding);
  if (!rows.length) return;
  console.log(`idle HTTP sessions (initialize + initialized, no stream, ${rows[0].idle?.sessions ?? "-"} per hub, on the fresh hub, then DELETEd), cost per session:`);
  console.log(`${"hub".padEnd(44)}${"hub RSS KiB".padStart(13)}${"tree RSS KiB".padStart(14)}${"tree PSS KiB".padStart(14)}${"processes".padStart(11)}`);
  for (const p of rows) {
    if (p.idleFinding) { console.log(`${p.label.padEnd(44)}  NOT MEASURED: ${p.idleFinding}`); continue; }
    console.log(`${p.label.padEnd(44)}${String(p.idle.hubRssKiB).padStart(13)}${String(p.idle.rssKiB).padStart(14)}` +
      `${String(p.idle.pssKiB).padStart(14)}${String(p.idle.processes).padStart(11)}`);
    json[p.name].idleSession = p.idle;
  }
}

function report(run) {
  // The baseline of "added": the same client without a hub (stdio, or HTTP with --http), and
  // the mcpd row the others are compared with.
  const direct = active.find((p) => p.name === (opts.http ? "httpDirect" : "direct"));
  const mcpdPath = active.find((p) => p.name === (opts.http ? "mcpdHttp" : "mcpd"));
  const rows = [], json = {};
  for (const p of active) {
    const s = [...p.lat].sort((a, b) => a - b);
    p.p50 = pct(s, 0.5); p.p90 = pct(s, 0.9); p.p99 = pct(s, 0.99);
    p.perSec = p.loadNs ? p.loadCalls / (p.loadNs / 1e9) : 0;
    p.cpuUs = p.loadCalls ? p.cpuNs / 1000 / p.loadCalls : 0;
  }
  const measured = (p) => !p.finding && p.lat.length > 0;
  const fmt = (v, w) => String(v).padStart(w);
  console.log(`peers through MCP: ${calls} sequential tools/call echo per path in ${rounds} alternating rounds ` +
    `(+${warmup} warm-up), then ${opts.inflight} in flight; SDK client @modelcontextprotocol/sdk ` +
    `${pkgVersion("@modelcontextprotocol/sdk")}, node ${process.version}, one fake server per path`);
  console.log(`${"path".padEnd(44)}${fmt("p50 us", 8)}${fmt("p90 us", 8)}${fmt("p99 us", 8)}${fmt("added p50", 11)}${fmt("added p99", 11)}` +
    `${fmt(`calls/s K=${opts.inflight}`, 14)}${fmt("CPU us/call", 12)}${fmt("hub RSS KiB", 13)}${fmt("tree RSS", 10)}${fmt("tree PSS", 10)}`);
  for (const p of active) {
    if (!measured(p)) {
      console.log(`${p.label.padEnd(44)}  NOT MEASURED: ${p.finding || "no calls"}`);
      json[p.name] = { label: p.label, finding: p.finding || "no calls" };
      continue;
    }
    const added = measured(direct) ? us(p.p50 - direct.p50) : null;
    const added99 = measured(direct) ? us(p.p99 - direct.p99) : null;
    const sign = (v) => (v === null ? "-" : (v >= 0 ? "+" : "") + v);
    console.log(`${p.label.padEnd(44)}${fmt(us(p.p50), 8)}${fmt(us(p.p90), 8)}${fmt(us(p.p99), 8)}` +
      `${fmt(sign(added), 11)}${fmt(sign(added99), 11)}${fmt(Math.round(p.perSec), 14)}` +
      `${fmt(p.cpuUs.toFixed(0), 12)}${fmt(p.mem.hubRssKiB, 13)}${fmt(p.mem.rssKiB, 10)}${fmt(p.mem.pssKiB, 10)}`);
    json[p.name] = {
      label: p.label, calls: p.lat.length, p50Us: us(p.p50), p90Us: us(p.p90), p99Us: us(p.p99),
      addedP50Us: added, addedP99Us: added99, perSec: Math.round(p.perSec), inflight: opts.inflight, cpuUsPerCall: Number(p.cpuUs.toFixed(1)),
      ...p.mem,
    };
  }
  if (measured(mcpdPath) && measured(direct)) {
    const madd = mcpdPath.p50 - direct.p50;
    console.log(opts.http ? "ratios to mcpd's loopback HTTP endpoint (/servers/echo1/mcp):"
      : "ratios to mcpd (mcpctl bridge), the path a stdio client such as the SDK takes:");
    for (const p of active) {
      if (p === direct || p === mcpdPath || !measured(p)) continue;
      const r = {
        addedP50: madd > 0 ? (p.p50 - direct.p50) / madd : null,
        p50: p.p50 / mcpdPath.p50,
        timePerCall: p.perSec ? mcpdPath.perSec / p.perSec : null,
        cpuPerCall: mcpdPath.cpuUs ? p.cpuUs / mcpdPath.cpuUs : null,
        hubRss: mcpdPath.mem.hubRssKiB ? p.mem.hubRssKiB / mcpdPath.mem.hubRssKiB : null,
      };
      const f = (v) => (v === null ? "-" : v.toFixed(1));
      console.log(`   ${p.label.padEnd(41)} added p50 ${f(r.addedP50)}x, p50 ${f(r.p50)}x, time per call at K=${opts.inflight} ` +
        `${f(r.timePerCall)}x, CPU per call ${f(r.cpuPerCall)}x, hub RSS ${f(r.hubRss)}x`);
      json[p.name].ratioToMcpd = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : Number(v.toFixed(2))]));
    }
  }
  if (opts.http) httpVerdict(direct, mcpdPath, measured, json);
  console.log("notes:");
  console.log(`   added = path p50 (p99) - ${direct.label} p50 (p99); CPU and RSS are of each path's process tree after the load ` +
    "(hub RSS: without the fake server processes; tree: with them); the client's own CPU is not counted");
  for (const p of active) if (p.note) console.log(`   ${p.label}: ${p.note}`);
  const findings = active.filter((p) => p.finding).map((p) => `${p.label}: ${p.finding}`);
  for (const f of findings) console.log(`   FINDING ${f}`);
  console.log(`   ${run.seconds.toFixed(1)} s; ${run.leftover} processes needed SIGKILL at the end`);
  console.log(JSON.stringify({ [opts.http ? "peersHttp" : "peersMcp"]: { short: opts.short, calls, rounds, inflight: opts.inflight, paths: json, findings } }));
  return findings;
}

let run;
try {
  run = await main();
} catch (e) {
  console.error(`mcp-peers: FAIL: ${e.stack || e}`);
  await stopAll();
  process.exit(1);
}
const findings = report(run);
// Correctness only: every path was driven and every call came back with its own text.
const failed = active.filter((p) => p.finding || p.failures || p.idleFinding);
if (failed.length) {
  console.error(`mcp-peers: FAIL: ${failed.map((p) => p.name).join(", ")} did not answer every call (${findings.join("; ")})`);
  process.exit(1);
}
console.log("mcp-peers: every call on every path came back with its echo text");
