// Sends one envelope over HTTP (URLSession, gzip) and says what the server's answer means.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FaultlineProtocol
import Synchronization

/// What one POST came to.
enum SendOutcome: Equatable {
    case sent
    /// 429: retry after this many seconds, for these categories (empty: all).
    case rateLimited(seconds: Double, categories: [String])
    /// 413: the request was too large.
    case tooLarge
    /// Other 4xx (not 408/429): the server will never take this envelope.
    case rejected(status: Int)
    /// Network error, 408, 5xx: try again later.
    case retryable(reason: String)
}

protocol EnvelopeSending: Sendable {
    func send(_ body: Data) -> (SendOutcome, rateLimits: [RateLimits.Limit])
    /// Does the slow one-time set-up now (libcurl and OpenSSL global init).
    func prepare()
    /// Cancels the request in flight, if any (at exit).
    func cancelInFlight()
}

/// Only the SDK's worker thread (one flush at a time) sends, so the lazy session needs no lock.
final class HTTPTransport: EnvelopeSending, @unchecked Sendable {
    let dsn: DSN
    let timeout: Double
    let extraHeaders: [String: String]
    /// Created on first send (on the SDK's thread): URLSession's set-up costs milliseconds.
    private lazy var session: URLSession = {
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.timeoutIntervalForResource = timeout
        config.httpMaximumConnectionsPerHost = 1
        return URLSession(configuration: config)
    }()

    init(dsn: DSN, timeout: Double = 15, extraHeaders: [String: String] = [:]) {
        self.dsn = dsn
        self.timeout = timeout
        self.extraHeaders = extraHeaders
    }

    func prepare() { _ = session }

    private let inFlight = Mutex<URLSessionDataTask?>(nil)
    func cancelInFlight() { inFlight.withLock { $0?.cancel() } }

    func send(_ body: Data) -> (SendOutcome, rateLimits: [RateLimits.Limit]) {
        var request = URLRequest(url: dsn.envelopeURL, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-sentry-envelope", forHTTPHeaderField: "Content-Type")
        request.setValue(dsn.authHeader(client: "\(Faultline.sdkName)/\(FaultlineVersion.string)"), forHTTPHeaderField: "X-Sentry-Auth")
        for (k, v) in extraHeaders { request.setValue(v, forHTTPHeaderField: k) }
        if let gz = Deflate.gzip(body) {
            request.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
            request.httpBody = gz
        } else {
            request.httpBody = body
        }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Data?, URLResponse?, Error?) = (nil, nil, nil)
        let task = session.dataTask(with: request) { d, r, e in result = (d, r, e); done.signal() }
        inFlight.withLock { $0 = task }
        defer { inFlight.withLock { $0 = nil } }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            return (.retryable(reason: "timed out after \(Int(timeout)) s"), [])
        }
        if let e = result.2 { return (.retryable(reason: e.localizedDescription), []) }
        guard let http = result.1 as? HTTPURLResponse else { return (.retryable(reason: "no HTTP response"), []) }
        let limits = RateLimits.parse(header: http.value(forHTTPHeaderField: "X-Sentry-Rate-Limits"))
        return (Self.classify(status: http.statusCode, retryAfter: http.value(forHTTPHeaderField: "Retry-After"), limits: limits), limits)
    }

    static func classify(status: Int, retryAfter: String?, limits: [RateLimits.Limit]) -> SendOutcome {
        switch status {
        case 200..<300: return .sent
        case 429:
            let seconds = retryAfter.flatMap(Double.init) ?? limits.map(\.seconds).max() ?? 60
            return .rateLimited(seconds: seconds, categories: [])
        case 413: return .tooLarge
        case 408: return .retryable(reason: "408 request timeout")
        case 400..<500: return .rejected(status: status)
        default: return .retryable(reason: "HTTP \(status)")
        }
    }
}
