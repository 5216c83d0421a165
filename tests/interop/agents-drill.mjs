// SPDX-License-Identifier: MIT
// agents-drill: the real agent CLIs from npm (Claude Code, Gemini CLI, Codex, OpenCode, pinned in
// agents/package-lock.json) as a user has them, each with a server of its own in its own file,
// then `mcpctl setup --all` and `mcpctl setup --undo --all`. No model runs: each CLI's own MCP
// listing starts and checks the servers (`claude mcp list`, `gemini mcp list`, `opencode mcp
// list`; Codex's app-server lists every server's tools and calls one with
// mcpServer/tool/call, starting the servers the way Codex does, with its short environment).
//
// Checked: before setup each CLI lists its own server connected; after setup each one set up
// lists only mcpd's bridge, connected, and sees every original tool once through it; a tool call
// through each works (Codex's own call; for Claude Code and Gemini CLI the entry in their file
// started as they start it); undo restores every file byte for byte, and each CLI lists its own
// server connected again, also after Claude Code moved its approval and setup's switch of the
// project's .mcp.json server into <project>/.claude/settings.local.json. Agents setup does not
// cover are named by it and left untouched.
//
// Run by meson through agents-drill.sh (which installs the pinned CLIs); needs MCPD_BINARY,
// MCPCTL_BINARY, FAKE_SERVER, AGENTS_BIN (the CLIs' node_modules/.bin) and OPENCODE_BIN.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";

const mcpd = process.env.MCPD_BINARY, mcpctl = process.env.MCPCTL_BINARY;
const fake = process.env.FAKE_SERVER, bin = process.env.AGENTS_BIN;
// OpenCode's own build for this machine (agents/package.json says why not opencode-ai).
const opencode = process.env.OPENCODE_BIN;
if (!mcpd || !mcpctl || !fake || !bin) {
  console.error("MCPD_BINARY, MCPCTL_BINARY, FAKE_SERVER and AGENTS_BIN must be set (agents-drill.sh)");
  process.exit(99);
}

// One CLI run: starting a Node CLI and letting it start and check each server takes seconds
// (Gemini CLI's listing about 15 s on a 2-core box); four times that covers a loaded machine.
const CLI_TIMEOUT_MS = 90000;
// One JSON-RPC request to Codex's app-server or to a bridge.
const RPC_TIMEOUT_MS = 60000;

const started = Date.now();
const dir = mkdtempSync(join(tmpdir(), "mcpd-drill-"));
const home = join(dir, "home"), project = join(home, "project");
const env = {
  PATH: `${bin}:${process.env.PATH}`,
  HOME: home,
  USER: process.env.USER ?? "drill",
  LANG: "C.UTF-8",
  TERM: "dumb",
  NO_COLOR: "1",
  XDG_CONFIG_HOME: join(dir, "config"),
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_STATE_HOME: join(dir, "state"),
  XDG_DATA_HOME: join(dir, "data"),
  XDG_RUNTIME_DIR: join(dir, "run"),
  // No update checks, telemetry or other traffic the listings do not need.
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  GEMINI_TELEMETRY_ENABLED: "false",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_SHARE: "1",
};
for (const d of [home, project, env.XDG_CONFIG_HOME, env.XDG_CACHE_HOME, env.XDG_STATE_HOME,
  env.XDG_DATA_HOME, env.XDG_RUNTIME_DIR])
  mkdirSync(d, { recursive: true, mode: 0o700 });

let failures = 0;
const fail = (msg) => { failures++; console.error("FAIL:", msg); };
const check = (ok, msg) => { if (!ok) fail(msg); return ok; };
const step = (msg) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const server = (name) => ({ command: fake, args: ["--name", name] });

