// SPDX-License-Identifier: MIT
// socket-pipe: a byte pipe from a free loopback TCP port (printed on stdout) to a Unix socket,
// for the conformance suite 0.2.0-alpha.12, whose raw-fetch scenarios drop the URL's query and
// so cannot carry mcpd's loopback token: through this pipe they reach mcpd's own socket, where
// HTTP needs no token. It copies bytes both ways and reads none of them, so what the suite
// scores is mcpd's HTTP layer. Usage: node socket-pipe.mjs SOCKET
import net from "node:net";

const path = process.argv[2];
const server = net.createServer((tcp) => {
  const unix = net.connect(path);
  const end = () => { tcp.destroy(); unix.destroy(); };
  tcp.pipe(unix);
  unix.pipe(tcp);
  tcp.on("error", end).on("close", end);
  unix.on("error", end).on("close", end);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
