// Next launch: every JSON crash log Swift's backtracer left in `Options.swiftBacktraceDirectory`
// becomes exactly one crash event in the outbox.
import FoundationEssentials
import Glibc
import FaultlineProtocol

package enum PendingSwiftBacktraceLogs {
    /// A log that does not parse yet may still be being written by a crashing sibling process
    /// (the backtracer writes it piece by piece); only one this old is given up on.
    static let unreadableGraceSeconds: Double = 60

    /// Oldest first. A log is deleted only after its event is durably in the outbox; the event id
    /// is derived from the log's bytes, so a pickup interrupted in between sends the same id again
    /// and the server keeps one.
    /// `context`: what this launch knows that the crashed run most likely shared (release,
    /// environment, service, app id, install; not the session: the log does not say which one).
    package static func convert(
        directory: String, corruptDirectory: String, outbox: Outbox, context: CrashContext,
        sdkName: String, envelopeHeader: (String) -> JSONValue
    ) -> CrashPickup {
        // Every *.json here is a Swift log (the directory is the backtracer's, not Faultline's).
        var pickup = CrashFilePickup(corrupt: .setAside(directory: corruptDirectory, prefix: "swift-backtrace-"))
        pickup.readEveryFileAs = .swiftBacktraceLog
        pickup.context = context
        pickup.sdkName = sdkName
        pickup.unreadableGraceSeconds = unreadableGraceSeconds
        return pickup.run(directory: directory) { crash in
            outbox.enqueue(Envelope(header: envelopeHeader(crash.eventID), items: [Envelope.Item(type: "event", payload: crash.event.serialized())]))
        }
    }
}

extension CrashPickup {
    package mutating func merge(_ other: CrashPickup) {
        converted += other.converted
        setAside += other.setAside
        previousSessionCrashed += other.previousSessionCrashed
    }
}
