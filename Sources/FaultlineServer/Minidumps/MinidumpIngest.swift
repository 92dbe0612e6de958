// A submission that carries a minidump — the minidump endpoint's upload, or an envelope with an
// `event.minidump` attachment (sentry-native, Electron) — gets its event from the dump here, at
// ingest, before anything is stored: a dump the walker cannot read is refused with 400 and
// nothing of the request is kept. The dump itself stays an attachment of the occurrence (so the
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
    func process(_ submission: inout DecodedSubmission, limits: IngestLimits) throws(IngestError) -> [BuildID]? {
        guard let dump = Self.dump(in: submission) else { return nil }
        let walked: WalkedMinidump
        do { walked = try PhaseClock.time(.minidumpWalk) { try walker.walk(dump.payload) } } catch {
            throw .malformed("minidump: \(error)")
        }
        // The client's event in full (ingest's parse keeps only the members it reads).
        var base = submission.event ?? .object([:])
        if let bytes = submission.eventBytes {
            do { base = try JSONParser.parse(bytes) } catch { throw .malformed("event: \(error)") }
        }
        // The client's event id, else the envelope's, else the walk's (a new one).
        if EnvelopeDecoder.normalisedEventID(base["event_id"]?.stringValue) == nil,
            let id = EnvelopeDecoder.normalisedEventID(submission.envelopeHeader["event_id"]?.stringValue)
        {
            base["event_id"] = .string(id)
        }
        let event = MinidumpEventMerge.merge(base: base, walked: walked.event)
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
}
