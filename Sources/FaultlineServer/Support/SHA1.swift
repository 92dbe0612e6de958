// SHA-1 via OpenSSL libcrypto: chunk names in sentry-cli's protocol, stack and fingerprint keys.
import Foundation
import CCrypto
import FaultlineProtocol

public enum SHA1Hash {
    public static func hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        data.withUnsafeBytes { raw in
            _ = CCrypto.SHA1(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &digest)
        }
        return HexBytes.encode(digest)
    }
    public static func hex(_ string: String) -> String { hex(Data(string.utf8)) }

    /// Incremental hashing for files assembled from chunks.
    public final class Hasher {
        private var ctx = SHA_CTX()
        public init() { SHA1_Init(&ctx) }
        public func update(_ data: Data) {
            data.withUnsafeBytes { raw in _ = SHA1_Update(&ctx, raw.baseAddress, raw.count) }
        }
        public func finalizeHex() -> String {
            var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
            SHA1_Final(&digest, &ctx)
            return HexBytes.encode(digest)
        }
    }
}

public enum SHA256Hash {
    public static func hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { raw in
            _ = CCrypto.SHA256(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &digest)
        }
        return HexBytes.encode(digest)
    }
}
