// Browser SDKs (sentry-javascript) send events from a page's own origin, so the browser asks
// the ingest endpoints for CORS first (a preflight `OPTIONS` for an envelope with X-Sentry-Auth or
// a JSON body) and then lets the page read the answer only when it carries
// `Access-Control-Allow-Origin`. Without these headers every send looks failed to the SDK: it
// cannot read `X-Sentry-Rate-Limits` or `Retry-After`, and counts the event as a network error.
// Sentry's ingestion answers them on its ingest routes for any origin; so does Faultline. The
// public key still authenticates every POST: CORS only lets a page see answers it could already
// cause.
import FaultlineProtocol

enum IngestCORS {
    /// Request headers a browser SDK sends (Relay's list, with the trace headers).
    static let allowedHeaders = [
        HeaderName.sentryAuth.lowercased(), "x-requested-with", "x-forwarded-for", "origin", "referer", "accept", "content-type",
        "content-encoding", "authentication", "authorization", "sentry-trace", "baggage"
    ].joined(separator: ", ")

    /// Response headers the SDK reads (rate limits, back-off, the refusal's reason).
    static let exposedHeaders = ["x-sentry-error", HeaderName.sentryRateLimits.lowercased(), HeaderName.retryAfter.lowercased()].joined(separator: ", ")

    /// Added to every answer of an ingest route, refusals included.
    static let responseHeaders: [(String, String)] = [
        ("Access-Control-Allow-Origin", "*"), ("Access-Control-Expose-Headers", exposedHeaders)
    ]

    /// The answer to a preflight `OPTIONS` on an ingest route (sent before any credential: a
    /// browser's preflight carries none).
    static let preflightAnswer = HTTPResponse(
        status: 200,
        headers: [
            ("Access-Control-Allow-Methods", "POST, OPTIONS"), ("Access-Control-Allow-Headers", allowedHeaders),
            ("Access-Control-Max-Age", "3600")
        ])
}