// Each agent's own file, with a server of its own and keys setup must keep.
const files = {
  claude: {
    path: join(home, ".claude.json"),
    text: JSON.stringify({
      numStartups: 3,
      mcpServers: { cla: server("cla") },
      // The project's .mcp.json server, approved in Claude Code (the user accepted the
      // folder's trust dialog and the server); Claude Code moves the approval to the
      // project's .claude/settings.local.json as it runs.
      projects: {
        [project]: {
          allowedTools: [], mcpServers: {}, enabledMcpjsonServers: ["prj"],
          disabledMcpjsonServers: [], hasTrustDialogAccepted: true,
        },
      },
    }, null, 2) + "\n",
  },
  gemini: {
    path: join(home, ".gemini", "settings.json"),
    text: `// Gemini CLI settings, with a comment setup keeps\n${JSON.stringify({
      ui: { theme: "Default" },
      mcpServers: { gem: server("gem") },
    }, null, 2)}\n`,
  },
  codex: {
    path: join(home, ".codex", "config.toml"),
    text: `# Codex configuration\nmodel = "gpt-5-codex"\n\n[mcp_servers.cdx]\ncommand = "${fake}"\n` +
      `args = ["--name", "cdx"]\n\n[tui]\nnotifications = false\n`,
  },
  opencode: {
    path: join(env.XDG_CONFIG_HOME, "opencode", "opencode.json"),
    text: JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      mcp: { opc: { type: "local", command: [fake, "--name", "opc"], enabled: true } },
    }, null, 2) + "\n",
  },
};
// Written by Claude Code, not by the test: undo must give it back as setup found it.
const claudeLocal = join(project, ".claude", "settings.local.json");
writeFileSync(join(project, ".mcp.json"), JSON.stringify({ mcpServers: { prj: server("prj") } }, null, 2) + "\n");
// Gemini CLI starts no server in a folder the user has not trusted.
const geminiTrust = join(home, ".gemini", "trustedFolders.json");
for (const f of Object.values(files)) {
  mkdirSync(dirname(f.path), { recursive: true, mode: 0o700 });
  writeFileSync(f.path, f.text, { mode: 0o600 });
}
writeFileSync(geminiTrust, JSON.stringify({ [project]: "TRUST_FOLDER", [home]: "TRUST_FOLDER" }));

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, {
    cwd: project, env: { ...env, ...(opts.env ?? {}) }, encoding: "utf8", timeout: CLI_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.error) fail(`${cmd} ${args.join(" ")}: ${r.error.message}\n${out}`);
  return { status: r.status, out };
}

// A CLI's listing: the line that names server, and whether it says connected.
function listed(out, name) {
  const line = out.split("\n").find((l) => new RegExp(`(^|[\\s✓✔○●✗])${name}[:\\s]`).test(l));
  return { line, connected: !!line && /connected/i.test(line) && !/disconnected|failed/i.test(line) };
}

const listings = {
  claude: () => run("claude", ["mcp", "list"]).out,
  gemini: () => run("gemini", ["mcp", "list"]).out,
  opencode: () => run(opencode, ["mcp", "list"]).out,
};
if (!existsSync(opencode ?? "")) {
  // Only its linux-x64 build is pinned: elsewhere the drill goes on with the other three.
  if (process.platform === "linux" && process.arch === "x64") {
    console.error(`FAIL: OpenCode's pinned build is not at ${opencode}`);
    process.exit(1);
  }
  console.log(`note: no OpenCode build for ${process.platform}-${process.arch} is pinned; OpenCode is not drilled`);
  delete listings.opencode;
}

// A line-delimited JSON-RPC peer (Codex's app-server, or a bridge started as a host starts it).
class Rpc {
  constructor(cmd, args, spawnEnv) {
    this.proc = spawn(cmd, args, { cwd: project, env: spawnEnv, stdio: ["pipe", "pipe", "pipe"] });
    this.waiting = new Map();
    this.stderr = "";
    this.proc.stderr.on("data", (d) => { this.stderr += d; });
    createInterface({ input: this.proc.stdout }).on("line", (line) => {
      let m;
      try { m = JSON.parse(line); } catch { return; }
      if (m.id !== undefined && !m.method && this.waiting.has(m.id)) {
        this.waiting.get(m.id)(m);
        this.waiting.delete(m.id);
      }
    });
    this.next = 1;
  }
  notify(method, params) {
    this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }) + "\n");
  }
  request(method, params) {
    const id = this.next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ error: { message: `no answer to ${method} in ${RPC_TIMEOUT_MS} ms; stderr: ${this.stderr.slice(-2000)}` } });
      }, RPC_TIMEOUT_MS);
      this.waiting.set(id, (m) => { clearTimeout(timer); resolve(m); });
      this.proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }
  async close() {
    this.proc.stdin.end();
    const exited = new Promise((r) => this.proc.once("exit", r));
    if (await Promise.race([exited.then(() => true), sleep(10000).then(() => false)]) === false)
      this.proc.kill("SIGKILL");
  }
}

