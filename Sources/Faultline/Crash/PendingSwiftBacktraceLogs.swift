// Next launch: every JSON crash log Swift's backtracer left in `Options.swiftBacktraceDirectory`
// becomes exactly one crash event in the outbox.
import Foundation
import FaultlineProtocol

enum PendingSwiftBacktraceLogs {
    /// A log that does not parse yet may still be being written by a crashing sibling process
    /// (the backtracer writes it piece by piece); only one this old is given up on.
    static let unreadableGraceSeconds: Double = 60

    /// Oldest first. A log is deleted only after its event is durably in the outbox; the event id
    /// is derived from the log's bytes, so a pickup interrupted in between sends the same id again
    /// and the server keeps one.
    static func convert(directory: String, corruptDirectory: String, outbox: Outbox, options: Options,
                        installID: String, envelopeHeader: (String) -> JSONValue) -> CrashPickup {
        var result = CrashPickup()
        let fm = FileManager.default
        guard let names = try? fm.contentsOfDirectory(atPath: directory) else { return result }
        let logs = names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
            .map { directory + "/" + $0 }
            .sorted { modificationTime($0) < modificationTime($1) }
        let context = pickupContext(options, installID: installID)
        for path in logs {
            guard let data = fm.contents(atPath: path) else { continue }
            let log: SwiftBacktraceLog
            do { log = try SwiftBacktraceLog.parse(data) } catch {
                guard Date().timeIntervalSince1970 - modificationTime(path) > unreadableGraceSeconds else { continue }
                setAside(path, into: corruptDirectory, reason: error.description)
                result.setAside.append((path as NSString).lastPathComponent)
                continue
            }
            let eventID = SwiftBacktraceEvent.eventID(for: data)
            let event = SwiftBacktraceEvent.make(from: log, eventID: eventID, context: context, sdkName: Faultline.sdkName)
            let envelope = Envelope(header: envelopeHeader(eventID), items: [Envelope.Item(type: "event", payload: event.serialized())])
            guard outbox.enqueue(envelope) else { break }  // disk trouble: keep the log for next time
            unlink(path)
            result.converted.append(eventID)
        }
        return result
    }

    /// What this launch knows that the crashed run most likely shared: release, environment,
    /// service, app id and install. Not the session: the log does not say which one crashed.
    static func pickupContext(_ o: Options, installID: String) -> JSONValue {
        var c: [String: JSONValue] = ["install_id": .string(installID)]
        if let r = o.release { c["release"] = .string(r) }
        if let e = o.environment { c["environment"] = .string(e) }
        if let s = o.service { c["service"] = .string(s) }
        if let a = o.appID { c["app_id"] = .string(a) }
        return .object(c)
    }

    private static func setAside(_ path: String, into dir: String, reason: String) {
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let name = "swift-backtrace-" + (path as NSString).lastPathComponent
        if rename(path, dir + "/" + name) != 0 {
            // Another filesystem: copy what can be copied, then remove it so it is never retried.
            try? FileManager.default.copyItem(atPath: path, toPath: dir + "/" + name)
            unlink(path)
        }
        try? Data(reason.utf8).write(to: URL(fileURLWithPath: dir + "/" + name + ".reason.txt"))
    }

    private static func modificationTime(_ path: String) -> Double {
        var st = stat()
        guard stat(path, &st) == 0 else { return 0 }
        return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
    }
}

extension CrashPickup {
    mutating func merge(_ other: CrashPickup) {
        converted += other.converted
        setAside += other.setAside
        previousSessionCrashed += other.previousSessionCrashed
    }
}
