#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# http-idle-sessions: what an idle HTTP session costs mcpd (issue 35): N sessions opened with
# initialize over the socket and left idle; mcpd's RSS before and after, per session.
#   python3 tests/bench/http-idle-sessions.py SOCKET MCPD_PID [N]
import socket
import sys
import time

sock, pid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 200
body = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}')


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))


def session():
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
              b"Accept: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n"
              % len(body) + body)
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    s.close()
    assert b"Mcp-Session-Id" in got, got[:200]


for _ in range(20):  # warm: what the first sessions allocate for good is in the baseline
    session()
time.sleep(0.5)
before = rss_kib()
for _ in range(n):
    session()
time.sleep(0.5)
after = rss_kib()
print(f"{n} idle HTTP sessions: mcpd RSS {before} -> {after} KiB, "
      f"{(after - before) / n:.1f} KiB per session")
