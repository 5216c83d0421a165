#!/usr/bin/env bash
# mcpd-client: the "client under test" for the conformance suite's 2026-07-28 client scenarios.
# The 2025 wrapper starts mcpd with the scenario's URL as its only upstream (protocol auto) and
# drives sign-in and tools_call itself; the other scenarios are driven through mcpd's socket by
# agent.py, a 2025-era agent that also answers the elicitations mcpd forwards.
here=$(cd "$(dirname "$0")" && pwd)
MCPD_CONF_AGENT=$here/agent.py exec bash "$here/../conformance/mcpd-client.sh" "$@"
