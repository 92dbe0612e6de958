// SHA-1 and SHA-256 via OpenSSL libcrypto, for the SDK, the server and the upload client alike:
// SHA-1 names chunks in sentry-cli's protocol and keys stacks and fingerprints; SHA-256 checks log
// archives (the SDK sends it, the server verifies and deduplicates by it) and hashes session ids.
// libcrypto is in every process that has these (libcurl links it), so no digest is written by hand.
import Foundation
import CCrypto
import FaultlineProtocol

/// OpenSSL's set-up, once per process, without the clean-up it otherwise registers with atexit.
/// That clean-up is registered by whichever thread first uses OpenSSL — the SDK's start thread,
/// through libcurl's global init — and atexit runs newest first: a process that exits within
/// milliseconds of start ran it while that thread was still initialising OpenSSL, which then
/// crashed on a freed lock (SIGSEGV in OPENSSL_init_ssl under curl_global_init). A process's
/// memory goes back to the kernel at exit anyway. Every use of libcrypto here and in libcurl comes
/// after this; an app that set OpenSSL up itself before start keeps its own clean-up, registered
/// before the SDK's exit hook, so it runs after start's thread is done.
public enum CryptoLibrary {
    public static let ready: Bool = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1
}

public enum SHA1Hash {
    public static func hex(_ data: Data) -> String {
        _ = CryptoLibrary.ready
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        data.withUnsafeBytes { raw in
            _ = CCrypto.SHA1(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &digest)
        }
        return HexBytes.encode(digest)
    }
    public static func hex(_ string: String) -> String { hex(Data(string.utf8)) }

    /// Incremental hashing for files assembled from chunks (OpenSSL EVP interface).
    public final class Hasher {
        private let ctx: OpaquePointer
        public init() {
            _ = CryptoLibrary.ready
            ctx = EVP_MD_CTX_new()
            EVP_DigestInit_ex(ctx, EVP_sha1(), nil)
        }
        deinit { EVP_MD_CTX_free(ctx) }
        public func update(_ data: Data) {
            data.withUnsafeBytes { raw in _ = EVP_DigestUpdate(ctx, raw.baseAddress, raw.count) }
        }
        public func finalizeHex() -> String {
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            EVP_DigestFinal_ex(ctx, &digest, &length)
            return HexBytes.encode(Array(digest.prefix(Int(length))))
        }
    }
}

public enum SHA256Hash {
    public static func hex(_ data: Data) -> String {
        _ = CryptoLibrary.ready
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { raw in
            _ = CCrypto.SHA256(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &digest)
        }
        return HexBytes.encode(digest)
    }
}
