// SPDX-License-Identifier: MIT
// test-mcp: unit tests for the shared protocol constants (version list, log levels, codes).

#include <string.h>

#include "common/jsonrpc.h"
#include "common/mcp.h"
#include "tests/unit/test.h"

static void test_versions(void)
{
    CHECK_STREQ(mcp_protocol_versions[0], MCP_PROTOCOL_LATEST);
    CHECK_STREQ(mcp_protocol_find("2025-06-18"), "2025-06-18");
    CHECK_STREQ(mcp_protocol_find("2024-11-05"), "2024-11-05");
    /* The answer is the list's own entry, which outlives the request it was found for. */
    CHECK(mcp_protocol_find("2025-03-26") == mcp_protocol_versions[2]);
    /* The stateless era is named but not spoken; unknown and absent versions are not found. */
    CHECK(mcp_protocol_find(MCP_PROTOCOL_2026_07_28) == NULL);
    CHECK(mcp_protocol_find("1999-01-01") == NULL);
    CHECK(mcp_protocol_find("") == NULL);
    CHECK(mcp_protocol_find(NULL) == NULL);
    /* Newest first, each a date. */
    for (size_t i = 0; mcp_protocol_versions[i]; i++) {
        CHECK_INTEQ(strlen(mcp_protocol_versions[i]), 10);
        if (mcp_protocol_versions[i + 1])
            CHECK(strcmp(mcp_protocol_versions[i], mcp_protocol_versions[i + 1]) > 0);
    }
}

static void test_levels(void)
{
    static const char *const names[] = {"debug", "info",     "notice", "warning",
                                        "error", "critical", "alert",  "emergency"};

    CHECK_INTEQ(MCP_N_LEVELS, 8);
    for (int i = 0; i < MCP_N_LEVELS; i++) {
        CHECK_STREQ(mcp_level_name(i), names[i]);
        CHECK_INTEQ(mcp_level_from_name(names[i]), i);
    }
    CHECK(mcp_level_from_name("warning") < mcp_level_from_name("error"));
    CHECK_INTEQ(mcp_level_from_name("warn"), -1);
    CHECK_INTEQ(mcp_level_from_name("Debug"), -1);
    CHECK_INTEQ(mcp_level_from_name(NULL), -1);
    CHECK(mcp_level_name(-1) == NULL);
    CHECK(mcp_level_name(MCP_N_LEVELS) == NULL);
}

static void test_codes(void)
{
    /* The values on the wire; a renumbering here would change what every agent sees. */
    CHECK_INTEQ(JSONRPC_PARSE_ERROR, -32700);
    CHECK_INTEQ(JSONRPC_INTERNAL_ERROR, -32603);
    CHECK_INTEQ(MCP_ERROR_CONNECTION_CLOSED, -32000);
    CHECK_INTEQ(MCP_ERROR_REQUEST_TIMEOUT, -32001);
    CHECK_INTEQ(MCP_ERROR_RESOURCE_NOT_FOUND, -32002);
    CHECK_INTEQ(MCP_ERROR_URL_ELICITATION_REQUIRED, -32042);
    CHECK_INTEQ(MCP_ERROR_UNSUPPORTED_PROTOCOL_VERSION, -32022);
    CHECK_INTEQ(MCPD_ERROR_UNAVAILABLE, -32004);
}

int main(void)
{
    RUN(test_versions);
    RUN(test_levels);
    RUN(test_codes);
    return test_main_result();
}