// Codex's view through its app-server: every server's tools ({name: [tool...]}), and a call.
async function codexView(callServer, callTool) {
  const rpc = new Rpc("codex", ["app-server"], env);
  const init = await rpc.request("initialize", { clientInfo: { name: "mcpd-drill", version: "1" } });
  check(init.result, `codex app-server initialize: ${JSON.stringify(init)}`);
  rpc.notify("initialized");
  const list = await rpc.request("mcpServerStatus/list", {});
  const servers = {};
  for (const s of list.result?.data ?? []) servers[s.name] = Object.keys(s.tools ?? {});
  check(list.result, `codex mcpServerStatus/list: ${JSON.stringify(list).slice(0, 2000)}`);
  let called = null;
  if (callServer) {
    const thread = await rpc.request("thread/start", { ephemeral: true });
    const tid = thread.result?.thread?.id;
    check(tid, `codex thread/start: ${JSON.stringify(thread).slice(0, 2000)}`);
    const r = await rpc.request("mcpServer/tool/call", {
      server: callServer, threadId: tid, tool: callTool, arguments: { text: "through codex" },
    });
    called = r.result?.content?.[0]?.text ?? JSON.stringify(r).slice(0, 2000);
  }
  await rpc.close();
  return { servers, called };
}

// The entry an agent's file holds for mcpd, started as the agent starts it: tools and a call.
async function throughEntry(entry, tool) {
  const rpc = new Rpc(entry.command, entry.args ?? [], { ...env, ...(entry.env ?? {}) });
  const init = await rpc.request("initialize", {
    protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "host", version: "1" },
  });
  rpc.notify("notifications/initialized");
  const list = await rpc.request("tools/list", {});
  const call = await rpc.request("tools/call", { name: tool, arguments: { text: "through the entry" } });
  await rpc.close();
  return {
    ok: !!init.result,
    tools: (list.result?.tools ?? []).map((t) => t.name),
    text: call.result?.content?.[0]?.text ?? JSON.stringify(call).slice(0, 1000),
  };
}

const own = { claude: "cla", gemini: "gem", codex: "cdx", opencode: "opc" };
const setUp = ["claude", "gemini", "codex"];
const originalTools = ["echo", "add"];

async function listsOwn(when) {
  for (const [agent, list] of Object.entries(listings)) {
    const out = list();
    const l = listed(out, own[agent]);
    check(l.connected, `${when}: ${agent} does not list its server ${own[agent]} connected:\n${out}`);
    if (agent === "claude")
      check(listed(out, "prj").connected, `${when}: claude does not list the project's prj connected:\n${out}`);
  }
  const cx = await codexView("cdx", "echo");
  check(cx.servers.cdx?.includes("echo"), `${when}: codex lists ${JSON.stringify(cx.servers)}`);
  check(cx.called === "through codex", `${when}: codex's call of cdx/echo gave ${cx.called}`);
}

