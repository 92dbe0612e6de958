// The log-archive part of the server in one object: receiver, files, retention, line analysis
// and the token API. Router hands it `/api/<project>/log-archive/` and
// `/api/0/projects/<project>/log-archives/…`.
//
// Token API (Authorization: Bearer <server token>):
//   GET  /api/0/projects/P/log-archives/?install=&release=&since=&limit=&offset=   list, newest first
//   GET  /api/0/projects/P/log-archives/<id>/download                                the .gz as stored
//   GET  /api/0/projects/P/log-archives/top?release=&since=&level=&n=                 line patterns (n ≤ 1000)
//   GET  /api/0/projects/P/log-upload/                                                the switch rules
//   POST /api/0/projects/P/log-upload/  {"enabled": false, "release": "…" | "install": "…"}  set a rule
import Foundation
import FaultlineProtocol

public final class LogArchives: @unchecked Sendable {
    let store: any Store
    let archives: any LogArchiveStore
    let files: LogArchiveFiles
    let limits: LogArchiveLimits
    let receiver: LogArchiveReceiver
    let retention: LogArchiveRetention

    /// `maintenance`: sweep orphan files and run retention now. Only the server does that: a
    /// CLI reading the same data directory while the server runs must not sweep a file the
    /// server has written but not yet recorded.
    init(
        store: any Store, archives: any LogArchiveStore, dataDirectory: String, limits: LogArchiveLimits, volume: InstallVolumeLimiter,
        refusals: Refusals?, maintenance: Bool = true
    ) throws {
        self.store = store
        self.archives = archives
        self.limits = limits
        try archives.prepareLogArchiveTables()
        files = try LogArchiveFiles(dataDirectory: dataDirectory)
        retention = LogArchiveRetention(store: archives, files: files, limits: limits)
        receiver = LogArchiveReceiver(store: store, archives: archives, files: files, limits: limits, volume: volume, retention: retention, refusals: refusals)
        if maintenance {
            files.sweep(known: try archives.allLogArchiveStorageNames())
            try retention.run()
        }
    }

    /// For the CLI: reads (and switch rules) on a data directory, no sweeping, no retention.
    public static func reader(store: any Store, archives: any LogArchiveStore, dataDirectory: String) throws -> LogArchives {
        try LogArchives(
            store: store, archives: archives, dataDirectory: dataDirectory, limits: LogArchiveLimits(),
            volume: InstallVolumeLimiter(limit: 0, windowSeconds: 1), refusals: nil, maintenance: false)
    }

    public func list(_ filter: LogArchiveFilter) throws -> [LogArchiveRecord] { try archives.logArchives(filter) }
    public func rules(projectID: Int64) throws -> [LogUploadRule] { try archives.logUploadRules(projectID: projectID) }
    /// A rule whose value no upload can carry is refused (`LogUploadRule.problem`).
    public struct InvalidRule: Error, CustomStringConvertible { public let description: String }

    public func setRule(_ rule: LogUploadRule) throws {
        if let problem = LogUploadRule.problem(scope: rule.scope, value: rule.value) { throw InvalidRule(description: problem) }
        try archives.setLogUploadRule(rule)
    }
    public func clearRule(projectID: Int64, scope: LogUploadRule.Scope, value: String) throws {
        try archives.removeLogUploadRule(projectID: projectID, scope: scope, value: value)
    }
    public static func json(_ a: LogArchiveRecord) -> JSONValue { archiveJSON(a) }

    /// Runs retention now (also done at start and at most every 10 s while archives arrive).
    @discardableResult
    public func applyRetention() throws -> Int { try retention.run() }

    /// Absolute paths of the archives a top query covers, oldest first.
    func paths(for q: LogTopQuery) throws -> [String] {
        // `since` filters lines by their own timestamps, not archives by arrival: device clocks differ.
        var f = LogArchiveFilter(projectID: q.projectID, release: q.release)
        f.limit = Int.max / 2
        return try archives.logArchives(f).reversed().compactMap { files.path(of: $0.storageName) }
    }

    /// `progress(pass, done, total)`: see `LogLineTop.scan`.
    public func top(_ q: LogTopQuery, progress: (@Sendable (Int, Int, Int) -> Void)? = nil) throws -> LogTopResult {
        LogLineTop.scan(paths: try paths(for: q), query: q, progress: progress)
    }

    static func archiveJSON(_ a: LogArchiveRecord) -> JSONValue {
        [
            "id": .string(String(a.id)), "project": .string(String(a.projectID)), "install_id": .string(a.installID),
            "app_id": a.appID.map { .string($0) } ?? .null, "release": a.release.map { .string($0) } ?? .null,
            "name": .string(a.clientName), "sha256": .string(a.sha256), "compressed_bytes": .int(a.compressedBytes),
            "uncompressed_bytes": .int(a.uncompressedBytes), "lines": .int(a.lines), "received": .double(a.received)
        ]
    }

    public static func topJSON(_ r: LogTopResult) -> JSONValue {
        [
            "archives": .int(Int64(r.archives)), "lines": .int(r.lines), "uncompressed_bytes": .int(r.uncompressedBytes),
            "unreadable_archives": .int(Int64(r.unreadable)), "truncated_lines": .int(r.truncatedLines),
            "sketch_overflowed": .bool(r.sketchOverflowed), "unlisted_at_most": .int(r.unlistedAtMost),
            "patterns": .array(
                r.patterns.map { p in
                    [
                        "level": .string(p.level), "pattern": .string(p.pattern), "count": .int(p.count),
                        "first_seen": .string(p.firstSeen), "last_seen": .string(p.lastSeen), "example": .string(p.example)
                    ]
                })
        ]
    }

