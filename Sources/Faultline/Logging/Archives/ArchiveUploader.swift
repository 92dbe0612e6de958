// Sends finished archives (`*.log.gz`) to the server, oldest first, from the SDK's worker thread:
// never from a logging thread, and after the pass's envelopes, so a crash report never waits
// behind a log archive.
//
// Rules:
// - an archive is deleted only after a 2xx (stored, or already stored: the server deduplicates
//   by checksum, so a resend after a kill -9 between its answer and our unlink stores nothing);
// - network errors, 408, 5xx and 3xx (a redirect is never followed) keep the archive and back
//   off (the transport's Backoff);
//   429 keeps it until Retry-After;
// - `X-Faultline-Log-Upload: off` keeps it and stops uploads (persisted, UploadSwitch); while
//   off, one GET per `recheckInterval` asks whether it is on again;
// - any other 4xx means the server will never take this archive: it is deleted and counted
//   (`rejected_by_server`), like a rejected envelope.
// Archives made while uploads are off stay within the rolling logger's caps.
import Foundation
import FaultlineProtocol
import Synchronization
import FaultlineHashing

/// What one request to the archive endpoint came to.
struct ArchiveAnswer: Sendable {
    var outcome: SendOutcome
    /// `X-Faultline-Log-Upload`, or the JSON field `log_upload`.
    var logUpload: UploadSwitch.State?
}

/// The HTTP side, a seam for tests. `HTTPTransport` implements it with its own client.
protocol ArchivePosting: Sendable {
    func postArchive(_ body: Data, url: URL, headers: [String: String]) -> ArchiveAnswer
    func askArchiveSwitch(url: URL, headers: [String: String]) -> ArchiveAnswer
}

final class ArchiveUploader: Sendable {
    struct Metadata: Sendable {
        var installID: String
        var appID: String?
        var release: String?
    }

    struct Summary: Equatable, Sendable {
        var sent = 0
        var duplicates = 0
        var rejected = 0
        var stoppedBy: String?
    }

    let folder: ArchiveDirectory
    let url: URL
    let metadata: Metadata
    let transport: any ArchivePosting
    let uploadSwitch: UploadSwitch
    let clock: any SDKClock
    let recheckInterval: Double
    let authHeader: String
    private struct State { var backoff = Backoff(); var retryAt = 0.0; var nextProbe = 0.0 }
    private let state = Mutex(State())
    private let drop: @Sendable (Int) -> Void

    init(
        directory: String, dsn: DSN, metadata: Metadata, transport: any ArchivePosting, clock: any SDKClock = SystemClock(),
        recheckInterval: Double = 300, drop: @escaping @Sendable (Int) -> Void
    ) {
        folder = ArchiveDirectory(path: directory, baseName: "")
        url = Self.endpoint(dsn)
        self.metadata = metadata
        self.transport = transport
        self.clock = clock
        self.recheckInterval = recheckInterval
        self.drop = drop
        authHeader = dsn.authHeader(client: "\(Faultline.sdkName)/\(FaultlineVersion.string)")
        uploadSwitch = UploadSwitch(file: directory + "/.upload-state")
    }

    /// `<scheme>://host[:port][/prefix]/api/<project>/log-archive/`
    static func endpoint(_ dsn: DSN) -> URL {
        var c = URLComponents()
        c.scheme = dsn.scheme
        c.host = dsn.host
        c.port = dsn.port
        c.path = dsn.pathPrefix + "/api/\(dsn.projectID)/log-archive/"
        return c.url!
    }

    private var baseHeaders: [String: String] {
        var h = [HeaderName.sentryAuth: authHeader, HeaderName.installID: metadata.installID]
        if let a = metadata.appID { h[HeaderName.appID] = a }
        if let r = metadata.release { h[HeaderName.release] = Self.percentEncode(r) }
        return h
    }

    /// Header values are percent-encoded UTF-8 (names may hold any byte a file name can).
    static func percentEncode(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@+")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// One pass: sends archives until none is left, the server says stop, or `shouldStop()`.
    @discardableResult
    func pass(shouldStop: () -> Bool = { false }) -> Summary {
        var summary = Summary()
        let now = clock.now()
        if uploadSwitch.current == .off {
            let due = state.withLock { s -> Bool in
                guard now >= s.nextProbe else { return false }
                s.nextProbe = now + recheckInterval
                return true
            }
            guard due else { summary.stoppedBy = "switched off"; return summary }
            let answer = transport.askArchiveSwitch(url: url, headers: baseHeaders)
            if let v = answer.logUpload { uploadSwitch.set(v) }
            guard uploadSwitch.current == .on else { summary.stoppedBy = "switched off"; return summary }
        }
        if state.withLock({ $0.retryAt }) > now { summary.stoppedBy = "backoff"; return summary }
        let archives =
            (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".log.gz") && !$0.hasPrefix(".") }.sorted() ?? []
        for name in archives {
            if shouldStop() { summary.stoppedBy = "stopping"; break }
            let path = folder.path + "/" + name
            folder.claim(name)
            defer { folder.release(name) }
            guard let body = FileManager.default.contents(atPath: path) else { continue }  // evicted meanwhile
            var headers = baseHeaders
            headers[HeaderName.archiveName] = Self.percentEncode(name)
            headers[HeaderName.archiveSHA256] = SHA256Hash.hex(body)
            let answer = transport.postArchive(body, url: url, headers: headers)
            if let v = answer.logUpload { uploadSwitch.set(v) }
            switch answer.outcome {
            case .sent:
                unlink(path)
                state.withLock { $0.backoff.succeeded() }
                summary.sent += 1
                if uploadSwitch.current == .off { summary.stoppedBy = "switched off"; return summary }
            case .rateLimited(let seconds, _):
                state.withLock { $0.retryAt = clock.now() + seconds }
                summary.stoppedBy = "rate limit"
                return summary
            case .retryable, .redirected:
                state.withLock { s in
                    s.backoff.failed(); s.retryAt = clock.now() + s.backoff.currentDelay
                }
                summary.stoppedBy = "backoff"
                return summary
            case .rejected, .tooLarge:
                if uploadSwitch.current == .off {
                    state.withLock { $0.nextProbe = clock.now() + recheckInterval }
                    summary.stoppedBy = "switched off"
                    return summary
                }
                unlink(path)
                drop(1)
                summary.rejected += 1
            }
        }
        return summary
    }
}
