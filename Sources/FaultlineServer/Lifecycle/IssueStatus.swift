// An issue's place in its lifecycle, with Sentry's names and `statusDetails` forms, so the issue
// update API, sentry-cli and the pages speak one vocabulary.
import Foundation
import FaultlineProtocol

/// unresolved → resolved (optionally in a release, or in the next one) → unresolved again on a
/// regression; or ignored (muted) until a time or a number of further events.
public enum IssueStatus: String, Sendable, CaseIterable {
    case unresolved, resolved, ignored

    /// Sentry's older spelling of `ignored` is accepted on input.
    public init?(sentry value: String) {
        if value == "muted" { self = .ignored; return }
        self.init(rawValue: value)
    }
}

/// What a status change carries besides the status (Sentry's `statusDetails`).
public struct IssueStatusDetails: Sendable, Equatable {
    /// Resolved in this release: events of older releases do not reopen the issue.
    public var inRelease: String?
    /// Resolved in whatever release comes after the newest one known now.
    public var inNextRelease = false
    /// Ignored until this many more events arrive.
    public var ignoreCount: Int64?
    /// Ignored until this time (seconds since the epoch).
    public var ignoreUntil: Double?

    public init(inRelease: String? = nil, inNextRelease: Bool = false, ignoreCount: Int64? = nil, ignoreUntil: Double? = nil) {
        self.inRelease = inRelease; self.inNextRelease = inNextRelease; self.ignoreCount = ignoreCount; self.ignoreUntil = ignoreUntil
    }

    /// Reads Sentry's forms: `{"inRelease": V}` (V may be `latest`), `{"inNextRelease": true}`,
    /// `{"ignoreCount": N}`, `{"ignoreUntil": "<RFC 3339>"}`, `{"ignoreDuration": minutes}`.
    /// Throws a message for a malformed one.
    public init(sentry json: JSONValue?, now: Double) throws(LifecycleError) {
        guard let json, json != .null else { return }
        guard json.objectValue != nil else { throw .badRequest("statusDetails must be an object") }
        // What the server cannot honour is refused, never dropped: an ignore "for N events within
        // M minutes" or "until N users" would otherwise become a different, longer ignore.
        for unsupported in ["ignoreWindow", "ignoreUserCount", "ignoreUserWindow"] where json[unsupported] != nil {
            throw .badRequest("statusDetails.\(unsupported) is not supported: ignore for a count of events (ignoreCount) or until a time")
        }
        if let v = json["inRelease"] {
            guard let s = v.stringValue, ReleaseName.isValid(s) || s == ReleaseName.latest else {
                throw .badRequest("statusDetails.inRelease must be a release version (or \"latest\")")
            }
            inRelease = s
        }
        if json["inNextRelease"]?.boolValue == true { inNextRelease = true }
        if let v = json["ignoreCount"] {
            guard let n = v.int64Value, n > 0 else { throw .badRequest("statusDetails.ignoreCount must be a positive integer") }
            ignoreCount = n
        }
        if let v = json["ignoreDuration"] {
            // Bounded, so the time it gives is one every later conversion (RFC 3339, pages) can take.
            guard let minutes = v.doubleValue, let until = Self.ignoreUntil(minutes: minutes, now: now) else {
                throw .badRequest("statusDetails.ignoreDuration must be positive minutes ending before the year 10000")
            }
            ignoreUntil = until
        }
        if let v = json["ignoreUntil"] {
            guard let s = v.stringValue, let t = EventFields.timestamp(.string(s)) else {
                throw .badRequest("statusDetails.ignoreUntil must be an RFC 3339 time")
            }
            ignoreUntil = t
        }
    }

    /// The end of an ignore for `minutes` from `now`, nil unless positive and before the year
    /// 10000 (a time every later conversion, RFC 3339 and the pages, can take).
    public static func ignoreUntil(minutes: Double, now: Double) -> Double? {
        guard minutes > 0 else { return nil }
        return EventFields.timestamp(.double(now + minutes * 60))
    }

    /// Sentry's `statusDetails` as the API answers it.
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let r = inRelease { o["inRelease"] = .string(r) }
        if inNextRelease { o["inNextRelease"] = true }
        if let n = ignoreCount { o["ignoreCount"] = .int(n) }
        if let t = ignoreUntil { o["ignoreUntil"] = .string(SentryTimestamp.rfc3339(t)) }
        return .object(o)
    }
}

/// What the lifecycle and release APIs refuse, with the status to answer.
public enum LifecycleError: Error, CustomStringConvertible {
    case badRequest(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .badRequest(let m), .notFound(let m): return m
        }
    }
    var status: Int {
        switch self {
        case .badRequest: return 400
        case .notFound: return 404
        }
    }
}
