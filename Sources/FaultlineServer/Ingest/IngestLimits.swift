// Every cap ingest applies, in one place (defaults follow Sentry's where they are sane for one box).
// docs/SERVER.md's table of limits lists each with the status that answers it.
import Foundation
import FaultlineProtocol

public struct IngestLimits: Sendable {
    /// Request body as received (compressed or not).
    public var maxRequestBytes = 20 * 1024 * 1024
    /// Body after decompression; inflation stops at this size. Envelopes are framed while they
    /// inflate and skipped items are never kept, so this bounds CPU, not memory.
    public var maxDecompressedBytes = 50 * 1024 * 1024
    /// One event item's JSON (also the whole decompressed body of a legacy `/store/` request).
    public var maxEventBytes = 1024 * 1024
    /// Items per envelope, counted as they are framed (skipped items count too).
    public var maxItems = 100
    /// Payload cap per kept item type other than `event`, checked against the declared `length`
    /// before any payload byte is kept, or as a length-less payload grows.
    public var maxItemBytes: [String: Int] = [
        "session": 64 * 1024, "sessions": 256 * 1024,
        "client_report": 64 * 1024, "log": 1024 * 1024,
        // What a user wrote about a crash (UserFeedback/): a few fields, Sentry's comment limit.
        "user_report": 64 * 1024, "feedback": 64 * 1024,
        // Sentry's 1 MB event limit; ~1000 spans (the SDKs' own cap) fit.
        "transaction": 1024 * 1024,
        // One attachment (a log file, a screenshot, a minidump): kept in the database with its
        // event, so bounded like a row; several must also fit `maxKeptBytes` together.
        "attachment": 2 * 1024 * 1024
    ]
    /// All kept payloads of one envelope together (event and attachments included).
    public var maxKeptBytes = 4 * 1024 * 1024
    /// One minidump sent to the minidump endpoint (`upload_file_minidump`), kept with its event
    /// (Minidumps/); a dump in an envelope is an `attachment` item and has that item's cap.
    public var maxMinidumpBytes = 16 * 1024 * 1024
    /// Minidumps decoded and walked at once, in all (503 past it) and from one client address
    /// (429): a walk is synchronous CPU, and its dump and event are held while it runs.
    public var maxMinidumpWalks = max(2, ProcessInfo.processInfo.activeProcessorCount)
    public var maxMinidumpWalksPerAddress = 1
    /// One count (`exited`, `errored`, `abnormal`, `crashed`) of one `sessions` aggregate; larger
    /// or negative counts make the item malformed (400). Sums saturate, they never trap.
    public var maxSessionCount: Int64 = 1_000_000
    /// Submissions one install may send per window (an event and every kept item count one
    /// each); 0 disables the cap.
    public var eventsPerInstall = 1_000
    public var installWindowSeconds = 3_600
    public init() {}

    /// Largest payload kept for an item type; nil for types that are skipped (never buffered).
    public func cap(forItemType type: String) -> Int? {
        type == "event" ? maxEventBytes : maxItemBytes[type]
    }

    /// A minidump upload's multipart body after decompression: the dump and, beside it, what an
    /// envelope may keep (event JSON, attachments, form fields). Inflation stops here.
    public var maxMinidumpUploadBytes: Int { maxMinidumpBytes + maxKeptBytes }

    /// Parts of a minidump upload: form fields and files together.
    public var maxMinidumpUploadParts: Int { maxItems * 10 }

    /// These caps as the envelope reader's limits.
    public var envelope: EnvelopeReader.Limits {
        var l = EnvelopeReader.Limits()
        l.maxItems = maxItems
        l.maxDeclaredBytes = maxDecompressedBytes
        l.maxKeptBytes = maxKeptBytes
        l.keptItemCaps = maxItemBytes.merging(["event": maxEventBytes]) { _, e in e }
        // An attachment too large for this server is stepped over; the event it came with is kept.
        l.droppedWhenTooLarge = ["attachment"]
        return l
    }
}