    public static func rulesJSON(_ rules: [LogUploadRule], projectID: Int64) -> JSONValue {
        let project = rules.first { $0.scope == .project }?.enabled ?? true
        return [
            "project": .string(String(projectID)), "log_upload": .string(project ? "on" : "off"),
            "rules": .array(
                rules.map { r in
                    [
                        "scope": .string(r.scope.rawValue), "value": r.scope == .project ? .null : .string(r.value),
                        "log_upload": .string(r.enabled ? "on" : "off"), "changed": .double(r.changed)
                    ]
                })
        ]
    }

    // MARK: routes

    func preflight(_ r: HTTPRequest, projectRef: String) -> HTTPResponse? { receiver.preflight(r, projectRef: projectRef) }
    func receive(_ r: HTTPRequest, projectRef: String) -> HTTPResponse { receiver.handle(r, projectRef: projectRef) }

    /// `rest` is the path after /api/0/: ["projects", P, "log-archives" | "log-upload", …].
    func api(_ r: HTTPRequest, _ rest: [String]) throws -> HTTPResponse {
        guard let project = try store.project(idOrSlug: rest[1]) else { return .detail(404, "no project '\(rest[1])'") }
        let tail = Array(rest.dropFirst(3))
        if rest[2] == "log-upload" {
            guard tail.isEmpty else { return .detail(404, "no such endpoint: \(r.path)") }
            if r.method == "POST" { return try setRule(r, project) }
            guard r.method == "GET" else { return .detail(405, "method not allowed") }
            return .json(Self.rulesJSON(try archives.logUploadRules(projectID: project.id), projectID: project.id))
        }
        guard r.method == "GET" else { return .detail(405, "method not allowed") }
        switch tail.count {
        case 0:
            var f = LogArchiveFilter(
                projectID: project.id, installID: r.query["install"], release: r.query["release"],
                since: r.query["since"].flatMap { Self.parseTime($0) })
            f.limit = min(max(Int(r.query["limit"] ?? "") ?? 100, 1), 1000)
            f.offset = min(max(Int(r.query["offset"] ?? "") ?? 0, 0), 1 << 40)
            return .json(.array(try archives.logArchives(f).map(Self.archiveJSON)))
        case 1 where tail[0] == "top":
            var q = LogTopQuery()
            q.projectID = project.id
            q.release = r.query["release"]
            if let s = r.query["since"] {
                guard let t = Self.parseTime(s) else { return .detail(400, "since: give seconds since 1970, an ISO 8601 time, or an age like 2h/7d") }
                q.since = t
            }
            if let l = r.query["level"] {
                guard LogLineTop.levelRank(l) != nil else { return .detail(400, "level: one of \(LogLineTop.levels.joined(separator: ", "))") }
                q.minimumLevel = l
            }
            q.limit = min(max(Int(r.query["n"] ?? "") ?? 50, 1), LogLineTop.maxListed)
            return .json(Self.topJSON(try top(q)))
        case 2 where tail[1] == "download":
            guard let id = Int64(tail[0]), let a = try archives.logArchive(id: id), a.projectID == project.id,
                let path = files.path(of: a.storageName)
            else { return .detail(404, "no such archive") }
            var st = stat()
            guard stat(path, &st) == 0 else {
                return .detail(
                    404, "the archive's file is not on this server: retention removed it, or another node received it (each keeps its own log-archive files)")
            }
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/gzip"),
                    ("Content-Disposition", "attachment; filename=\"log-archive-\(a.id).log.gz\"")
                ],
                body: .file(path: path, size: Int64(st.st_size)))
        default:
            return .detail(404, "no such endpoint: \(r.path)")
        }
    }

    private func setRule(_ r: HTTPRequest, _ project: ProjectRecord) throws -> HTTPResponse {
        guard let body = try? JSONValue.parse(r.body), body["enabled"]?.boolValue != nil || body["clear"]?.boolValue == true else {
            return .detail(400, "send {\"enabled\": true|false} with optional \"release\" or \"install\"; {\"clear\": true} removes the rule")
        }
        let scope: LogUploadRule.Scope, value: String
        if let rel = body["release"]?.stringValue {
            scope = .release; value = rel
        } else if let inst = body["install"]?.stringValue {
            scope = .install; value = inst
        } else {
            scope = .project; value = ""
        }
        if body["clear"]?.boolValue == true {
            try archives.removeLogUploadRule(projectID: project.id, scope: scope, value: value)
        } else {
            if let problem = LogUploadRule.problem(scope: scope, value: value) { return .detail(400, problem) }
            try archives.setLogUploadRule(LogUploadRule(projectID: project.id, scope: scope, value: value, enabled: body["enabled"]?.boolValue ?? true))
        }
        return .json(Self.rulesJSON(try archives.logUploadRules(projectID: project.id), projectID: project.id))
    }

    /// Seconds since 1970, ISO 8601 (`2026-12-01T10:00:00Z`), or an age: `90s`, `30m`, `2h`, `7d`.
    public static func parseTime(_ s: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        if let v = Double(s) { return v }
        if let unit = s.last, let n = Double(s.dropLast()), n >= 0 {
            switch unit {
            case "s": return now - n;
            case "m": return now - n * 60;
            case "h": return now - n * 3600;
            case "d": return now - n * 86_400;
            default: break
            }
        }
        return SentryTimestamp.seconds(rfc3339: s)
    }
}
