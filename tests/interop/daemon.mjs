// SPDX-License-Identifier: MIT
// daemon: the private mcpd an interop script runs: its own home, config, cache and runtime
// dirs, a server list and optional mcpd.json, started on a socket of its own, and the mcpctl
// calls the scripts make on it.

import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/*
 * The environment variables a script needs (meson and run.sh set them), or exit 99 (meson's
 * "hard error") naming the missing ones. Returns their values by name.
 */
export function requireEnv(...names) {
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length) {
    console.error(`${missing.join(", ")} must be set (run through run.sh)`);
    process.exit(99);
  }
  return Object.fromEntries(names.map((n) => [n, process.env[n]]));
}

/* server-everything over stdio, as an mcp.json entry (its first start may be slow: 60 s). */
export function everythingServer() {
  return { command: process.execPath, args: [requireEnv("EVERYTHING_JS").EVERYTHING_JS, "stdio"], timeout: 60000 };
}

/*
 * Start mcpd with servers as its mcp.json (--config) and settings (when given) as its
 * mcpd.json. opts.args are more mcpd options (e.g. --listen); opts.captureLog keeps mcpd's
 * stderr for log() instead of passing it through. Returns {dir, sock, env, project, ready(),
 * stop(), mcpctl(...args), wait(...servers), log(), httpPort()}: ready() waits for the socket,
 * stop() ends mcpd and removes the dirs.
 */
export function startDaemon(prefix, servers, settings, opts = {}) {
  const mcpd = requireEnv("MCPD_BINARY").MCPD_BINARY;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const sock = join(dir, "run", "mcpd.sock");
  const env = {
    ...process.env,
    HOME: join(dir, "home"),
    XDG_CONFIG_HOME: join(dir, "config"),
    XDG_CACHE_HOME: join(dir, "cache"),
    XDG_RUNTIME_DIR: join(dir, "run"),
    MCPD_SOCKET: sock,
  };
  for (const d of ["home", "config", "config/mcpd", "cache", "run", "project"])
    mkdirSync(join(dir, d), { mode: 0o700 });
  const config = join(dir, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  if (settings) writeFileSync(join(dir, "config", "mcpd", "mcpd.json"), JSON.stringify(settings));
  const daemon = spawn(mcpd, ["--config", config, "--socket", sock, ...(opts.args ?? [])],
    { env, stdio: ["ignore", "inherit", opts.captureLog ? "pipe" : "inherit"] });
  let logText = "";
  daemon.stderr?.on("data", (d) => { logText += d; });
  const mcpctl = (...args) =>
    execFileSync(requireEnv("MCPCTL_BINARY").MCPCTL_BINARY, ["--socket", sock, ...args], { env }).toString();
  return {
    dir, sock, env, project: join(dir, "project"), mcpctl,
    log: () => logText,
    async ready() {
      for (let i = 0; i < 200 && !existsSync(sock); i++) await sleep(50);
    },
    /* Wait for the socket, then for each server to be connected (60 s each). */
    async wait(...names) {
      await this.ready();
      for (const n of names) mcpctl("--timeout", "60000", "wait", n);
    },
    /* The loopback port mcpd logged (with --listen 127.0.0.1:0 and captureLog), or 0. */
    async httpPort() {
      const re = /serving MCP over HTTP on 127\.0\.0\.1 port (\d+)/;
      for (let i = 0; i < 400 && !re.test(logText); i++) await sleep(50);
      return Number(re.exec(logText)?.[1] ?? 0);
    },
    async stop() {
      if (daemon.exitCode === null && daemon.signalCode === null) {
        daemon.kill("SIGTERM");
        await new Promise((r) => daemon.once("exit", r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/*
 * Run main(), report a failure (and tail, when given, e.g. mcpd's log), stop the daemon and
 * exit 1 on failure; print "name: all checks passed" otherwise. failed() lets a script record
 * a soft failure of its own and still go on.
 */
export async function runChecks(name, d, main, failed = () => false) {
  let bad = false;
  try {
    await main();
  } catch (e) {
    bad = true;
    console.error(`${name} FAILED:`, e.stack || String(e));
    const log = d.log();
    if (log) console.error(log.split("\n").slice(-40).join("\n"));
  } finally {
    await d.stop();
  }
  if (bad || failed()) process.exit(1);
  console.log(`${name}: all checks passed`);
  process.exit(0);
}
