// POST /api/<project>/log-archive/: the SDK's rolled gzip archives. GET on the same path tells
// an SDK whether uploads are on (it asks while it has heard "off").
//
// Checks, in order; every refusal is a 4xx and writes nothing:
//   public key (X-Sentry-Auth, Authorization: Sentry, ?sentry_key) of this project → 401/403;
//   app-id allowlist (X-Faultline-App-Id) → 403; metadata headers well-formed → 400;
//   the upload switch for project/release/install → 403 with X-Faultline-Log-Upload: off;
//   per-install cap shared with event ingest → 429; body size → 413 (before it is read);
//   SHA-256 of the body equals X-Faultline-Archive-Sha256 → 400; an archive already stored
//   with this checksum → 200 {"duplicate": true} (nothing written); gzip inflates completely
//   within the uncompressed cap while streaming → 400 (corrupt, truncated) / 413 (bomb).
// Only then is the body written under a server-chosen name and its row inserted.
import Foundation
import FaultlineProtocol
import FaultlineHashing

final class LogArchiveReceiver: @unchecked Sendable {
    let store: any Store
    let archives: any LogArchiveStore
    let files: LogArchiveFiles
    let limits: LogArchiveLimits
    let volume: InstallVolumeLimiter
    let retention: LogArchiveRetention
    let refusals: Refusals?

    init(
        store: any Store, archives: any LogArchiveStore, files: LogArchiveFiles, limits: LogArchiveLimits, volume: InstallVolumeLimiter,
        retention: LogArchiveRetention, refusals: Refusals?
    ) {
        self.store = store; self.archives = archives; self.files = files; self.limits = limits; self.volume = volume; self.retention = retention;
        self.refusals = refusals
    }

    /// What the headers say, once checked.
    struct Head {
        var project: ProjectRecord
        var installID: String
        var appID: String?
        var release: String?
        var clientName: String
        var sha256: String
    }

    static func switchHeader(_ on: Bool) -> (String, String) { (HeaderName.logUpload, on ? "on" : "off") }

    private func refuse(_ status: Int, _ limit: String, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        refusals?.record(limit, detail: message)
        return .detail(status, message, headers: headers)
    }

    /// Everything that can be decided from the request line and headers. `forUpload` adds the
    /// metadata an upload needs (the GET probe only needs the key and the install id).
    func check(_ r: HTTPRequest, projectRef: String, forUpload: Bool) -> Result<Head, HTTPResponseBox> {
        guard let key = SentryAuth.key(in: r), !ServerToken.looksLikeServerToken(key) else {
            return .failure(.init(refuse(401, "auth.public-key", "missing public key: send X-Sentry-Auth: Sentry sentry_key=<key>")))
        }
        let found: PublicKeyRecord?
        do { found = try store.publicKey(key) } catch {
            return .failure(.init(.storeUnavailable("could not look up the public key", error, counting: refusals)))
        }
        guard let record = found else { return .failure(.init(refuse(401, "auth.public-key", "unknown public key"))) }
        let named: ProjectRecord?
        do { named = try store.project(idOrSlug: projectRef) } catch {
            return .failure(.init(.storeUnavailable("could not look up the project", error, counting: refusals)))
        }
        guard let project = named, project.id == record.projectID else {
            return .failure(.init(refuse(403, "auth.public-key", "this public key belongs to another project")))
        }
        let appID = r.header(HeaderName.appID)
        if !record.allowedAppIDs.isEmpty {
            guard let a = appID, record.allowedAppIDs.contains(a) else {
                return .failure(.init(refuse(403, "ingest.app-id", "app id '\(appID ?? "")' is not allowed for this key (\(HeaderName.appID))")))
            }
        }
        guard let install = r.header(HeaderName.installID), Self.isToken(install, max: 64) else {
            return .failure(.init(refuse(400, "log-archive.metadata", "\(HeaderName.installID) must be 1–64 characters of [A-Za-z0-9._-]")))
        }
        var release: String?
        if let raw = r.header(HeaderName.release) {
            guard let v = Self.decodeText(raw, maxBytes: 200) else {
                return .failure(
                    .init(
                        refuse(400, "log-archive.metadata", "\(HeaderName.release) must be percent-encoded UTF-8 without control characters, at most 200 bytes")
                    ))
            }
            release = v
        }
        var name = "", sha = ""
        if forUpload {
            guard let raw = r.header(HeaderName.archiveName), let n = Self.decodeText(raw, maxBytes: limits.maxNameBytes),
                !n.contains("/"), n != ".", n != ".."
            else {
                return .failure(
                    .init(
                        refuse(
                            400, "log-archive.name",
                            "\(HeaderName.archiveName) must be a plain file name: percent-encoded UTF-8, 1–\(limits.maxNameBytes) bytes, no '/', NUL or control characters"
                        )))
            }
            guard let s = r.header(HeaderName.archiveSHA256)?.lowercased(), s.utf8.count == 64, s.allSatisfy(\.isHexDigit) else {
                return .failure(.init(refuse(400, "log-archive.metadata", "\(HeaderName.archiveSHA256) must be the 64-hex SHA-256 of the body")))
            }
            name = n; sha = s
        }
        return .success(Head(project: project, installID: install, appID: appID, release: release, clientName: name, sha256: sha))
    }

