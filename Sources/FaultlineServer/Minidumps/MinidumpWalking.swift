// The seam between the server and the stackwalker: a dump's bytes in, the parts of a Sentry event
// and the dump's modules out. Ingest walks a dump when it arrives; the backfill walks it again when
// a debug or executable file for one of its modules arrives (MinidumpRewalk).
import Foundation
import FaultlineProtocol

/// A minidump walked into the parts of a Sentry event.
public struct WalkedMinidump: Sendable {
    /// An event object with what the dump tells: `exception` (the crashing thread's stack),
    /// `threads` (every thread; frames carry `trust`: context, cfi, fp, scan), `debug_meta`
    /// (the modules), and what else it knows (`contexts`, `timestamp`, `platform`, `level`).
    public var event: JSONValue
    /// The GNU build-id of every module in the dump: a file arriving for any of them may change
    /// how the dump walks, so the backfill walks it again.
    public var moduleBuildIDs: [BuildID]
    public init(event: JSONValue, moduleBuildIDs: [BuildID]) {
        self.event = event
        self.moduleBuildIDs = moduleBuildIDs
    }
}

/// Contract: thread-safe; walks every thread with the debug and executable files the server holds
/// now, and throws an error whose description says what is wrong with a dump it cannot read
/// (truncated, an offset outside the file, …) — ingest answers that with 400. Never traps on any
/// input.
public protocol MinidumpWalking: Sendable {
    func walk(_ dump: Data) throws -> WalkedMinidump
}
