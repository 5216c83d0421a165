// SPDX-License-Identifier: MIT
// base64: base64 and base64url encoding (RFC 4648 4 and 5).
#pragma once

#include <stdbool.h>
#include <stddef.h>

/** Standard base64 (padded) or base64url (unpadded) of n bytes, newly allocated. */
char *base64_encode(const void *data, size_t n, bool url);
