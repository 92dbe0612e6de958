// The kernel's core_pattern pipe handler (`|faultline coredump %P %i %s %t %e`): the core on
// stdin → a Faultline crash report in a spool directory, where `faultline crashes` and the SDK's
// next-launch pickup find it like a report the crash core wrote.
//
// Bounded in memory (one chunk and the notes: the core goes to a reduced copy on disk, never
// into memory), in disk (what is kept: stacks and small segments, capped) and in time (reading
// stops at the read deadline, unwinding at the overall one; the caller adds a hard backstop), so
// the kernel — which waits on the pipe while the crashed process is being dumped — is never held.
import FoundationEssentials
import Glibc
import FaultlineProtocol
import FaultlineFiles

public struct CoredumpHandler {
    public struct Outcome: Sendable {
        public var reportPath: String
        public var eventID: String
        public var keptCore: String?
        /// Why the report lacks something (the core was cut short, the time ran out), if it does.
        public var incomplete: String?
    }

    public var spoolDirectory: String
    public var hints: CoreReportHints
    /// `--keep-core MAX`: keep the whole core (at most this many bytes) beside the report.
    public var keepCoreMaximum: UInt64?
    /// Reading gets three quarters of it, unwinding the rest.
    public var timeBudget: Duration = .seconds(60)
    public var limits = ReducedCoreLimits()
    public var debugDirectories: [String] = []
    /// `--then COMMAND…`: another handler fed the same core (systemd-coredump).
    public var chainedCommand: [String]?

    public init(spoolDirectory: String, hints: CoreReportHints) {
        self.spoolDirectory = spoolDirectory
        self.hints = hints
    }

    /// Reads the core from `input` and writes `<event id>.crash.json` (and `<event id>.core`)
    /// into the spool directory, which is created (mode 0700, with its missing parents) when missing.
    public func run(input: Int32) throws(CoreDumpError) -> Outcome {
        let started = ContinuousClock.now
        let eventID = CoreCrashReport.newEventID()
        try Self.createDirectory(spoolDirectory)
        // Reports and kept cores belong to whoever owns the spool directory (an app's crash
        // directory: its user), though the kernel runs this as root.
        var st = stat()
        let owner = stat(spoolDirectory, &st) == 0 ? (uid: st.st_uid, gid: st.st_gid) : nil
        let readDeadline = started + timeBudget * 3 / 4
        let stream = CoreStream(fd: input, deadline: readDeadline)
        let kept = keepCoreMaximum.map { KeptCore(path: spoolDirectory + "/\(eventID).core", maximumBytes: $0, owner: owner) }
        let chained = chainedCommand.map { ChainedHandler(command: $0) }
        if kept != nil || chained != nil {
            stream.tee = { chunk in
                kept?.append(chunk)
                chained?.write(chunk, deadline: readDeadline)
            }
        }

        let work = spoolDirectory + "/.\(eventID).core-work.tmp"
        defer { unlink(work) }
        let reduced = try ReducedCoreSpool.spool(from: stream, to: work, limits: limits)
        var provenance = CoreCrashReport.Provenance(source: "core_pattern")
        provenance.segmentsNotKept = reduced.segmentsNotKept
        provenance.bytesSpooled = reduced.bytesKept
        provenance.incomplete = reduced.incomplete
        // A kept copy and a chained handler need the rest of the core; without them, stopping
        // early ends the kernel's dump of the crashed process sooner.
        let readToEnd = (kept != nil || chained != nil) && reduced.incomplete == nil && stream.drain()
        if let chained, let command = chainedCommand?.first {
            let status = chained.finish(deadline: started + timeBudget)
            provenance.chained = chained.failure.map { "\(command): \($0)" } ?? "\(command) exited \(status.map(String.init) ?? "?")"
        }
        if let kept {
            let complete = readToEnd
            let why = stream.timedOut ? "the time budget ran out before the core's end" : reduced.incomplete
            provenance.keptCore = kept.finish(complete: complete, why: why)
            provenance.notKept = kept.failure
        }
        provenance.bytesRead = stream.position
        let report = try CoreFile.report(
            path: work, debugDirectories: debugDirectories, hints: hints, provenance: provenance, deadline: started + timeBudget,
            eventID: eventID)
        let reportPath = spoolDirectory + "/\(eventID).crash.json"
        do { try AtomicFile.write(report.serialized(), to: reportPath, sync: true, owner: owner) } catch {
            throw .io("cannot write the report \(reportPath): \(error)")
        }
        return Outcome(reportPath: reportPath, eventID: eventID, keptCore: provenance.keptCore, incomplete: reduced.incomplete)
    }

    private static func createDirectory(_ path: String) throws(CoreDumpError) {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw .io("cannot create the spool directory \(partial): \(String(cString: strerror(errno)))")
            }
        }
    }
}
