// POST /api/<project>/envelope/ and /store/: authenticate, decode under limits, store durably,
// answer, then hand the stack to the grouping worker.
import Foundation
import FaultlineProtocol

public final class IngestHandler: @unchecked Sendable {
    let store: Store
    let limits: IngestLimits
    let volume: InstallVolumeLimiter
    let processor: EventProcessor
    private let projectLock = NSLock()
    private var projectCache: [String: ProjectRecord] = [:]

    public init(store: Store, limits: IngestLimits, processor: EventProcessor) {
        self.store = store
        self.limits = limits
        self.processor = processor
        self.volume = InstallVolumeLimiter(limit: limits.eventsPerInstall, windowSeconds: limits.installWindowSeconds)
    }

    public enum Endpoint { case envelope, store }

    public func handle(_ request: HTTPRequest, project projectRef: String, endpoint: Endpoint) -> HTTPResponse {
        do {
            let id = try ingest(request, project: projectRef, endpoint: endpoint)
            return .json(["id": .string(id)])
        } catch let e as IngestError {
            return e.response
        } catch {
            return .detail(503, "could not store the event: \(error)")
        }
    }

    private func project(_ ref: String) throws -> ProjectRecord? {
        projectLock.lock()
        if let p = projectCache[ref] { projectLock.unlock(); return p }
        projectLock.unlock()
        guard let p = try store.project(idOrSlug: ref) else { return nil }
        projectLock.lock(); projectCache[ref] = p; projectLock.unlock()
        return p
    }

    func ingest(_ request: HTTPRequest, project projectRef: String, endpoint: Endpoint) throws -> String {
        guard let project = try project(projectRef) else { throw IngestError.unknownProject("no project '\(projectRef)'") }
        if let bearer = request.bearerToken, ServerToken.looksLikeServerToken(bearer) {
            throw IngestError.unauthorized("server tokens are refused on ingest; send with the project's public key (DSN)")
        }
        var key = SentryAuth.key(in: request)
        // Authenticate before inflating when we can, so strangers cannot make us decompress.
        if let k = key { _ = try authorize(k, project: project) }
        let body = try EnvelopeDecoder.body(of: request, limits: limits)
        let submission = endpoint == .envelope ? try EnvelopeDecoder.envelope(body, limits: limits)
                                               : try EnvelopeDecoder.storeBody(body, limits: limits)
        if key == nil, let dsn = submission.envelopeHeader["dsn"]?.stringValue { key = SentryAuth.key(inDSN: dsn) }
        guard let k = key else {
            throw IngestError.unauthorized("missing public key: send X-Sentry-Auth, ?sentry_key= or a dsn in the envelope header")
        }
        let publicKey = try authorize(k, project: project)

        let now = Date().timeIntervalSince1970
        var incoming: IncomingEvent?
        var eventID = EnvelopeDecoder.normalisedEventID(submission.envelopeHeader["event_id"]?.stringValue)
        var signature: StackSignature?
        if let event = submission.event, let bytes = submission.eventBytes {
            if !publicKey.allowedAppIDs.isEmpty {
                guard let app = EventFields.appID(event: event, request: request) else {
                    throw IngestError.forbidden("this key only accepts events from \(publicKey.allowedAppIDs.joined(separator: ", ")); the event names no app id (contexts.app.app_identifier)")
                }
                guard publicKey.allowedAppIDs.contains(app) else { throw IngestError.forbidden("app id '\(app)' is not allowed for this key") }
            }
            if let install = EventFields.installID(event: event, request: request),
               let retry = volume.admit(projectID: project.id, installID: install, now: now) {
                throw IngestError.rateLimited(retryAfter: retry)
            }
            eventID = EnvelopeDecoder.normalisedEventID(event["event_id"]?.stringValue) ?? eventID ?? Keys.randomHex(bytes: 16)
            incoming = IncomingEvent(projectID: project.id, eventID: eventID!, received: now,
                                     timestamp: EventFields.timestamp(event["timestamp"]) ?? now,
                                     release: event["release"]?.stringValue, installID: EventFields.installID(event: event, request: request),
                                     compressedEvent: Deflate.compress(bytes))
            signature = StackExtractor.signature(of: event)
        }
        let items = submission.items.map { item in
            var rec = IncomingItem(projectID: project.id, type: item.type, received: now, payload: item.payload)
            (rec.sessionsStarted, rec.sessionsCrashed) = SessionCounting.counts(item)
            return rec
        }
        if incoming == nil && items.isEmpty {
            return eventID ?? ""
        }
        let occurrenceID = try store.storeIngest(event: incoming, items: items)
        if let occurrenceID, let incoming, let signature {
            processor.submit(.init(occurrenceID: occurrenceID, projectID: project.id, stack: signature,
                                   timestamp: incoming.timestamp, release: incoming.release))
        }
        return eventID ?? ""
    }

    private func authorize(_ key: String, project: ProjectRecord) throws -> PublicKeyRecord {
        if ServerToken.looksLikeServerToken(key) {
            throw IngestError.unauthorized("server tokens are refused on ingest; send with the project's public key (DSN)")
        }
        guard let record = try store.publicKey(key) else { throw IngestError.unauthorized("unknown public key") }
        guard record.projectID == project.id else { throw IngestError.forbidden("this public key belongs to another project") }
        return record
    }
}

/// Sessions started and crashed according to one `session` or `sessions` item.
enum SessionCounting {
    static func counts(_ item: Envelope.Item) -> (Int64, Int64) {
        guard let v = try? FastJSON.parse(item.payload) else { return (0, 0) }
        switch item.type {
        case "session":
            let started: Int64 = v["init"]?.boolValue == true ? 1 : 0
            let crashed: Int64 = v["status"]?.stringValue == "crashed" ? 1 : 0
            return (started, crashed)
        case "sessions":
            var s: Int64 = 0, c: Int64 = 0
            for a in v["aggregates"]?.arrayValue ?? [] {
                let crashed = a["crashed"]?.int64Value ?? 0
                s += (a["exited"]?.int64Value ?? 0) + (a["errored"]?.int64Value ?? 0) + (a["abnormal"]?.int64Value ?? 0) + crashed
                c += crashed
            }
            return (s, c)
        default:
            return (0, 0)
        }
    }
}
