// Sends one envelope over HTTP (libcurl through CurlClient, gzip) and says what the server's
// answer means. Rules for the answer (README, "Link the SDK"): only its status, Retry-After,
// X-Sentry-Rate-Limits and at most 64 KiB of body are read; a redirect is never followed.
import Foundation
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
    /// 3xx: the server points elsewhere. Never followed (the body and X-Sentry-Auth stay with the
    /// DSN's origin): the envelope stays queued and is retried with back-off, like a 5xx.
    case redirected(status: Int, location: String?)
}

protocol EnvelopeSending: Sendable {
    func send(_ body: Data) -> (SendOutcome, rateLimits: [RateLimits.Limit])
    /// The same with its own time limit (the last attempt at exit must not wait 15 s).
    func send(_ body: Data, timeout: Double) -> (SendOutcome, rateLimits: [RateLimits.Limit])
    /// Does the slow one-time set-up now (libcurl and OpenSSL global init).
    func prepare()
    /// Cancels the request in flight, if any (at exit).
    func cancelInFlight()
}

/// Only the SDK's worker thread (one flush at a time) sends; `cancelInFlight` may come from any thread.
final class HTTPTransport: EnvelopeSending, Sendable {
    let dsn: DSN
    let timeout: Double
    let extraHeaders: [String: String]
    let client = CurlClient()

    init(dsn: DSN, timeout: Double = 15, extraHeaders: [String: String] = [:]) {
        self.dsn = dsn
        self.timeout = timeout
        self.extraHeaders = extraHeaders
    }

    func prepare() { _ = CurlClient.libraryReady }

    func cancelInFlight() { client.cancel() }

    func send(_ body: Data) -> (SendOutcome, rateLimits: [RateLimits.Limit]) { send(body, timeout: timeout) }

    func send(_ body: Data, timeout: Double) -> (SendOutcome, rateLimits: [RateLimits.Limit]) {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-sentry-envelope"),
            (HeaderName.sentryAuth, dsn.authHeader(client: "\(Faultline.sdkName)/\(FaultlineVersion.string)"))
        ]
        headers += extraHeaders.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        var payload = body
        if let gz = Deflate.gzip(body) {
            headers.append(("Content-Encoding", "gzip"))
            payload = gz
        }
        let request = HTTPRequest(method: "POST", url: dsn.envelopeURL, headers: headers, body: payload, timeout: timeout)
        switch client.perform(request) {
        case .failure(let failure): return (.retryable(reason: failure.description), [])
        case .success(let answer):
            let limits = RateLimits.parse(header: answer.header(HeaderName.sentryRateLimits))
            noteRefusedKey(answer)
            return (Self.classify(answer, limits: limits), limits)
        }
    }

    /// A 401 or 403 says the key is not taken: once per process on stderr, and in `Faultline.status`.
    func noteRefusedKey(_ answer: HTTPAnswer) {
        if answer.status == 401 || answer.status == 403 { KeyRejection.record(httpStatus: answer.status, key: dsn.publicKey) }
    }

    /// The answer's meaning; the first redirect also says on stderr why nothing arrives.
    static func classify(_ answer: HTTPAnswer, limits: [RateLimits.Limit]) -> SendOutcome {
        let outcome = classify(
            status: answer.status, retryAfter: answer.header(HeaderName.retryAfter), limits: limits,
            location: answer.header("Location"))
        if case .redirected(let status, let location) = outcome, !warnedAboutRedirect.exchange(true, ordering: .relaxed) {
            // Once per process, whatever the Location (a server could vary it); its text is the
            // server's, so it is shown printable and short.
            let target = location.map { printable($0, limit: 200) } ?? "(no Location)"
            Faultline.warnOnce(
                "the server answered \(status) redirecting to \(target); Faultline never follows a "
                    + "redirect (an envelope and its key go only to the DSN's origin), so everything stays queued: "
                    + "point the DSN at the server itself")
        }
        return outcome
    }
    private static let warnedAboutRedirect = Atomic<Bool>(false)

    /// Control and format characters (terminal escapes, bidi overrides) shown as `?`, cut at `limit`.
    private static func printable(_ text: String, limit: Int) -> String {
        let shown = text.unicodeScalars.prefix(limit).map { u -> Character in
            [.control, .format].contains(u.properties.generalCategory) ? "?" : Character(u)
        }
        return String(shown) + (text.unicodeScalars.count > limit ? "…" : "")
    }

    static func classify(status: Int, retryAfter: String?, limits: [RateLimits.Limit], location: String? = nil) -> SendOutcome {
        switch status {
        case 200..<300: return .sent
        case 300..<400: return .redirected(status: status, location: location)
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
