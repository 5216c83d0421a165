// SPDX-License-Identifier: MIT
// fuzz-http: libFuzzer target for HTTP response handling (status, headers, content type, JSON
// bodies and SSE framing) as the Streamable HTTP and legacy SSE transports process them.

/*
 * The first byte picks the transfer kind and the size of the pieces the body arrives in; the
 * rest is a response as curl hands it over (status line, header lines, empty line, body). It
 * goes through transport_http_fuzz_response(), which runs the transport's own callbacks with no
 * network. Sanitizers catch what goes wrong; the transport is freed each time, so a leak of any
 * message, upcall or transfer shows.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>

#include "common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void transport_http_fuzz_response(struct event_base *base, unsigned kind, const char *data,
                                  size_t n, size_t chunk);

static struct event_base *base;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy;

    if (size < 1)
        return 0;
    if (!base) {
        log_set_level(LOG_EMERG);
        base = event_base_new();
    }
    /* The entry point reads the status code with strtol(): its bytes must end in a NUL. */
    copy = malloc(size);
    memcpy(copy, data + 1, size - 1);
    copy[size - 1] = '\0';
    transport_http_fuzz_response(base, data[0] & 3, copy, size - 1, 1 + (data[0] >> 2) * 7);
    free(copy);
    return 0;
}
