// What the SDK is doing now, for an app's health page, a support bundle or a test.
import FaultlineCrashPickup

extension Faultline {
    /// The SDK's state at one moment (`Faultline.status`).
    public struct Status: Sendable {
        /// `start` ran and left the SDK on (crash capture to disk at least).
        public var started = false
        /// A valid DSN is in use: envelopes are sent.
        public var sending = false
        /// Envelopes in the outbox not yet acknowledged by the server.
        public var pendingEnvelopes = 0
        /// The server refused the DSN's key (401/403); nil while it never did.
        public var rejectedKey: RejectedKey?
        /// Envelopes (and log archives) lost since start, by reason.
        public var droppedCounts: [DropReason: Int] = [:]
    }

    /// A 401 or 403 answer to the DSN's key: events are refused until the DSN is fixed.
    public struct RejectedKey: Sendable, Equatable {
        public var httpStatus: Int
        /// The key's first characters (never the whole key).
        public var keyPrefix: String
    }

    /// The SDK's state now. Right after `start` it waits (bounded) for start's background half.
    public static var status: Status {
        var s = Status()
        let state = SDKState.shared
        s.started = state.isStarted
        s.sending = state.dsn != nil
        if s.started, let outbox = state.currentOutbox {
            s.pendingEnvelopes = outbox.pending().count
            s.droppedCounts = outbox.droppedCounts
        }
        s.rejectedKey = KeyRejection.current
        return s
    }
}
