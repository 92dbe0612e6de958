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
        var result = CrashPickup()
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: crashDirectory) else { return result }
        removeAbandonedTemporaries(in: crashDirectory, names: names)
        for file in PendingCrashFile.list(in: crashDirectory) where file.kind == .faultlineReport {
            let path = file.path
            if let own = ownEventID, PathName.last(path).contains(own) { continue }
            guard let data = fm.contents(atPath: path) else { continue }
            let event: JSONValue, report: CrashReport
            do {
                let converted = try file.event(from: data, sdkName: sdkName)
                (event, report) = (converted.event, converted.report!)
            } catch {
                setAside(path, into: corruptDirectory, reason: "\(error)")
                result.setAside.append(PathName.last(path))
                continue
            }
            var items = [Envelope.Item(type: "event", payload: event.serialized())]
            if let session = report.crashContext.sessionID {
                items.append(Envelope.Item(type: "session", payload: SessionUpdate.crashed(sessionID: session, report: report).json.serialized()))
                result.previousSessionCrashed.append(session)
            }
            let envelope = Envelope(header: envelopeHeader(report.eventID), items: items)
            guard outbox.enqueue(envelope) else { break }  // disk trouble: keep the report for next time
            unlink(path)
            result.converted.append(report.eventID)
        }
        return result
    }

    private static func setAside(_ path: String, into dir: String, reason: String) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = PathName.last(path)
        if rename(path, dir + "/" + name) != 0 { unlink(path) }
        try? Data(reason.utf8).write(to: URL(fileURLWithPath: dir + "/" + name + ".reason.txt"))
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