async function main() {
  const daemon = spawn(mcpd, [], { env, stdio: ["ignore", "ignore", "pipe"] });
  let daemonLog = "";
  daemon.stderr.on("data", (d) => { daemonLog = (daemonLog + d).slice(-20000); });
  const sock = join(env.XDG_RUNTIME_DIR, "mcpd", "mcpd.sock");
  for (let i = 0; i < 400 && !existsSync(sock); i++) await sleep(50);
  check(existsSync(sock), `mcpd did not open ${sock}`);

  step("before setup: each CLI lists its own server");
  await listsOwn("before setup");

  // The CLIs write their own files as they run (Claude Code adds its first-start keys to
  // ~/.claude.json): what undo must give back is each file as setup found it.
  const before = Object.fromEntries(Object.entries(files).map(([a, f]) => [a, readFileSync(f.path, "utf8")]));
  const localBefore = existsSync(claudeLocal) ? readFileSync(claudeLocal, "utf8") : null;
  check(localBefore && JSON.parse(localBefore).enabledMcpjsonServers?.includes("prj"),
    `Claude Code did not move its approval of prj to ${claudeLocal} (the drill expects 2.1.332's move): ${localBefore}`);
  step("mcpctl setup --all");
  const setup = run(mcpctl, ["setup", "--all"]);
  check(setup.status === 0, `setup --all exited ${setup.status}:\n${setup.out}`);
  console.log(setup.out.trim());
  check(/OpenCode: .* not set up: /.test(setup.out) && /Skipped \(.*opencode/.test(setup.out),
    `setup --all does not name OpenCode as skipped:\n${setup.out}`);
  check(readFileSync(files.opencode.path, "utf8") === before.opencode,
    "setup --all changed OpenCode's file, which it does not set up");

  step("after setup: each CLI set up lists only mcpd, connected, and every tool once through it");
  for (const agent of ["claude", "gemini"]) {
    const out = listings[agent]();
    check(listed(out, "mcpd").connected, `${agent} does not list mcpd connected:\n${out}`);
    check(!listed(out, own[agent]).line, `${agent} still lists ${own[agent]} itself:\n${out}`);
    if (agent === "claude")
      check(!listed(out, "prj").connected, `claude still starts the project's prj itself:\n${out}`);
  }
  // Claude Code has now moved setup's switch off prj to its settings.local.json too.
  const localMoved = existsSync(claudeLocal) ? readFileSync(claudeLocal, "utf8") : "";
  console.log(`settings.local.json after setup and a Claude Code run: ${localMoved.replace(/\s+/g, " ")}`);
  const cx = await codexView("mcpd", "cdx_echo");
  check(Object.keys(cx.servers).join() === "mcpd", `codex lists ${JSON.stringify(Object.keys(cx.servers))}, not only mcpd`);
  for (const s of Object.values(own))
    for (const t of originalTools) {
      const n = (cx.servers.mcpd ?? []).filter((x) => x === `${s}_${t}`).length;
      check(n === 1, `codex lists ${s}_${t} ${n} times through mcpd: ${JSON.stringify(cx.servers.mcpd)}`);
    }
  check(cx.called === "through codex", `codex's call of mcpd/cdx_echo gave ${cx.called}`);
  const claudeEntry = JSON.parse(readFileSync(files.claude.path, "utf8")).mcpServers.mcpd;
  const geminiText = readFileSync(files.gemini.path, "utf8");
  check(geminiText.startsWith("// Gemini CLI settings, with a comment setup keeps\n"),
    "setup lost the comment of Gemini CLI's settings");
  const geminiEntry = JSON.parse(geminiText.replace(/^\/\/.*\n/, "")).mcpServers.mcpd;
  for (const [agent, entry] of [["claude", claudeEntry], ["gemini", geminiEntry]]) {
    const r = await throughEntry(entry, "gem_echo");
    check(r.ok, `${agent}'s mcpd entry did not initialize`);
    for (const s of Object.values(own))
      check(r.tools.filter((x) => x === `${s}_echo`).length === 1,
        `${agent}'s entry lists ${s}_echo not once: ${JSON.stringify(r.tools)}`);
    check(r.text === "through the entry", `${agent}'s entry: gem_echo gave ${r.text}`);
  }
  const status = JSON.parse(run(mcpctl, ["--json", "status"]).out);
  for (const s of Object.values(own)) {
    const row = (status.servers ?? []).find((x) => x.name === s);
    check(row?.state === "connected", `mcpd's ${s}: ${JSON.stringify(row)}`);
  }

  step("mcpctl setup --undo --all");
  const undo = run(mcpctl, ["setup", "--undo", "--all"]);
  check(undo.status === 0, `setup --undo --all exited ${undo.status}:\n${undo.out}`);
  const localAfter = existsSync(claudeLocal) ? readFileSync(claudeLocal, "utf8") : null;
  check(localAfter === localBefore,
    `--undo did not give ${claudeLocal} back as setup found it:\n${localAfter}\n---- before setup:\n${localBefore}`);
  for (const [agent, f] of Object.entries(files))
    check(readFileSync(f.path, "utf8") === before[agent],
      `${agent}: --undo did not restore ${f.path} byte for byte:\n${readFileSync(f.path, "utf8")}\n---- before setup:\n${before[agent]}`);

  step("after undo: each CLI lists its own server again");
  await listsOwn("after undo");

  daemon.kill("SIGTERM");
  await new Promise((r) => daemon.once("exit", r));
  if (failures) console.error(`mcpd log (end):\n${daemonLog}`);
  step(`done: ${failures} failure(s)`);
}

main().catch((e) => fail(e.stack ?? String(e))).finally(() => {
  if (!failures) rmSync(dir, { recursive: true, force: true });
  else console.error(`kept ${dir} for inspection`);
  process.exit(failures ? 1 : 0);
});
