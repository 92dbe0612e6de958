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
        var result = CrashPickup()
        let fm = FileManager.default
        // Every *.json here is a Swift log (the directory is the backtracer's, not Faultline's).
        for file in PendingCrashFile.list(in: directory) {
            let path = file.path
            guard let data = fm.contents(atPath: path) else { continue }
            let event: JSONValue, eventID: String
            do {
                (event, eventID, _) = try PendingCrashFile(path: path, kind: .swiftBacktraceLog).event(from: data, context: context, sdkName: sdkName)
            } catch {
                guard Date().timeIntervalSince1970 - PendingCrashFile.modificationTime(path) > unreadableGraceSeconds else { continue }
                setAside(path, into: corruptDirectory, reason: "\(error)")
                result.setAside.append(PathName.last(path))
                continue
            }
            let envelope = Envelope(header: envelopeHeader(eventID), items: [Envelope.Item(type: "event", payload: event.serialized())])
            guard outbox.enqueue(envelope) else { break }  // disk trouble: keep the log for next time
            unlink(path)
            result.converted.append(eventID)
        }
        return result
    }

    private static func setAside(_ path: String, into dir: String, reason: String) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = "swift-backtrace-" + PathName.last(path)
        if rename(path, dir + "/" + name) != 0 {
            // Another filesystem: copy what can be copied, then remove it so it is never retried.
            try? FileManager.default.copyItem(atPath: path, toPath: dir + "/" + name)
            unlink(path)
        }
        try? Data(reason.utf8).write(to: URL(fileURLWithPath: dir + "/" + name + ".reason.txt"))
    }
}

extension CrashPickup {
    package mutating func merge(_ other: CrashPickup) {
        converted += other.converted
        setAside += other.setAside
        previousSessionCrashed += other.previousSessionCrashed
    }
}