    /// Before the body: a refusal here means not one body byte is buffered.
    func preflight(_ r: HTTPRequest, projectRef: String) -> HTTPResponse? {
        switch check(r, projectRef: projectRef, forUpload: true) {
        case .failure(let f): return f.response
        case .success(let head):
            if !isEnabled(head) { return switchedOff() }
            return nil
        }
    }

    func handle(_ r: HTTPRequest, projectRef: String) -> HTTPResponse {
        let head: Head
        switch check(r, projectRef: projectRef, forUpload: r.method == "POST") {
        case .failure(let f): return f.response
        case .success(let h): head = h
        }
        let on = isEnabled(head)
        if r.method == "GET" || r.method == "HEAD" {
            return .json(["log_upload": .string(on ? "on" : "off")], headers: [Self.switchHeader(on)])
        }
        guard r.method == "POST" else { return .detail(405, "log archives take POST (upload) or GET (switch state)") }
        guard on else { return switchedOff() }
        if let retry = volume.admit(projectID: head.project.id, installID: head.installID) {
            return refuse(429, "ingest.install-cap", "this install sent too much; retry later", headers: [(HeaderName.retryAfter, String(retry))])
        }
        do {
            return try receive(r.body, head)
        } catch {
            return .storeUnavailable("could not store the archive", error, counting: refusals)
        }
    }

    private func switchedOff() -> HTTPResponse {
        .json(
            ["detail": "log upload is switched off for this project, release or install; keep the archive", "log_upload": "off"],
            status: 403, headers: [Self.switchHeader(false)])
    }

    private func isEnabled(_ h: Head) -> Bool {
        let rules = (try? archives.logUploadRules(projectID: h.project.id)) ?? []
        return LogUploadRule.isEnabled(rules, release: h.release, installID: h.installID)
    }

    private func receive(_ body: Data, _ head: Head) throws -> HTTPResponse {
        let ok = [Self.switchHeader(true)]
        guard !body.isEmpty else { return refuse(400, "log-archive.gzip", "empty body: send the .gz archive") }
        guard SHA256Hash.hex(body) == head.sha256 else {
            return refuse(400, "log-archive.checksum", "the body's SHA-256 is not \(HeaderName.archiveSHA256) (damaged in transit?)")
        }
        if let existing = try archives.logArchive(projectID: head.project.id, sha256: head.sha256) {
            return .json(["id": .string(String(existing.id)), "duplicate": true, "log_upload": "on"], headers: ok)
        }
        guard body.count >= 18, body[body.startIndex] == 0x1f, body[body.startIndex + 1] == 0x8b else {
            return refuse(400, "log-archive.gzip", "the body is not gzip")
        }
        var lines: Int64 = 0
        let inflated: Int
        do {
            inflated = try Inflate.inflate(body, limit: limits.maxUncompressedBytes) { piece in
                for b in piece where b == 10 { lines += 1 }
            }
        } catch Inflate.Failure.tooLarge(let l) {
            return refuse(413, "log-archive.uncompressed", "the archive inflates past \(l) bytes")
        } catch {
            return refuse(400, "log-archive.gzip", "the archive is not valid gzip: \(error)")
        }
        let now = Date().timeIntervalSince1970
        let storage = try files.store(body, projectID: head.project.id, received: now)
        let record = LogArchiveRecord(
            id: 0, projectID: head.project.id, installID: head.installID, appID: head.appID, release: head.release,
            clientName: head.clientName, sha256: head.sha256, compressedBytes: Int64(body.count),
            uncompressedBytes: Int64(inflated), lines: lines, received: now, storageName: storage)
        let id: Int64?
        do { id = try archives.recordLogArchive(record) } catch { files.remove(storage); throw error }
        guard let id else {
            // The same archive arrived twice at once: the other request stored it.
            files.remove(storage)
            let existing = try archives.logArchive(projectID: head.project.id, sha256: head.sha256)
            return .json(["id": .string(String(existing?.id ?? 0)), "duplicate": true, "log_upload": "on"], headers: ok)
        }
        try? retention.run(now: now, minimumInterval: 10)
        return .json(
            [
                "id": .string(String(id)), "duplicate": false, "log_upload": "on", "lines": .int(lines),
                "uncompressed_bytes": .int(Int64(inflated))
            ], headers: ok)
    }

    // MARK: header values

    static func isToken(_ s: String, max: Int) -> Bool {
        !s.isEmpty && s.utf8.count <= max
            && s.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b == 0x2e || b == 0x5f || b == 0x2d
            }
    }

    /// Percent-decodes to bytes, then requires UTF-8 without control characters (NUL included).
    static func decodeText(_ raw: String, maxBytes: Int) -> String? {
        var bytes: [UInt8] = []
        var it = Array(raw.utf8)[...]
        while let b = it.popFirst() {
            if b == 0x25 {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
            if bytes.count > maxBytes { return nil }
        }
        guard !bytes.isEmpty, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }),
            let s = String(validating: bytes, as: UTF8.self)
        else { return nil }
        return s
    }
}

/// A refusal carried through `Result` (HTTPResponse is not an Error).
struct HTTPResponseBox: Error { let response: HTTPResponse; init(_ r: HTTPResponse) { response = r } }
