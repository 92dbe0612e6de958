// Time, injectable: retries and back-off are tested with a clock that does not really sleep.
import Foundation

/// The clock the transport uses for rate limits and back-off.
public protocol SDKClock: Sendable {
    func now() -> Double
    func sleep(seconds: Double)
    /// Sleeps, but returns early once `stop` says so (checked every 50 ms by the system clock).
    func sleep(seconds: Double, until stop: () -> Bool)
}

extension SDKClock {
    /// A clock that does not really sleep (tests) needs no early return.
    public func sleep(seconds: Double, until stop: () -> Bool) { sleep(seconds: seconds) }
}

public struct SystemClock: SDKClock {
    public init() {}
    public func now() -> Double { Date().timeIntervalSince1970 }
    public func sleep(seconds: Double) { if seconds > 0 { usleep(UInt32(min(seconds, 60) * 1_000_000)) } }
    public func sleep(seconds: Double, until stop: () -> Bool) {
        var slept = 0.0
        while slept < seconds && !stop() {
            let slice = min(0.05, seconds - slept)
            sleep(seconds: slice)
            slept += slice
        }
    }
}

/// Exponential back-off for failures other than rate limits: 0.5 s, doubling, capped at 10 s.
struct Backoff: Sendable {
    static let initial = 0.5
    static let cap = 10.0
    private(set) var consecutiveFailures = 0

    var currentDelay: Double {
        consecutiveFailures == 0 ? 0 : min(Self.initial * pow(2, Double(consecutiveFailures - 1)), Self.cap)
    }
    mutating func failed() { consecutiveFailures += 1 }
    mutating func succeeded() { consecutiveFailures = 0 }
}
