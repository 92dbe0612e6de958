// A 401 or 403 from the server: it does not take the DSN's key (wrong, revoked, or of another
// server). Every envelope would get the same answer, so it is said once per process on stderr,
// with the key's first characters (enough to tell which key, without printing it whole), and
// kept for `Faultline.status`.
import FaultlineProtocol
import Synchronization

enum KeyRejection {
    private static let first = Mutex<Faultline.RejectedKey?>(nil)

    /// How much of the key is shown.
    static let shownPrefix = 8

    /// Records the refusal; the first one of the process prints its line.
    static func record(httpStatus: Int, key: PublicKey) {
        let rejected = Faultline.RejectedKey(httpStatus: httpStatus, keyPrefix: String(key.value.prefix(shownPrefix)))
        let isFirst = first.withLock { r -> Bool in
            guard r == nil else { return false }
            r = rejected
            return true
        }
        guard isFirst else { return }
        Faultline.warnOnce(
            "the server refused the DSN's key \(rejected.keyPrefix)… (HTTP \(httpStatus)): nothing is delivered, "
                + "refused envelopes are dropped and counted; fix the DSN (the project's public key on its server)")
    }

    static var current: Faultline.RejectedKey? { first.withLock { $0 } }
}
