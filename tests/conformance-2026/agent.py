#!/usr/bin/env python3
# agent: a 2025-era agent on mcpd's socket that drives one 2026-07-28 client scenario of the
# conformance suite (mcpd is the client under test; its upstream is the scenario's server). It
# answers the elicitation requests mcpd forwards (multi round-trip requests) and exits 0 only if
# every step worked.
import json
import os
import socket
import sys

# Every answer through mcpd comes well within this (the scenario's servers answer at once).
TIMEOUT_S = 60


class Agent:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT_S)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 0
        self.asked = []  # requests mcpd put to us (method names)

    def send(self, msg):
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def line(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise SystemExit("agent: mcpd closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            m = self.line()
            if "method" in m and "id" in m:
                self.answer(m)
            elif m.get("id") == rid:
                if "error" in m:
                    raise SystemExit(f"agent: {method} failed: {m['error']}")
                return m["result"]

    def answer(self, m):
        self.asked.append(m["method"])
        if m["method"] == "elicitation/create":
            props = m["params"].get("requestedSchema", {}).get("properties", {})
            content = {k: True for k, v in props.items() if v.get("type") == "boolean"}
            self.send({"jsonrpc": "2.0", "id": m["id"],
                       "result": {"action": "accept", "content": content}})
        else:
            self.send({"jsonrpc": "2.0", "id": m["id"],
                       "error": {"code": -32601, "message": "not served by this agent"}})

    def tool(self, tools, name):
        for t in tools:
            if t.get("_meta", {}).get("mcpd/tool") == name:
                return t["name"]
        raise SystemExit(f"agent: no tool {name} in {[t['name'] for t in tools]}")

    def call(self, tools, name, args=None, expect=None):
        r = self.request("tools/call", {"name": self.tool(tools, name), "arguments": args or {}})
        text = " ".join(c.get("text", "") for c in r.get("content", []))
        if r.get("isError") or (expect and expect not in text):
            raise SystemExit(f"agent: {name} gave {json.dumps(r)}")
        return r


def main():
    a = Agent(sys.argv[1])
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    a.request("initialize", {"protocolVersion": "2025-11-25",
                             "capabilities": {"elicitation": {}},
                             "clientInfo": {"name": "conformance-agent", "version": "1"}})
    a.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = a.request("tools/list")["tools"]
    if scenario == "request-metadata":
        pass  # the handshake and the list are what the scenario watches
    elif scenario == "http-standard-headers":
        a.call(tools, "test_headers", expect="Headers test completed")
        a.call(tools, "my-hyphenated-tool")
        for r in a.request("resources/list")["resources"]:
            a.request("resources/read", {"uri": r["uri"]})
        for p in a.request("prompts/list")["prompts"]:
            a.request("prompts/get", {"name": p["name"]})
    elif scenario == "http-custom-headers":
        ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        for c in ctx.get("toolCalls", []):
            a.call(tools, c["name"], c["arguments"], expect="Custom headers test completed")
    elif scenario == "sep-2322-client-request-state":
        a.call(tools, "test_mrtr_echo_state", expect="echo-state-ok")
        a.call(tools, "test_mrtr_unrelated", expect="unrelated-ok")
        a.call(tools, "test_mrtr_no_state", expect="no-state-ok")
        a.call(tools, "test_mrtr_no_result_type", expect="no-result-type-test-ok")
        if a.asked != ["elicitation/create", "elicitation/create"]:
            raise SystemExit(f"agent: mcpd asked {a.asked}, not the two elicitations")
    elif scenario == "json-schema-2020-12-preservation":
        # The focal tool's inputSchema as mcpd served it goes back through the echo tool.
        focal = next(t for t in tools
                     if t.get("_meta", {}).get("mcpd/tool") == "json_schema_2020_12_tool")
        a.call(tools, "json_schema_echo", {"schema": focal["inputSchema"]}, expect="echoed")
    elif scenario == "tools_call":
        a.call(tools, "add_numbers", {"a": 2, "b": 3}, expect="5")
    else:
        # The rest of the 2026-07-28 set: call every tool mcpd serves, with a value of the
        # declared type for each required parameter (http-invalid-tool-headers counts on
        # mcpd to have left out the tools it must reject).
        samples = {"string": "x", "integer": 1, "number": 1.5, "boolean": True,
                   "object": {}, "array": []}
        for t in tools:
            schema = t.get("inputSchema", {})
            props = schema.get("properties", {})
            args = {k: samples.get(props.get(k, {}).get("type"), "x")
                    for k in schema.get("required", [])}
            a.request("tools/call", {"name": t["name"], "arguments": args})


if __name__ == "__main__":
    main()
