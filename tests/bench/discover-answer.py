#!/usr/bin/env python3
# discover-answer: what a stdio MCP server does with server/discover sent before anything else
# (the 2026-07-28 era probe), and when: every line it writes on stdout and stderr in the first
# 10 s, stamped with the seconds since its spawn. Usage: discover-answer.py COMMAND [ARG...]
# (docs/protocol-2026.md has the figures for the npm servers of tests/bench/ondemand).
import json
import os
import select
import subprocess
import sys
import time

WATCH_S = 10  # longer than any start measured here; a silent server shows as "nothing more"

t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
probe = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
         "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
p.stdin.write((json.dumps(probe) + "\n").encode())
p.stdin.flush()
deadline = t0 + WATCH_S
open_fds = [p.stdout, p.stderr]
while open_fds and time.monotonic() < deadline:
    ready, _, _ = select.select(open_fds, [], [], max(0, deadline - time.monotonic()))
    for f in ready:
        data = os.read(f.fileno(), 65536)
        name = "stdout" if f is p.stdout else "stderr"
        if not data:
            print(f"{time.monotonic() - t0:6.3f}s {name} closed")
            open_fds.remove(f)
            continue
        print(f"{time.monotonic() - t0:6.3f}s {name}: {data.decode(errors='replace')[:300]!r}")
print(f"{time.monotonic() - t0:6.3f}s nothing more")
p.kill()
p.wait()
