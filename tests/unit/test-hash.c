// SPDX-License-Identifier: MIT
// test-hash: unit tests for SHA-256 (FIPS 180-4 vectors) and FNV-1a.

#include <string.h>

#include "common/hash.h"
#include "common/util.h"
#include "tests/unit/test.h"

static const char ABC448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

static void test_known_vectors(void)
{
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {ABC448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmno"
         "pqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];

    for (size_t i = 0; i < N_ELEMENTS(v); i++) {
        sha256_hex(hex, v[i].in, strlen(v[i].in));
        CHECK_STREQ(hex, v[i].hex);
        sha256_hex(hex, v[i].in, strlen(v[i].in));
        CHECK_STREQ(hex, v[i].hex);
    }
}

static void test_million_a_odd_chunks(void)
{
    static const char want[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    static const size_t chunks[] = {1, 3, 7, 63, 64, 65, 127, 129, 1000, 4099};
    char buf[4099];
    unsigned char d[SHA256_DIGEST_SIZE];
    char hex[65];

    memset(buf, 'a', sizeof(buf));
    for (size_t c = 0; c < N_ELEMENTS(chunks); c++) {
        Sha256 s;
        size_t left = 1000000;
        sha256_init(&s);
        while (left > 0) {
            size_t n = MIN(left, chunks[c]);
            sha256_update(&s, buf, n);
            left -= n;
        }
        sha256_final(&s, d);
        hex_encode(hex, d, sizeof(d));
        CHECK_STREQ(hex, want);
    }

    /* Cycling chunk sizes, so block boundaries land at every offset. */
    Sha256 s;
    size_t left = 1000000, k = 0;
    sha256_init(&s);
    while (left > 0) {
        size_t n = MIN(left, 1 + (k++ * 37) % 150);
        sha256_update(&s, buf, n);
        left -= n;
    }
    sha256_final(&s, d);
    hex_encode(hex, d, sizeof(d));
    CHECK_STREQ(hex, want);
}

static void test_padding_boundaries(void)
{
    /* Lengths around the 55/56/64-byte padding edges: one-shot equals byte-at-a-time. */
    char buf[200];
    char one[65], split[65];

    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (char)(i * 7 + 1);
    for (size_t n = 0; n <= sizeof(buf); n++) {
        unsigned char d[SHA256_DIGEST_SIZE];
        Sha256 s;
        sha256_hex(one, buf, n);
        sha256_init(&s);
        for (size_t i = 0; i < n; i++)
            sha256_update(&s, buf + i, 1);
        sha256_final(&s, d);
        hex_encode(split, d, sizeof(d));
        if (strcmp(one, split) != 0) {
            CHECK(!"one-shot and byte-wise digests differ");
            fprintf(stderr, "  length %zu\n", n);
        }
    }
    /* Known values at the edges (computed with coreutils sha256sum). */
    memset(buf, 'a', sizeof(buf));
    sha256_hex(one, buf, 55);
    CHECK_STREQ(one, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    sha256_hex(one, buf, 56);
    CHECK_STREQ(one, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    sha256_hex(one, buf, 64);
    CHECK_STREQ(one, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

static void test_fnv1a(void)
{
    /* Published FNV-1a 64-bit test values. */
    CHECK(hash_fnv1a("", 0) == 0xcbf29ce484222325ull);
    CHECK(hash_fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
    CHECK(hash_fnv1a("foobar", 6) == 0x85944171f73967e8ull);
    CHECK(hash_fnv1a("ab", 2) != hash_fnv1a("ba", 2));
}

int main(void)
{
    RUN(test_known_vectors);
    RUN(test_million_a_odd_chunks);
    RUN(test_padding_boundaries);
    RUN(test_fnv1a);
    return test_main_result();
}
