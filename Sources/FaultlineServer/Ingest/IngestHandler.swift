// POST /api/<project>/envelope/, /store/ and /minidump/: authenticate, decode under limits (a
// minidump is walked into its event: Minidumps/), store durably, answer, then hand the stack to the
// grouping worker.
import Foundation
import FaultlineProtocol
import Synchronization

public final class IngestHandler: Sendable {
    let store: any Store
    /// Where transactions go; nil: they are accepted and dropped.
    let traces: (any TraceStore)?
    let limits: IngestLimits
    let volume: InstallVolumeLimiter
    let processor: EventProcessor
    let refusals: Refusals?
    /// Walks the minidumps of minidump uploads and envelopes (Minidumps/); nil: a submission with
    /// a dump is refused.
    let minidumps: MinidumpIngest?
    /// Projects by the reference requests use, each read again after `projectCacheSeconds`: a
    /// setting changed by `faultline projects` (its grouping rules) reaches a running server.
    private let projectCache = Mutex<[String: (project: ProjectRecord, read: Double)]>([:])
    static let projectCacheSeconds: Double = 30

    init(stores: Stores, limits: IngestLimits, processor: EventProcessor, refusals: Refusals? = nil, minidumps: MinidumpIngest? = nil) {
        self.minidumps = minidumps
        self.store = stores.core
        self.traces = stores.traces
        self.refusals = refusals
        self.limits = limits
        self.processor = processor
        self.volume = InstallVolumeLimiter(limit: limits.eventsPerInstall, windowSeconds: limits.installWindowSeconds, store: stores.installWindows)
    }

    public enum Endpoint { case envelope, store, minidump }

    public func handle(_ request: HTTPRequest, project projectRef: String, endpoint: Endpoint) -> HTTPResponse {
        do {
            let id = try ingest(request, project: projectRef, endpoint: endpoint)
            // Crashpad and Breakpad keep the answer's text as the report's upload id, as Sentry's
            // minidump endpoint gives it: the event id, dashed.
            if endpoint == .minidump { return .text(MinidumpUpload.answer(eventID: id)) }
            return .json(["id": .string(id)])
        } catch let e as IngestError {
            return e.response
        } catch {
            return .storeUnavailable("could not store the event", error, counting: refusals)
        }
    }

    private func project(_ ref: String) throws -> ProjectRecord? {
        let now = Date().timeIntervalSince1970
        if let hit = projectCache.withLock({ $0[ref] }), now - hit.read < Self.projectCacheSeconds { return hit.project }
        guard let p = try store.project(idOrSlug: ref) else { return nil }
        projectCache.withLock { $0[ref] = (p, now) }
        return p
    }

