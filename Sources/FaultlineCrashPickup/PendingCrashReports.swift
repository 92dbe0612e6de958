// Next launch: every crash report left on disk becomes exactly one crash event in the outbox.
import FoundationEssentials
import Glibc
import FaultlineProtocol

package enum PendingCrashReports {
    /// Oldest first. The report is removed only after its event is durably in the outbox, so a
    /// crash or kill during pickup converts it again next time (the event id dedups on the server).
    /// `skipping`: the event id of the running process's own next report (the SDK converts in the
    /// background after its handler is installed; a crash meanwhile is left for the next launch).
    package static func convert(
        crashDirectory: String, corruptDirectory: String, outbox: Outbox,
        sdkName: String, envelopeHeader: (String) -> JSONValue, skipping ownEventID: String? = nil
    ) -> CrashPickup {
        if let names = try? FileManager.default.contentsOfDirectory(atPath: crashDirectory) {
            removeAbandonedTemporaries(in: crashDirectory, names: names)
        }
        var pickup = CrashFilePickup(corrupt: .setAside(directory: corruptDirectory, prefix: ""))
        pickup.only = .faultlineReport
        pickup.sdkName = sdkName
        pickup.skippingEventID = ownEventID
        var crashedSessions: [String] = []
        var result = pickup.run(directory: crashDirectory) { crash in
            guard let report = crash.report else { return false }
            var items = [Envelope.Item(type: "event", payload: crash.event.serialized())]
            if let session = report.session {
                let update = SessionUpdate.crashed(session, report: report, initial: SessionUpdate.opens(session, outbox: outbox))
                items.append(Envelope.Item(type: "session", payload: update.json.serialized()))
            }
            guard outbox.enqueue(Envelope(header: envelopeHeader(report.eventID), items: items)) else { return false }
            if let session = report.session { crashedSessions.append(session.id) }
            return true
        }
        result.previousSessionCrashed = crashedSessions
        return result
    }

    /// A `.tmp` left by a process killed mid-write is never completed; remove it once it is old
    /// enough that no live process can still be writing it.
    private static func removeAbandonedTemporaries(in dir: String, names: [String]) {
        let now = Date().timeIntervalSince1970
        for n in names where n.hasPrefix(".") && n.hasSuffix(".tmp") {
            let p = dir + "/" + n
            if now - PendingCrashFile.modificationTime(p) > 60 { unlink(p) }
        }
    }
}
