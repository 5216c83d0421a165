// SPDX-License-Identifier: MIT
// handoff-sdk: the TypeScript SDK client (v1, tests/bench/peer's pinned package) through
// `mcpctl bridge`, which hands its pipes to mcpd, against the same client on mcpd's socket and
// against the fake server started directly (the baseline), issue 36: sequential tools/call echo
// in alternating rounds; then the same with every process on one CPU (taskset). Prints p50s,
// the added p50 of each path and the bridge's over the socket's, and one JSON line. Exits
// non-zero only when a call fails (never for a figure).
//
// Run through tests/bench/run.sh --peers (installs the packages); needs FAKE_SERVER,
// MCPD_BINARY and MCPCTL_BINARY. Options: --short (the suite's proof that every path answers).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const modules = process.env.PEER_MODULES || join(here, "peer", "node_modules");
const sdk = (p) => import(join(modules, "@modelcontextprotocol/sdk/dist/esm", p));
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ReadBuffer, serializeMessage } = await sdk("shared/stdio.js");

// Calls per path: 3000 in 6 rounds gives a steady median in well under a minute per pass; the
// short mode only proves every path answers. Warm-up calls per path before each round (JIT).
const FULL_CALLS = 3000, SHORT_CALLS = 60, ROUNDS = 6, WARMUP = 100;
// How long mcpd may take to make its socket and connect the fake server on a loaded machine.
const READY_MS = 60000;

const args = process.argv.slice(2);
const short = args.includes("--short"), child = args.includes("--pinned-child");
const calls = short ? SHORT_CALLS : FULL_CALLS;
const { FAKE_SERVER: fake, MCPD_BINARY: mcpd, MCPCTL_BINARY: mcpctl } = process.env;
if (!fake || !mcpd || !mcpctl) {
  console.error("handoff-sdk: FAKE_SERVER, MCPD_BINARY and MCPCTL_BINARY must be set");
  process.exit(99);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The SDK's line framing straight over mcpd's socket (no bridge process).
class SocketTransport {
  constructor(path) { this.path = path; this.buf = new ReadBuffer(); }
  start() {
    return new Promise((resolve, reject) => {
      this.sock = net.connect(this.path, resolve);
      this.sock.once("error", reject);
      this.sock.on("data", (chunk) => {
        this.buf.append(chunk);
        for (let m; (m = this.buf.readMessage());) this.onmessage?.(m);
      });
      this.sock.on("close", () => this.onclose?.());
    });
  }
  send(message) { return new Promise((resolve) => this.sock.write(serializeMessage(message), resolve)); }
  async close() { this.sock?.destroy(); }
}

async function measure() {
  const dir = mkdtempSync(join(tmpdir(), "mcpd-handoff-sdk-"));
  for (const d of ["home", "config", "state", "cache", "run"]) mkdirSync(join(dir, d), { mode: 0o700 });
  const env = { ...process.env, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config"),
    XDG_STATE_HOME: join(dir, "state"), XDG_CACHE_HOME: join(dir, "cache"), XDG_RUNTIME_DIR: join(dir, "run") };
  const sock = join(dir, "run", "mcpd.sock"), cfg = join(dir, "mcpd.json");
  writeFileSync(cfg, JSON.stringify({ mcpServers: { fake: { command: fake, start: "eager" } } }));
  const daemon = spawn(mcpd, ["--config", cfg, "--socket", sock], { env, stdio: "ignore" });
  const clients = [];
  try {
    for (const end = Date.now() + READY_MS; !existsSync(sock); await sleep(50))
      if (Date.now() > end || daemon.exitCode !== null) throw new Error("mcpd made no socket");
    const open = async (t) => {
      const c = new Client({ name: "handoff-sdk", version: "1" });
      await c.connect(t);
      clients.push(c);
      return c;
    };
    const paths = {
      direct: { client: await open(new StdioClientTransport({ command: fake, args: [], env, stderr: "ignore" })), tool: "echo" },
      socket: { client: await open(new SocketTransport(sock)) },
      bridge: { client: await open(new StdioClientTransport({ command: mcpctl, args: ["--socket", sock, "bridge"], env, stderr: "ignore" })) },
    };
    for (const end = Date.now() + READY_MS; !paths.socket.tool; await sleep(100)) {
      paths.socket.tool = (await paths.socket.client.listTools()).tools.map((t) => t.name).find((n) => n.endsWith("_echo"));
      if (Date.now() > end) throw new Error("mcpd lists no echo tool");
    }
    paths.bridge.tool = paths.socket.tool;
    const lat = { direct: [], socket: [], bridge: [] }, names = Object.keys(lat);
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(k + r) % names.length], p = paths[name];
        for (let i = 0; i < (short ? 2 : WARMUP); i++) await p.client.callTool({ name: p.tool, arguments: { text: "w" } });
        for (let i = 0; i < calls / ROUNDS; i++) {
          const text = `c${r}-${i}`, t0 = process.hrtime.bigint();
          const res = await p.client.callTool({ name: p.tool, arguments: { text } });
          lat[name].push(Number(process.hrtime.bigint() - t0) / 1000);
          if (!JSON.stringify(res.content).includes(text)) throw new Error(`${name}: wrong answer ${JSON.stringify(res)}`);
        }
      }
    }
    const p50 = {};
    for (const n of names) p50[n] = lat[n].sort((a, b) => a - b)[Math.floor((lat[n].length - 1) / 2)];
    return p50;
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    daemon.kill("SIGTERM");
    await new Promise((r) => (daemon.exitCode !== null ? r() : daemon.once("exit", r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(label, p) {
  const added = (n) => p[n] - p.direct;
  console.log(`${label}: direct ${p.direct.toFixed(1)} us, socket ${p.socket.toFixed(1)} us (added ` +
    `${added("socket").toFixed(1)}), bridge handed off ${p.bridge.toFixed(1)} us (added ${added("bridge").toFixed(1)}); ` +
    `added p50 bridge / socket ${(added("bridge") / added("socket")).toFixed(3)}`);
}

if (child) {
  console.log(JSON.stringify(await measure()));
  process.exit(0);
}
console.log(`handoff-sdk: TypeScript SDK v1 client, sequential tools/call echo, ${calls} calls x 3 paths ` +
  `in ${ROUNDS} alternating rounds, p50`);
const free = await measure();
report("  unpinned", free);
// Pinned: this script again under taskset, so the client, mcpd, the bridge and the servers share
// the last CPU (every hop a switch on one CPU, not the wake-up of an idle one).
let pinned = null;
const cpu = availableParallelism() - 1;
if (cpu > 0 && spawnSync("taskset", ["--version"]).status === 0) {
  const r = spawnSync("taskset", ["-c", String(cpu), process.execPath, fileURLToPath(import.meta.url), "--pinned-child", ...(short ? ["--short"] : [])],
    { env: process.env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (r.status !== 0) { console.error(`handoff-sdk: the pinned pass failed (${r.status})`); process.exit(1); }
  pinned = JSON.parse(r.stdout.trim().split("\n").pop());
  report(`  pinned (CPU ${cpu})`, pinned);
} else {
  console.log("  pinned: skipped (one CPU, or no taskset)");
}
console.log(JSON.stringify({ handoffSdk: { unpinned: free, pinned } }));
