// One crash file waiting in a directory, and the rule that turns it into a Sentry crash event:
// the one rule both the SDK's next-launch pickup and `faultline crashes` apply.
import FoundationEssentials
import Glibc
import FaultlineProtocol

public struct PendingCrashFile: Sendable, Equatable {
    public enum Kind: Sendable, Hashable {
        /// `*.crash.json`, written by Faultline's crash handler (SDK or LD_PRELOAD).
        case faultlineReport
        /// Any other `*.json`: a crash log of Swift's backtracer (`SWIFT_BACKTRACE=format=json`).
        case swiftBacktraceLog
    }

    public let path: String
    public let kind: Kind

    /// The crash files in `directory`, oldest first (hidden temporaries excluded); empty when the
    /// directory cannot be read.
    public static func list(in directory: String) -> [PendingCrashFile] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }
            .map { directory + "/" + $0 }
            .map { (path: $0, time: modificationTime($0)) }
            .sorted { $0.time < $1.time }
            .map { PendingCrashFile(path: $0.path, kind: $0.path.hasSuffix(".crash.json") ? .faultlineReport : .swiftBacktraceLog) }
    }

    /// The crash event for the file's bytes and its event id (a Faultline report's own id; for a
    /// Swift log, one derived from its bytes, so converting it twice gives the same id). `context`
    /// fills what a Swift log does not say (release, install, ...). Throws on a corrupt file.
    public func event(from data: Data, context: CrashContext = CrashContext(), sdkName: String = "faultline.swift") throws
        -> (event: JSONValue, eventID: String, report: CrashReport?)
    {
        switch kind {
        case .faultlineReport:
            let report = try CrashReport.parse(data)
            return (CrashEvent.make(from: report, sdkName: sdkName), report.eventID, report)
        case .swiftBacktraceLog:
            let eventID = SwiftBacktraceEvent.eventID(for: data)
            return (
                SwiftBacktraceEvent.make(from: try SwiftBacktraceLog.parse(data), eventID: eventID, context: context, sdkName: sdkName),
                eventID, nil
            )
        }
    }

    static func modificationTime(_ path: String) -> Double {
        var st = stat()
        guard stat(path, &st) == 0 else { return 0 }
        return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
    }
}
