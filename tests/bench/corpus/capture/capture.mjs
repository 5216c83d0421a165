// SPDX-License-Identifier: MIT
// capture: run each public MCP server of package.json once over stdio and store its tools/list
// with its name, version and licence, as tests/bench/corpus/<server>.json (the search corpus).
//
// Run once, by hand, after `npm ci` here: node capture.mjs. The servers get placeholder
// credentials: listing tools needs none, and nothing is called.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..");

/* Per package: the corpus's server name, the arguments and the environment it starts with. */
const servers = {
  "@modelcontextprotocol/server-everything": { name: "everything", args: ["stdio"] },
  "@modelcontextprotocol/server-filesystem": { name: "filesystem", args: ["/tmp"] },
  "@modelcontextprotocol/server-memory": { name: "memory" },
  "@modelcontextprotocol/server-sequential-thinking": { name: "sequential-thinking" },
  "@modelcontextprotocol/server-github": {
    name: "github", env: { GITHUB_PERSONAL_ACCESS_TOKEN: "placeholder" } },
  "@modelcontextprotocol/server-gitlab": {
    name: "gitlab", env: { GITLAB_PERSONAL_ACCESS_TOKEN: "placeholder" } },
  "@modelcontextprotocol/server-slack": {
    name: "slack", env: { SLACK_BOT_TOKEN: "placeholder", SLACK_TEAM_ID: "T0" } },
  "@modelcontextprotocol/server-puppeteer": { name: "puppeteer" },
  "@modelcontextprotocol/server-brave-search": {
    name: "brave-search", env: { BRAVE_API_KEY: "placeholder" } },
  "@modelcontextprotocol/server-google-maps": {
    name: "google-maps", env: { GOOGLE_MAPS_API_KEY: "placeholder" } },
  "@modelcontextprotocol/server-postgres": {
    name: "postgres", args: ["postgresql://127.0.0.1:1/none"] },
  "@modelcontextprotocol/server-redis": { name: "redis", args: ["redis://127.0.0.1:1"] },
  "@playwright/mcp": { name: "playwright" },
  "@notionhq/notion-mcp-server": { name: "notion", env: { NOTION_TOKEN: "placeholder" } },
  "mcp-server-kubernetes": { name: "kubernetes" },
};

function pkgInfo(pkg) {
  const dir = join(here, "node_modules", pkg);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const bin = typeof meta.bin === "string" ? meta.bin : Object.values(meta.bin)[0];
  return { dir, meta, bin: join(dir, bin) };
}

function capture(pkg, spec) {
  const { meta, bin } = pkgInfo(pkg);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...(spec.args || [])], {
      env: { ...process.env, ...(spec.env || {}) },
      stdio: ["pipe", "pipe", "ignore"],
    });
    const tools = [];
    let buf = "";
    const timer = setTimeout(() => { child.kill(); reject(new Error(`${pkg}: timed out`)); }, 60000);
    const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
    child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let m;
        try { m = JSON.parse(line); } catch { continue; }
        if (m.id === 1) {
          send({ method: "notifications/initialized" });
          send({ id: 2, method: "tools/list", params: {} });
        } else if (m.id >= 2 && m.result) {
          tools.push(...m.result.tools);
          if (m.result.nextCursor)
            send({ id: m.id + 1, method: "tools/list", params: { cursor: m.result.nextCursor } });
          else {
            clearTimeout(timer);
            child.kill();
            resolve({ server: spec.name, package: pkg, version: meta.version,
                      license: meta.license || "see package", tools });
          }
        } else if (m.error) {
          clearTimeout(timer);
          child.kill();
          reject(new Error(`${pkg}: ${m.error.message}`));
        }
      }
    });
    send({ id: 1, method: "initialize", params: {
      protocolVersion: "2025-06-18", capabilities: {},
      clientInfo: { name: "mcpd-corpus-capture", version: "1" } } });
  });
}

for (const [pkg, spec] of Object.entries(servers)) {
  try {
    const r = await capture(pkg, spec);
    writeFileSync(join(out, `${spec.name}.json`), JSON.stringify(r, null, 1) + "\n");
    console.log(`${spec.name}: ${r.tools.length} tools (${pkg} ${r.version}, ${r.license})`);
  } catch (e) {
    console.log(`skipped ${e.message}`);
  }
}
