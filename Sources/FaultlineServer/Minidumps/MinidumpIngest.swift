// A submission that carries a minidump — the minidump endpoint's upload, or an envelope with an
// `event.minidump` attachment (sentry-native, Electron) — gets its event from the dump here, at
// ingest, before anything is stored. A dump the walker cannot read is refused with 400 on the
// minidump endpoint (nothing else came with it, and Crashpad keeps the report); in an envelope the
// event and the items that came with it (sessions, other attachments) are kept, the event marked
// with why its dump was not read. The dump itself stays an attachment of the occurrence (so the
// pages and the API list and serve it like any other), and its modules are stored beside it for
// the backfill (MinidumpRewalk).
import Foundation
import FaultlineProtocol

final class MinidumpIngest: Sendable {
    let walker: any MinidumpWalking
    /// Dumps in flight, in all and per address (taken before a minidump upload is decoded).
    let slots: MinidumpWalkSlots

    init(walker: any MinidumpWalking, limits: IngestLimits) {
        self.walker = walker
        slots = MinidumpWalkSlots(limits: limits)
    }

    /// The dump's attachment item, if the submission has one (the first: an event has one dump).
    static func dump(in submission: DecodedSubmission) -> Envelope.Item? {
        submission.attachments.first { $0.header["attachment_type"]?.stringValue == MinidumpUpload.attachmentType }
    }

    /// Walks the submission's dump and makes the result its event (merged into the event the
    /// client sent, if any); returns the dump's module build-ids, or nil when there is no dump.
    /// `keepsTheRestOfAnUnreadableDump`: in an envelope, a dump that cannot be read leaves the
    /// client's event (or one saying so) and the other items to be stored, not refused.
    func process(
        _ submission: inout DecodedSubmission, limits: IngestLimits, keepsTheRestOfAnUnreadableDump: Bool = false
    ) throws(IngestError) -> [BuildID]? {
        guard let dump = Self.dump(in: submission) else { return nil }
        let walked: WalkedMinidump
        do { walked = try PhaseClock.time(.minidumpWalk) { try walker.walk(dump.payload) } } catch {
            guard keepsTheRestOfAnUnreadableDump else { throw .malformed("minidump: \(error)") }
            try keepWithoutItsDump(&submission, because: "\(error)", limits: limits)
            return nil
        }
        let event = MinidumpEventMerge.merge(base: try clientEvent(submission), walked: walked.event)
        let bytes = event.serialized()
        // The walk is bounded (MinidumpStackwalker.Limits: threads and frames); this is the row's bound.
        guard bytes.count <= limits.maxKeptBytes else {
            throw .tooLarge("minidump: its walked event is \(bytes.count) bytes; at most \(limits.maxKeptBytes) allowed")
        }
        submission.event = event
        submission.eventBytes = bytes
        // The body is no longer the stored event (StoredEvent keeps a body only when it is).
        submission.compressedBody = nil
        return walked.moduleBuildIDs
    }

    /// The client's event in full (ingest's parse keeps only the members it reads), with the
    /// client's event id, else the envelope's, else none (the walk's or ingest's new one).
    private func clientEvent(_ submission: DecodedSubmission) throws(IngestError) -> JSONValue {
        var base = submission.event ?? .object([:])
        if let bytes = submission.eventBytes {
            do { base = try JSONParser.parse(bytes) } catch { throw .malformed("event: \(error)") }
        }
        if EnvelopeDecoder.normalisedEventID(base["event_id"]?.stringValue) == nil,
            let id = EnvelopeDecoder.normalisedEventID(submission.envelopeHeader["event_id"]?.stringValue)
        {
            base["event_id"] = .string(id)
        }
        return base
    }

    /// The event stored for a dump that cannot be read: the client's, a fatal native crash when
    /// it sent none, with the reason in `extra.faultline_minidump_error` and in Sentry's
    /// processing `errors`. The dump stays its attachment.
    private func keepWithoutItsDump(_ submission: inout DecodedSubmission, because reason: String, limits: IngestLimits) throws(IngestError) {
        var event = try clientEvent(submission)
        if event["level"] == nil { event["level"] = "fatal" }
        if event["platform"] == nil { event["platform"] = "native" }
        if event["exception"] == nil && event["message"] == nil && event["logentry"] == nil {
            event["exception"] = ["values": [["type": "Minidump", "value": .string("a crash whose minidump could not be read: \(reason)")]]]
        }
        var extra = event["extra"]?.objectValue ?? [:]
        extra["faultline_minidump_error"] = .string(reason)
        event["extra"] = .object(extra)
        event["errors"] = .array((event["errors"]?.arrayValue ?? []) + [["type": "invalid_attachment", "name": "minidump", "value": .string(reason)]])
        let bytes = event.serialized()
        guard bytes.count <= limits.maxEventBytes else { throw .tooLarge("event: \(bytes.count) bytes; at most \(limits.maxEventBytes) allowed") }
        submission.event = event
        submission.eventBytes = bytes
        submission.compressedBody = nil
    }
}
