// Key material: public keys are Sentry-shaped (32 hex), server tokens carry the `flst_` prefix so
// no client can mistake one for the other (DSN parsing refuses a server token).
import Foundation
import FaultlineProtocol

public enum Keys {
    static func randomHex(bytes: Int) -> String {
        var g = SystemRandomNumberGenerator()
        return HexBytes.encode((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &g) })
    }
    public static func newPublicKey() -> PublicKey { PublicKey(randomHex(bytes: 16)) }
    public static func newServerToken() -> String { ServerToken.prefix + randomHex(bytes: 24) }
}
