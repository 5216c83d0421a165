// SPDX-License-Identifier: MIT
// daemon: the private mcpd an interop script runs: its own home, config, cache and runtime
// dirs, a server list and optional mcpd.json, started on a socket of its own.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/*
 * Start mcpd with servers as its mcp.json (--config) and settings (when given) as its
 * mcpd.json. Returns {dir, sock, env, project, ready(), stop()}: ready() waits for the socket,
 * stop() ends mcpd and removes the dirs.
 */
export function startDaemon(prefix, servers, settings) {
  const mcpd = process.env.MCPD_BINARY;
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
  const daemon = spawn(mcpd, ["--config", config, "--socket", sock], { env, stdio: ["ignore", "inherit", "inherit"] });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  return {
    dir, sock, env, project: join(dir, "project"),
    async ready() {
      for (let i = 0; i < 200 && !existsSync(sock); i++) await sleep(50);
    },
    async stop() {
      daemon.kill("SIGTERM");
      await new Promise((r) => daemon.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
