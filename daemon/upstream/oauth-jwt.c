// SPDX-License-Identifier: MIT
// oauth-jwt: client assertions for private_key_jwt (RFC 7523), signed with libcrypto.

#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "common/base64.h"
#include "common/json.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/oauth-jwt.h"

/* P-256: r and s are 32 bytes each in a JWS signature (RFC 7518 3.4). */
#define ES256_PART_BYTES 32

static char *b64url_json(yajl_val v)
{
    _cleanup_free_ char *t = json_to_string(v);
    return base64_encode(t, strlen(t), true);
}

/* DER ECDSA signature to the raw r || s form JWS wants. */
static int es256_raw(unsigned char *out, const unsigned char *der, size_t n)
{
    const unsigned char *p = der;
    ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)n);
    const BIGNUM *r, *s;
    int ok;

    if (!sig)
        return -1;
    ECDSA_SIG_get0(sig, &r, &s);
    ok = BN_bn2binpad(r, out, ES256_PART_BYTES) == ES256_PART_BYTES &&
         BN_bn2binpad(s, out + ES256_PART_BYTES, ES256_PART_BYTES) == ES256_PART_BYTES;
    ECDSA_SIG_free(sig);
    return ok ? 0 : -1;
}

/* The claims of RFC 7523 3, base64url. */
static char *claims(const char *client_id, const char *audience)
{
    _cleanup_json_ yajl_val c = json_object_new();
    unsigned char jti[16];
    char jti_hex[2 * sizeof(jti) + 1];
    int64_t now = (int64_t)time(NULL);

    (void)random_bytes(jti, sizeof(jti));
    hex_encode(jti_hex, jti, sizeof(jti));
    json_object_set(c, "iss", json_string_new(client_id));
    json_object_set(c, "sub", json_string_new(client_id));
    json_object_set(c, "aud", json_string_new(audience));
    json_object_set(c, "iat", json_int_new(now));
    json_object_set(c, "exp", json_int_new(now + OAUTH_JWT_LIFETIME_S));
    json_object_set(c, "jti", json_string_new(jti_hex));
    return b64url_json(c);
}

char *oauth_jwt_assertion(const char *client_id, const char *audience, const char *key_pem,
                          const char *alg, char **whyp)
{
    bool es = !alg || streq(alg, "ES256");
    _cleanup_json_ yajl_val h = json_object_new();
    _cleanup_free_ char *hb = NULL, *cb = NULL, *input = NULL, *sb = NULL;
    unsigned char raw[2 * ES256_PART_BYTES], *der = NULL;
    size_t n = 0;
    EVP_PKEY *key = NULL;
    EVP_MD_CTX *md = NULL;
    BIO *bio;
    char *out = NULL;

    if (!es && !streq(alg, "RS256")) {
        *whyp = xasprintf("signing algorithm \"%s\" is not supported (ES256 or RS256)", alg);
        return NULL;
    }
    bio = BIO_new_mem_buf(key_pem, -1);
    key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (!key || (es && EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) ||
        (!es && EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA)) {
        *whyp = xasprintf("the private key is not a PEM %s key", es ? "EC P-256" : "RSA");
        goto out;
    }
    json_object_set(h, "alg", json_string_new(es ? "ES256" : "RS256"));
    json_object_set(h, "typ", json_string_new("JWT"));
    hb = b64url_json(h);
    cb = claims(client_id, audience);
    input = xasprintf("%s.%s", hb, cb);
    md = EVP_MD_CTX_new();
    if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(md, NULL, &n, (unsigned char *)input, strlen(input)) != 1) {
        *whyp = xstrdup("signing the client assertion failed");
        goto out;
    }
    der = xmalloc(n);
    if (EVP_DigestSign(md, der, &n, (unsigned char *)input, strlen(input)) != 1 ||
        (es && es256_raw(raw, der, n) < 0)) {
        *whyp = xstrdup("signing the client assertion failed");
        goto out;
    }
    sb = es ? base64_encode(raw, sizeof(raw), true) : base64_encode(der, n, true);
    out = xasprintf("%s.%s", input, sb);
out:
    free(der);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    return out;
}
