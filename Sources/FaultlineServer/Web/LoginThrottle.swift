// What an anonymous client can make a password login cost: failures per user name are counted
// in a window and lock that name for the rest of it (known and unknown names alike, so the
// answer tells neither apart), failures per client address likewise (a guesser cycling through
// names from one address), and password hashes (PBKDF2, costly by design) run one at a
// time, so a crowd of guessers holds at most one core and queues behind it — ingest keeps the rest.
import Foundation
import Synchronization

final class LoginThrottle: Sendable {
    /// Failed logins per user name within `window` before the name is locked until the window ends.
    let maxFailures: Int
    /// Failed logins per client address (HTTPRequest.clientAddress) within `window`, any names.
    let maxFailuresPerAddress: Int
    let window: Double
    /// Names tracked at once; the oldest window is forgotten first (bounded memory).
    let maxTracked = 10_000
    /// How long a login waits for the hashing slot before it is refused (503).
    let slotWait: Double

    private struct Entry { var failures: Int; var windowStart: Double }
    private let entries = Mutex<[String: Entry]>([:])
    private let hashing = Mutex<Bool>(false)

    init(maxFailures: Int = 10, maxFailuresPerAddress: Int = 30, window: Double = 900, slotWait: Double = 5) {
        self.maxFailures = maxFailures
        self.maxFailuresPerAddress = maxFailuresPerAddress
        self.window = window
        self.slotWait = slotWait
    }

    /// Keys: a name's first 256 bytes, an address's first 64 (memory stays bounded whatever is sent).
    static func key(_ name: String) -> String { "user:" + String(decoding: name.utf8.prefix(256), as: UTF8.self) }
    static func addressKey(_ address: String) -> String { "address:" + String(decoding: address.utf8.prefix(64), as: UTF8.self) }

    /// Seconds until `name` may try again from `address`, nil when it may now.
    func lockedFor(_ name: String, address: String = "", now: Double = Date().timeIntervalSince1970) -> Double? {
        let keys = [(Self.key(name), maxFailures), (Self.addressKey(address), maxFailuresPerAddress)]
        return entries.withLock { e in
            keys.compactMap { key, limit -> Double? in
                guard let entry = e[key], now - entry.windowStart < window, entry.failures >= limit else { return nil }
                return entry.windowStart + window - now
            }.max()
        }
    }

    func recordFailure(_ name: String, address: String = "", now: Double = Date().timeIntervalSince1970) {
        entries.withLock { e in
            for key in [Self.key(name), Self.addressKey(address)] {
                var entry = e[key] ?? Entry(failures: 0, windowStart: now)
                if now - entry.windowStart >= window { entry = Entry(failures: 0, windowStart: now) }
                entry.failures += 1
                e[key] = entry
            }
            while e.count > maxTracked, let oldest = e.min(by: { $0.value.windowStart < $1.value.windowStart })?.key { e[oldest] = nil }
        }
    }

    /// Clears the name's failures; the address's stay (a guesser cannot reset them by logging in
    /// to an account of its own).
    func recordSuccess(_ name: String) { _ = entries.withLock { $0.removeValue(forKey: Self.key(name)) } }

    /// Runs `body` holding the one hashing slot; nil when the slot stayed busy for `slotWait`.
    func hashing<T>(_ body: () throws -> T) rethrows -> T? {
        let deadline = Date().addingTimeInterval(slotWait)
        while !hashing.withLock({ busy -> Bool in
            if busy { return false }
            busy = true
            return true
        }) {
            if Date() > deadline { return nil }
            usleep(2_000)
        }
        defer { hashing.withLock { $0 = false } }
        return try body()
    }
}
