// SPDX-License-Identifier: MIT
// sdk-diff-tap: runs a stdio MCP server and appends the method of every message its host sends
// it (one JSON line: {"method", "id"?, "requestId"?}) to a log file, so sdk-diff.mjs can check
// what the server itself saw (a notifications/cancelled, say), whether the host is an SDK
// client or mcpd. The bytes pass through unchanged.
//
// Usage: node sdk-diff-tap.mjs LOGFILE COMMAND ARGS...

import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
let pending = "";
process.stdin.on("data", (chunk) => {
  child.stdin.write(chunk);
  pending += chunk.toString("utf8");
  let nl;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    try {
      const msg = JSON.parse(line);
      appendFileSync(log, JSON.stringify({ method: msg.method, id: msg.id, requestId: msg.params?.requestId }) + "\n");
    } catch {
      // Not JSON: the server judges it; the log only lists messages.
    }
  }
});
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code, signal) => process.exit(signal ? 1 : code ?? 0));
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => child.kill(sig));
