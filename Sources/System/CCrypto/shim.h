// OpenSSL libcrypto: SHA-1 (sentry-cli chunk protocol) and SHA-256; no CryptoKit on Linux.
#include <openssl/crypto.h>  // OPENSSL_init_crypto (CryptoLibrary)
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>  // session ids and CSRF tokens (web pages)
