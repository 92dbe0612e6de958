// Outbound propagation for FoundationNetworking: a URLProtocol that adds `traceparent` to
// requests made inside a trace and records each one as an `http.client` child span.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

extension Trace {
    /// Opts a session configuration into trace propagation: requests made inside a trace through
    /// a session built from it carry `traceparent` (and the caller's `tracestate`), and each becomes
    /// an `http.client` span. A header the request already has is never overwritten.
    ///
    /// What bypasses it: sessions built from other configurations (including `URLSession.shared`),
    /// requests made outside any trace, and any HTTP client that is not URLSession (libcurl, NIO).
    /// Responses are delivered whole once the request finishes (no incremental data callbacks).
    public static func propagate(on configuration: URLSessionConfiguration) {
        var classes = configuration.protocolClasses ?? []
        if !classes.contains(where: { $0 == TracingURLProtocol.self }) { classes.insert(TracingURLProtocol.self, at: 0) }
        configuration.protocolClasses = classes
    }
}

/// Registered through `Trace.propagate(on:)`.
public final class TracingURLProtocol: URLProtocol {
    private static let handledKey = "dev.faultline.trace.handled"

    /// URLSession asks `canInit` on the thread that creates the task, where the caller's task-local
    /// trace is visible, but starts loading on its own queue, where it is not: the context is handed
    /// over through this table, keyed by method and URL, first in first out.
    private static let handoff = Mutex<[String: [SpanContext]]>([:])

    private static func key(_ r: URLRequest) -> String { (r.httpMethod ?? "GET") + " " + (r.url?.absoluteString ?? "") }

    public override class func canInit(with request: URLRequest) -> Bool {
        guard property(forKey: handledKey, in: request) == nil, let scheme = request.url?.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let context = Trace.current else { return false }
        handoff.withLock { $0[key(request), default: []].append(context) }
        return true
    }

    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    private var inner: URLSessionDataTask?
    private var span: Span?

    /// One session for the requests we forward: no protocol of ours, so no loop.
    private static let forwarding: URLSession = {
        let c = URLSessionConfiguration.ephemeral
        c.protocolClasses = []
        return URLSession(configuration: c)
    }()

    public override func startLoading() {
        let context: SpanContext? = Self.handoff.withLock { t in
            let k = Self.key(request)
            guard var list = t[k], !list.isEmpty else { return nil }
            let c = list.removeFirst()
            t[k] = list.isEmpty ? nil : list
            return c
        }
        var outgoing = request
        let method = request.httpMethod ?? "GET"
        var url = request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }
        url?.query = nil; url?.fragment = nil; url?.user = nil; url?.password = nil
        let plainURL = url?.string ?? ""
        if let context {
            let span = Trace.startSpan("\(method) \(plainURL)", operation: "http.client",
                                       attributes: ["http.request.method": .string(method), "url.full": .string(plainURL)], parent: context)
            self.span = span
            if outgoing.value(forHTTPHeaderField: "traceparent") == nil {
                outgoing.setValue(span.traceparent, forHTTPHeaderField: "traceparent")
                if let state = context.tracestate, outgoing.value(forHTTPHeaderField: "tracestate") == nil {
                    outgoing.setValue(state, forHTTPHeaderField: "tracestate")
                }
            }
        }
        let mutable = (outgoing as NSURLRequest).mutableCopy() as! NSMutableURLRequest
        URLProtocol.setProperty(true, forKey: Self.handledKey, in: mutable)
        let span = self.span
        // URLProtocol is not Sendable; the client is called from the forwarding session's queue,
        // as URLSession itself calls protocols from its own queue.
        nonisolated(unsafe) let this = self
        inner = Self.forwarding.dataTask(with: mutable as URLRequest) { data, response, error in
            let `self` = this
            if let response {
                if let http = response as? HTTPURLResponse {
                    span?.setAttribute("http.response.status_code", .int(http.statusCode))
                    span?.setStatus(SpanStatus(httpStatus: http.statusCode))
                }
                self.client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            }
            if let data { self.client?.urlProtocol(self, didLoad: data) }
            if let error {
                span?.end(error: error)
                self.client?.urlProtocol(self, didFailWithError: error)
            } else {
                span?.end()
                self.client?.urlProtocolDidFinishLoading(self)
            }
        }
        inner?.resume()
    }

    public override func stopLoading() {
        inner?.cancel()
        span?.setStatus(.cancelled)
        span?.end()
    }
}
