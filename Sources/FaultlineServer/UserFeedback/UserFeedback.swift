// What users wrote about a crash or an error: the `user_report` envelope item (Sentry's crash
// report dialog and `capture_user_feedback`: event_id, name, email, comments) and the newer
// `feedback` item (sentry-javascript's feedback widget and `captureFeedback`, an event whose
// `contexts.feedback` holds message, contact_email, name, url and associated_event_id). Both are
// kept as items (`items`, types `user_report` and `feedback`) and read back into this one shape.
import FaultlineProtocol
import Foundation

struct UserFeedback: Sendable {
    /// The item's row id.
    var id: Int64
    var received: Double
    /// The event the user wrote about (nil for feedback sent on its own).
    var eventID: String?
    var name: String
    var email: String
    var comments: String
    /// The page the feedback was sent from (`feedback` items).
    var url: String?

    /// The item types it is read from.
    static let itemTypes = ["user_report", "feedback"]
    /// Longest name or email kept, and longest comment (Sentry's limits: 128 and 4,096 characters).
    static let maxNameCharacters = 128
    static let maxCommentCharacters = 4096

    /// The feedback in an item's payload, nil when it holds none (no comments and no message).
    static func decode(type: String, payload: Data, id: Int64, received: Double) -> UserFeedback? {
        guard let json = try? JSONParser.parse(payload) else { return nil }
        let fields: JSONValue?
        let eventID: String?
        switch type {
        case "user_report":
            fields = json
            eventID = EnvelopeDecoder.normalisedEventID(json["event_id"]?.stringValue)
        case "feedback":
            fields = json["contexts"]?["feedback"]
            eventID = EnvelopeDecoder.normalisedEventID(fields?["associated_event_id"]?.stringValue)
        default: return nil
        }
        guard let fields else { return nil }
        let comments = fields["comments"]?.stringValue ?? fields["message"]?.stringValue ?? ""
        guard !comments.isEmpty else { return nil }
        func text(_ v: JSONValue?, _ limit: Int) -> String { String((v?.stringValue ?? "").prefix(limit)) }
        return UserFeedback(
            id: id, received: received, eventID: eventID, name: text(fields["name"], maxNameCharacters),
            email: text(fields["email"] ?? fields["contact_email"], maxNameCharacters), comments: String(comments.prefix(maxCommentCharacters)),
            url: fields["url"]?.stringValue.map { String($0.prefix(1024)) })
    }

    /// Sentry's `UserReport` as its user-feedback API returns it, with the issue it belongs to.
    func json(issueID: Int64?) -> JSONValue {
        var o: JSONObject = [
            "id": .string(String(id)), "eventID": eventID.map { .string($0) } ?? .null, "name": .string(name), "email": .string(email),
            "comments": .string(comments), "dateCreated": .string(SentryTimestamp.rfc3339(received)),
            "issue": issueID.map { ["id": .string(String($0))] } ?? .null
        ]
        if let url { o["url"] = .string(url) }
        return .object(o)
    }
}
