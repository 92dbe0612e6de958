// The attachments of an event in the JSON API (server token), in Sentry's paths:
// GET …/events/<event id>/attachments/ lists them; …/attachments/<id>/ describes one, and with
// `?download=1` answers its bytes (`AttachmentDownload`).
import Foundation
import FaultlineProtocol

struct AttachmentAPI {
    let store: any Store
    let attachments: any AttachmentStore

    static func json(_ a: AttachmentRecord, org: String, project: String, eventID: String) -> JSONValue {
        [
            "id": .string(String(a.id)), "name": .string(a.filename), "mimetype": a.contentType.map { .string($0) } ?? .null,
            "type": .string(a.attachmentType ?? "event.attachment"), "size": .int(a.size),
            "download": .string("/api/0/projects/\(org)/\(project)/events/\(eventID)/attachments/\(a.id)/?download=1")
        ]
    }

    /// The event's occurrence in this project, or the 404 to answer.
    private enum Found {
        case event(ProjectRecord, StoredOccurrence)
        case missing(HTTPResponse)
    }

    private func occurrence(project slug: String, eventID: String) throws -> Found {
        guard let project = try store.project(idOrSlug: slug) else { return .missing(.detail(404, "no project '\(slug)'")) }
        guard let id = EnvelopeDecoder.normalisedEventID(eventID), let o = try store.occurrence(projectID: project.id, eventID: id) else {
            return .missing(.detail(404, "no such event"))
        }
        return .event(project, o)
    }

    func list(org: String, project slug: String, eventID: String) throws -> HTTPResponse {
        switch try occurrence(project: slug, eventID: eventID) {
        case .missing(let r): return r
        case .event(let project, let o):
            return .json(.array(try attachments.attachments(occurrenceID: o.id).map { Self.json($0, org: org, project: project.slug, eventID: o.eventID) }))
        }
    }

    func one(_ r: HTTPRequest, org: String, project slug: String, eventID: String, attachmentID: String) throws -> HTTPResponse {
        switch try occurrence(project: slug, eventID: eventID) {
        case .missing(let r): return r
        case .event(let project, let o):
            guard let id = Int64(attachmentID), let (record, data) = try attachments.attachment(id: id, occurrenceID: o.id) else {
                return .detail(404, "no such attachment")
            }
            if let d = r.query["download"], d != "0", d != "false" { return AttachmentDownload.response(record, data) }
            return .json(Self.json(record, org: org, project: project.slug, eventID: o.eventID))
        }
    }
}
