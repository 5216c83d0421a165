// SPDX-License-Identifier: MIT
// hash: SHA-256 (FIPS 180-4) for config hashes and name suffixes, and a 64-bit string hash.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

typedef struct Sha256 {
    uint32_t h[8];
    uint64_t n_bytes;
    unsigned char block[64];
    size_t fill;
} Sha256;

/** Start a digest. */
void sha256_init(Sha256 *s);
/** Add n bytes. */
void sha256_update(Sha256 *s, const void *data, size_t n);
/** Finish into out (32 bytes). */
void sha256_final(Sha256 *s, unsigned char out[SHA256_DIGEST_SIZE]);
/** One-shot digest as 64 lowercase hex digits into out (65 bytes). */
void sha256_hex(char out[2 * SHA256_DIGEST_SIZE + 1], const void *data, size_t n);

/** FNV-1a, for in-memory hash tables only. */
uint64_t hash_fnv1a(const void *data, size_t n);
