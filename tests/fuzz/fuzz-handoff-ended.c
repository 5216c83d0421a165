// SPDX-License-Identifier: MIT
// fuzz-handoff-ended: libFuzzer target for a handed-off bridge's reading of mcpd's last line.

/*
 * The input is one line as mcpd would send it (client/handoff-wait.c, handoff_ended_parse):
 * the status is -1 or 0-255, and the message decoded into a small buffer always ends inside
 * it, on a whole character.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/handoff-wait.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char msg[16];
    int status = handoff_ended_parse((const char *)data, size, msg, sizeof(msg));
    size_t n = strnlen(msg, sizeof(msg));

    if (status < -1 || status > 255 || n == sizeof(msg))
        abort();
    if (n && ((unsigned char)msg[n - 1] & 0xC0) == 0xC0)
        abort(); /* a lead byte left without its character */
    return 0;
}
