// The one pass over a directory of crash files that every consumer shares: the SDK's next-launch
// pickup (its own crash directory, and Swift's backtracer's) and `faultline crashes`. Oldest
// first, each file converted by PendingCrashFile's rule, handed to the consumer, and removed only
// once the consumer has it durably, so a pass cut short converts the rest next time.
import FoundationEssentials
import Glibc
import FaultlineProtocol

/// One crash file, converted.
package struct ConvertedCrash {
    package let file: PendingCrashFile
    package let event: JSONValue
    package let eventID: String
    /// The Faultline report behind the event (nil for a Swift backtracer log).
    package let report: CrashReport?
}

package struct CrashFilePickup {
    /// What happens to a file that does not convert.
    package enum CorruptFiles {
        /// Moved into `directory` (prefixed with `prefix`) beside a `.reason.txt`, so it is never
        /// retried and can still be read.
        case setAside(directory: String, prefix: String)
        /// Left where it is and told to `report`.
        case report((_ path: String, _ error: Error) -> Void)
    }

    package var corrupt: CorruptFiles
    /// Every file is read as this kind (Swift's backtracer's directory holds its logs only);
    /// nil: by name (`*.crash.json` is a Faultline report, any other `*.json` a Swift log).
    package var readEveryFileAs: PendingCrashFile.Kind?
    /// Only files of this kind (nil: every kind).
    package var only: PendingCrashFile.Kind?
    /// Fills what a Swift log does not say (release, install, ...).
    package var context = CrashContext()
    package var sdkName = "faultline.swift"
    /// A file whose name holds this id is not touched (the running process's own next report).
    package var skippingEventID: String?
    /// A file that does not convert and is younger than this may still be being written (Swift's
    /// backtracer writes its log piece by piece): it is left for a later pass.
    package var unreadableGraceSeconds: Double = 0
    /// Whether a delivered file is deleted.
    package var removeDelivered = true

    package init(corrupt: CorruptFiles) { self.corrupt = corrupt }

    /// `deliver` returns whether the event is durably where it goes; false stops the pass (the
    /// file, and every later one, stays for the next).
    package func run(directory: String, deliver: (ConvertedCrash) -> Bool) -> CrashPickup {
        var result = CrashPickup()
        for listed in PendingCrashFile.list(in: directory) {
            let file = readEveryFileAs.map { PendingCrashFile(path: listed.path, kind: $0) } ?? listed
            if let only, file.kind != only { continue }
            if let own = skippingEventID, PathName.last(file.path).contains(own) { continue }
            guard let data = FileManager.default.contents(atPath: file.path) else { continue }
            let converted: ConvertedCrash
            do {
                let (event, eventID, report) = try file.event(from: data, context: context, sdkName: sdkName)
                converted = ConvertedCrash(file: file, event: event, eventID: eventID, report: report)
            } catch {
                if unreadableGraceSeconds > 0,
                    Date().timeIntervalSince1970 - PendingCrashFile.modificationTime(file.path) <= unreadableGraceSeconds
                {
                    continue
                }
                switch corrupt {
                case .setAside(let directory, let prefix): Self.setAside(file.path, into: directory, as: prefix + PathName.last(file.path), reason: "\(error)")
                case .report(let report): report(file.path, error)
                }
                result.setAside.append(PathName.last(file.path))
                continue
            }
            guard deliver(converted) else {
                result.stoppedEarly = true
                break
            }
            if removeDelivered { unlink(file.path) }
            result.converted.append(converted.eventID)
        }
        return result
    }

    /// Renamed into `directory`; across filesystems copied and then removed, so it is never
    /// retried. When neither works (a full disk) the file stays where it is, for a later pass.
    static func setAside(_ path: String, into directory: String, as name: String, reason: String) {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let target = directory + "/" + name
        if rename(path, target) != 0 {
            // A copy left by an interrupted earlier pass is replaced.
            if FileManager.default.fileExists(atPath: target) { unlink(target) }
            guard (try? FileManager.default.copyItem(atPath: path, toPath: target)) != nil else { return }
            unlink(path)
        }
        try? Data(reason.utf8).write(to: URL(fileURLWithPath: target + ".reason.txt"))
    }
}
