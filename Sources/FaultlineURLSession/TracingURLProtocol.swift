// Outbound propagation for FoundationNetworking: a URLProtocol that adds `traceparent` to
// requests made inside a trace and records each one as an `http.client` child span.
//
// A module of its own (product FaultlineURLSession) so that only apps that opt into it link
// FoundationNetworking: the SDK sends through libcurl itself (Faultline/Transport/CurlClient.swift),
// and FoundationNetworking's load is resident memory and start-up time in every process that links it.
import Faultline
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
        _ = TracingURLProtocol.forwarding  // made here, never on URLSession's own queue
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
            scheme == "http" || scheme == "https", let context = Trace.currentContext
        else { return false }
        handoff.withLock { $0[key(request), default: []].append(context) }
        return true
    }

    public override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    private let inner = Mutex<URLSessionDataTask?>(nil)
    private var span: Span?

    /// One session for the requests we forward: a configuration of its own (without this
    /// protocol), and the handled mark on each request besides, so nothing loops.
    static let forwarding = URLSession(configuration: .ephemeral)

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
            let span = Trace.startUnboundSpan(
                "\(method) \(plainURL)", operation: "http.client",
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
        let forwarded = mutable as URLRequest
        // Created and started off URLSession's work queue (which runs this method): creating a
        // task synchronously enters the sessions' shared queue, and doing that from it deadlocks.
        nonisolated(unsafe) let this = self
        DispatchQueue.global().async {
            let task = Self.forwarding.dataTask(with: forwarded) { data, response, error in
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
            this.inner.withLock { $0 = task }
            task.resume()
        }
    }

    public override func stopLoading() {
        nonisolated(unsafe) let running = inner.withLock { $0 }
        DispatchQueue.global().async { running?.cancel() }
        span?.setStatus(.cancelled)
        span?.end()
    }
}
