// SPDX-License-Identifier: MIT
// http-fetch: a fetch() on node:http with a connection pool of its own, given to the TypeScript
// SDK's Streamable HTTP transports (v1 and v2, option `fetch`). With a socket path every request
// goes to that Unix socket whatever the URL's host (as undici's socketPath does): how a client
// reaches mcpd's socket. Connections are kept alive and reused once a response is read, so a
// 2026-07-28 retry (input_required) comes on the connection of the call it continues, and no
// other client shares them (mcpd keeps that era's agent per connection: docs/http.md).

import http from "node:http";
import { Readable } from "node:stream";

export function nodeFetch(path) {
  const agent = new http.Agent({ keepAlive: true });
  return (url, init = {}) => new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers = Object.fromEntries(new Headers(init.headers ?? {}).entries());
    // A length, as fetch sends for a string body (mcpd takes no chunked request bodies).
    if (init.body) headers["content-length"] = Buffer.byteLength(init.body);
    const req = http.request({ agent, ...(path ? { socketPath: path } : { host: u.hostname, port: u.port }), path: u.pathname + u.search, method: init.method ?? "GET", headers }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) h.set(k, Array.isArray(v) ? v.join(", ") : v);
      const empty = res.statusCode === 202 || res.statusCode === 204;
      if (empty) res.resume();
      resolve(new Response(empty ? null : Readable.toWeb(res), { status: res.statusCode, headers: h }));
    });
    req.on("error", reject);
    const abort = () => req.destroy(new Error("aborted"));
    init.signal?.addEventListener("abort", abort, { once: true });
    req.on("close", () => init.signal?.removeEventListener("abort", abort));
    if (init.body) req.write(init.body);
    req.end();
  });
}