    func ingest(_ request: HTTPRequest, project projectRef: String, endpoint: Endpoint) throws -> String {
        if let bearer = request.bearerToken, ServerToken.looksLikeServerToken(bearer) {
            throw IngestError.unauthorized("server tokens are refused on ingest; send with the project's public key (DSN)")
        }
        // The key comes from a header or the query (Router.preflight refused anything else before
        // the body was read): authenticate before inflating, so strangers cannot make us decompress.
        guard let k = SentryAuth.key(in: request) else {
            throw IngestError.unauthorized("missing public key: send X-Sentry-Auth: Sentry sentry_key=<key> (or ?sentry_key=<key>)")
        }
        let (publicKey, project) = try PhaseClock.time(.ingestAuth) { try authorize(k, projectRef: projectRef) }
        var submission: DecodedSubmission
        var minidumpModules: [BuildID]?
        // A dump's decoding and walk hold a core and its bytes: a slot (MinidumpWalkSlots) is
        // taken before a minidump upload is inflated, or before an envelope's dump is walked.
        var minidumpSlot: MinidumpWalkSlots.Slot?
        defer { minidumpSlot?.release() }
        do throws(IngestError) {
            switch endpoint {
            case .envelope: submission = try EnvelopeDecoder.envelope(of: request, limits: limits)
            case .store:
                let body = try LegacyStoreBody.decoded(try EnvelopeDecoder.body(of: request, limit: limits.maxEventBytes), limit: limits.maxEventBytes)
                submission = try EnvelopeDecoder.storeBody(body, limits: limits)
            case .minidump:
                minidumpSlot = try minidumps?.slots.take(for: request.clientAddress)
                submission = try MinidumpUpload.submission(of: request, limits: limits)
            }
            // A dump (the upload's, or an envelope's `event.minidump` attachment) becomes the event.
            if MinidumpIngest.dump(in: submission) != nil {
                guard let minidumps else { throw IngestError.malformed("this server does not take minidumps") }
                if minidumpSlot == nil { minidumpSlot = try minidumps.slots.take(for: request.clientAddress) }
                minidumpModules = try minidumps.process(&submission, limits: limits, keepsTheRestOfAnUnreadableDump: endpoint == .envelope)
                minidumpSlot?.release()
            }
        } catch {
            let kind = if case .busy = error { "ingest.minidump-walks" } else { error.status == 413 ? "ingest.size" : "ingest.malformed" }
            refusals?.record(kind, detail: error.description)
            throw error
        }

        let now = Date().timeIntervalSince1970
        var incoming: IncomingEvent?
        var eventID = EnvelopeDecoder.normalisedEventID(submission.envelopeHeader["event_id"]?.stringValue)
        var signature: StackSignature?
        // Attachments are kept only with the event they came with (none: stepped over, uncounted).
        let attachments = submission.event == nil ? [] : submission.attachments.map(AttachmentFields.incoming)
        let units = (submission.event == nil ? 0 : 1) + submission.items.count + attachments.count
        // The allowlist and the install cap apply to every item type, not only events: sessions,
        // logs and client reports are stored too. Without an event, the app id comes from
        // X-Faultline-App-Id (the Faultline SDK sends it on every envelope).
        if units > 0 && !publicKey.allowedAppIDs.isEmpty {
            guard let app = EventFields.appID(event: submission.event, request: request) else {
                refusals?.record("ingest.app-id")
                throw IngestError.forbidden(
                    "this key only accepts submissions from \(publicKey.allowedAppIDs.joined(separator: ", ")); the request names no app id (contexts.app.app_identifier or \(HeaderName.appID))"
                )
            }
            guard publicKey.allowedAppIDs.contains(app) else {
                refusals?.record("ingest.app-id")
                throw IngestError.forbidden("app id '\(app)' is not allowed for this key")
            }
        }
        // A submission that names no install is counted under its sender's address instead
        // (the client a trusted proxy names, else the peer): naming none must not mean no cap.
        let named = InstallID.bounded(EventFields.installID(event: submission.event, request: request) ?? EventFields.installID(items: submission.items))
        let sender = named ?? InstallID.forAddress(request.clientAddress)
        if units > 0 {
            switch InstallCaps(limiter: volume).admit(
                projectID: project.id, sender: sender, namedInstall: named != nil, hasEvent: submission.event != nil, items: submission.items, now: now)
            {
            case .admitted: break
            case .withoutItems:
                refusals?.record("ingest.install-cap", detail: "\(submission.items.count) item(s) left out, the event kept")
                submission.items = []
            case .refused(let retry, let categories):
                refusals?.record("ingest.install-cap")
                throw IngestError.rateLimited(retryAfter: retry, categories: categories)
            }
        }
        if var event = submission.event, var bytes = submission.eventBytes {
            // Frame variables are stored only for a project that asked for them: the event is
            // written again without them, and the client's compressed body is not kept as is.
            var clientBodyKept = true
            // A bare-list or single-object `exception`/`threads` (sentry-go, old SDKs) or a legacy
            // interface name is stored in the protocol's form, which every reader reads.
            do throws(JSONParser.Failure) {
                if let (normal, normalBytes) = try SentryValues.normalised(bytes, parsed: event) {
                    (event, bytes, clientBodyKept) = (normal, normalBytes, false)
                }
            } catch { throw IngestError.malformed("event: \(error)") }
            if !project.keepsFrameVariables, let stripped = try FrameVariables.stripped(bytes, parsed: event) {
                (event, bytes, clientBodyKept) = (stripped, stripped.serialized(), false)
            }
            if !submission.droppedAttachments.isEmpty {
                refusals?.record("ingest.attachment-size", detail: "\(submission.droppedAttachments.count) attachment(s) over the size cap")
                let noted = try DroppedAttachments.noted(submission.droppedAttachments, in: bytes, limits: limits)
                (event, bytes, clientBodyKept) = (noted, noted.serialized(), false)
            }
            eventID = EnvelopeDecoder.normalisedEventID(event["event_id"]?.stringValue) ?? eventID ?? Keys.randomHex(bytes: 16)
            incoming = IncomingEvent(
                projectID: project.id, eventID: eventID!, received: now,
                timestamp: EventFields.eventTimestamp(event["timestamp"], received: now, sentAt: submission.envelopeHeader["sent_at"]),
                release: event["release"]?.stringValue.flatMap { ReleaseName.isValid($0) ? $0 : nil },
                installID: InstallID.bounded(EventFields.installID(event: event, request: request)),
                compressedEvent: StoredEvent.encode(
                    eventBytes: bytes, gzipBody: clientBodyKept && submission.items.isEmpty && attachments.isEmpty ? submission.compressedBody : nil,
                    inflatedBytes: submission.inflatedBytes),
                attachments: attachments, minidumpModules: minidumpModules ?? [])
            (incoming!.environment, incoming!.operatingSystem) = (EventFields.environment(event), EventFields.operatingSystem(event))
            if let t = TransactionIngest.traceContext(of: event) { (incoming!.traceID, incoming!.spanID) = (t.traceID, t.spanID) }
            if project.storesIPAddresses {
                incoming!.clientAddress = InferredIPAddress.addressToKeep(for: event, clientAddress: request.clientAddress)
            }
            signature = PhaseClock.time(.stackSignature) { StackExtractor.signature(of: event, grouping: project.groupingConfig) }
        }
        // Traces/: transactions are decoded (a malformed one refuses the envelope) and stored apart.
        let (otherItems, transactions) = try TransactionIngest.split(
            submission.items, projectID: project.id, received: now,
            envelopeEventID: submission.envelopeHeader["event_id"]?.stringValue)
        let items = otherItems.map { item in
            var rec = IncomingItem(projectID: project.id, type: item.type, received: now, payload: item.payload)
            // Validated while decoding; a failure here cannot happen, and would count nothing.
            (rec.sessionsStarted, rec.sessionsCrashed) = (try? SessionCounting.counts(item, limits: limits)) ?? (0, 0)
            return rec
        }
        try TransactionIngest.store(transactions, in: traces)
        if incoming == nil && items.isEmpty {
            return eventID ?? transactions.first?.eventID ?? ""
        }
        let occurrenceID = try PhaseClock.time(.storeWait) { try store.storeIngest(event: incoming, items: items) }
        if let occurrenceID, let incoming, let signature {
            processor.submit(
                .init(
                    occurrenceID: occurrenceID, projectID: project.id, stack: signature,
                    timestamp: incoming.timestamp, release: incoming.release,
                    environment: incoming.environment, tags: submission.event.map(EventFields.tags) ?? []))
        }
        return eventID ?? ""
    }

    /// The key first, then the project it must belong to. A key answers the same for a project
    /// that exists and one that does not: public keys ship inside apps, so what a key may learn
    /// is its own project, never which other projects exist.
    private func authorize(_ key: String, projectRef: String) throws -> (PublicKeyRecord, ProjectRecord) {
        if ServerToken.looksLikeServerToken(key) {
            throw IngestError.unauthorized("server tokens are refused on ingest; send with the project's public key (DSN)")
        }
        guard let record = try store.publicKey(key) else { throw IngestError.unauthorized("unknown public key") }
        guard let project = try project(projectRef), record.projectID == project.id else {
            throw IngestError.forbidden("this public key is not for project '\(projectRef)'")
        }
        return (record, project)
    }
}
