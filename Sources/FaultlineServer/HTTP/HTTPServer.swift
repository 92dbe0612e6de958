// HTTP over libmicrohttpd: a thread per connection (or a pool with epoll); bodies are buffered per request
// up to the handler's limit, within the server's body budget (BodyBudget), and then handed to an
// `HTTPHandling` as one `HTTPRequest`.
import Foundation
import CMicroHTTPD
import CFaultlineHTTPShim

public final class HTTPServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var host: String = "127.0.0.1"
        public var port: UInt16 = 0
        /// 0: a thread per connection (up to `connectionLimit`); N: a pool of N threads with epoll.
        public var threads: UInt32 = 0
        /// Connections open at once; further ones are accepted and closed at once.
        public var connectionLimit: UInt32 = 1024
        /// Connections open at once from one IP address, and requests in flight per client that a
        /// trusted proxy names (0 = no limit).
        public var perIPConnectionLimit: UInt32 = 16
        /// Peers whose `X-Forwarded-For` / `Forwarded` names the client; their own connections are
        /// not capped per address.
        public var trustedProxies = TrustedProxies()
        /// Inactivity after which a connection is closed.
        public var timeoutSeconds: UInt32 = 30
        /// From accept (or the end of the previous request) to the end of the headers: a client
        /// still sending headers then is disconnected, however steadily it trickles (slowloris).
        public var headerDeadlineSeconds: UInt32 = 10
        /// Per-connection memory for headers; a request whose headers exceed it gets 431.
        public var connectionMemoryLimit: Int = 64 * 1024
        /// After the headers, every `bodyProgressWindowSeconds` must bring this many bytes per
        /// second of body until it is complete, or the connection is closed (0 = no rule).
        public var minBodyBytesPerSecond: UInt32 = 1024
        public var bodyProgressWindowSeconds: UInt32 = 10
        /// Body bytes buffered at once, all clients (0 = no limit); BodyBudget says which count.
        public var bodyBufferBytes: Int = 192 * 1024 * 1024
        /// Body bytes buffered at once per client address; at least the largest body a route takes.
        public var bodyBufferBytesPerAddress: Int = 64 * 1024 * 1024
        public init() {}
    }

    public enum StartError: Error, CustomStringConvertible {
        case cannotListen(host: String, port: UInt16, errno: Int32)
        public var description: String {
            switch self {
            case .cannotListen(let h, let p, let e):
                return "cannot listen on \(h):\(p): \(String(cString: strerror(e)))"
            }
        }
    }

    let handler: HTTPHandling
    private var daemon: OpaquePointer?
    public private(set) var port: UInt16 = 0
    private(set) var trustedProxies = TrustedProxies()
    private(set) var bodyBudget = BodyBudget(serverBytes: 0, perAddressBytes: 0)
    private(set) var forwardedClients = ForwardedClientCap(limit: 0)

    public init(handler: HTTPHandling) { self.handler = handler }

    public func start(_ options: Options) throws {
        let me = Unmanaged.passUnretained(self).toOpaque()
        trustedProxies = options.trustedProxies
        bodyBudget = BodyBudget(serverBytes: options.bodyBufferBytes, perAddressBytes: options.bodyBufferBytesPerAddress)
        forwardedClients = ForwardedClientCap(limit: Int(options.perIPConnectionLimit))
        errno = 0
        let proxies = options.trustedProxies.networks.map { faultline_http_network(network: $0.network, mask: $0.mask) }
        let started = proxies.withUnsafeBufferPointer { proxyList -> OpaquePointer? in
            let limits = faultline_http_limits(
                threads: options.threads, connection_limit: options.connectionLimit,
                per_ip_connection_limit: options.perIPConnectionLimit,
                trusted_proxies: proxyList.baseAddress, trusted_proxy_count: UInt32(proxyList.count),
                idle_timeout_seconds: options.timeoutSeconds,
                header_deadline_seconds: options.headerDeadlineSeconds,
                connection_memory_limit: options.connectionMemoryLimit,
                min_body_bytes_per_second: options.minBodyBytesPerSecond,
                body_window_seconds: options.bodyProgressWindowSeconds)
            return faultline_http_start(options.host, options.port, limits, faultlineAccessHandler, me, faultlineRequestCompleted, me)
        }
        guard let d = started else {
            throw StartError.cannotListen(host: options.host, port: options.port, errno: errno)
        }
        daemon = d
        port = faultline_http_port(d)
    }

    /// Stops accepting and waits for the pool threads to finish their current requests.
    public func stop() {
        if let d = daemon { faultline_http_stop(d); daemon = nil }
    }

    /// Connections cut off for not finishing their headers in time (logged by /health).
    public var headerDeadlineDisconnects: UInt64 { daemon.map { faultline_http_deadline_disconnects($0) } ?? 0 }

    /// Connections cut off for a body arriving slower than the body-progress rule.
    public var bodyProgressDisconnects: UInt64 { daemon.map { faultline_http_body_progress_disconnects($0) } ?? 0 }

    /// Connections refused at accept because their address had its share open.
    public var perIPRefusals: UInt64 { daemon.map { faultline_http_per_ip_refusals($0) } ?? 0 }

    /// Requests refused at their headers: the server's body budget spent (503), an address's (429),
    /// a client behind a trusted proxy with its share of requests in flight (429).
    public var bodyBudgetRefusals: (server: Int64, address: Int64) { bodyBudget.refusals }
    public var forwardedClientRefusals: Int64 { forwardedClients.refusals }

    deinit { stop() }
}

/// Per-request state kept in libmicrohttpd's `*con_cls` between callbacks.
final class HTTPRequestState {
    let method: String
    let path: String
    var headers: [String: String] = [:]
    var query: [String: String] = [:]
    var queryValues: [String: [String]] = [:]
    var queryValueCount = 0
    var body = Data()
    var limit: Int = 0
    var overLimit = false
    /// Two Content-Length headers with different values (RFC 9110 §8.6: reject the message).
    var conflictingLength = false
    var clientAddress = ""
    /// A trusted proxy named the client (so the accept-time per-address cap did not see it).
    var forwarded = false
    /// What the body has reserved of the server's body budget (released when the request ends).
    var claim: BodyBudget.Claim?
    /// Added to whatever answers this request (`HTTPHandling.responseHeaders`).
    var responseHeaders: [(String, String)] = []
    /// Counted in the server's ForwardedClientCap (left when the request ends).
    var countedAsForwarded = false
    init(method: String, path: String) { self.method = method; self.path = path }
}

/// Collects headers and query arguments (C callback; plain global function for Swift 6).
func faultlineCollectValue(
    _ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let state = Unmanaged<HTTPRequestState>.fromOpaque(cls).takeUnretainedValue()
    let k = String(cString: key)
    let v = value.map { String(cString: $0) } ?? ""
    if kind == MHD_ValueKind.HEADER_KIND {
        let name = k.lowercased()
        // libmicrohttpd frames the body by the first Content-Length; a second, different one
        // would let this layer and it disagree about where the request ends.
        if name == "content-length", let old = state.headers[name], old.trimmingCharacters(in: .whitespaces) != v.trimmingCharacters(in: .whitespaces) {
            state.conflictingLength = true
        }
        if let old = state.headers[name], name == "x-forwarded-for" || name == "forwarded" {
            state.headers[name] = old + ", " + v  // each proxy may add a line of its own
        } else if state.headers[name] == nil {
            state.headers[name] = v
        }
    } else {
        state.query[k] = v
        if state.queryValueCount < 10_000 {
            state.queryValueCount += 1
            state.queryValues[k, default: []].append(v)
        }
    }
    return MHD_Result.YES
}

/// libmicrohttpd's access handler: first call sets up state, later calls append body chunks,
/// the final call (no more data) runs the handler and queues its response.
func faultlineAccessHandler(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let conCls else { return MHD_Result.NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    if conCls.pointee == nil {
        let state = HTTPRequestState(
            method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/")
        let opaque = Unmanaged.passRetained(state).toOpaque()
        conCls.pointee = opaque
        MHD_get_connection_values(connection, MHD_ValueKind.HEADER_KIND, faultlineCollectValue, opaque)
        MHD_get_connection_values(connection, MHD_ValueKind.GET_ARGUMENT_KIND, faultlineCollectValue, opaque)
        faultline_http_headers_complete(connection)
        let peer = faultline_http_peer_address(connection)
        state.clientAddress = server.trustedProxies.clientAddress(
            peer: peer, forwardedFor: state.headers["x-forwarded-for"], forwarded: state.headers["forwarded"])
        state.forwarded = state.clientAddress != TrustedProxies.text(peer)
        state.responseHeaders = server.handler.responseHeaders(method: state.method, path: state.path)
        if let refusal = server.refusalAtHeaders(state) {
            // Refused before reading the body: libmicrohttpd sends this and closes the connection.
            state.overLimit = true  // discard whatever body follows
            faultline_http_body_complete(connection)
            return queue(refusal, adding: state.responseHeaders, on: connection)
        }
        return MHD_Result.YES
    }
    let state = Unmanaged<HTTPRequestState>.fromOpaque(conCls.pointee!).takeUnretainedValue()
    if let size = uploadDataSize, size.pointee > 0 {
        faultline_http_body_progress(connection, size.pointee)
        if !state.overLimit, let data = uploadData {
            if state.body.count + size.pointee > state.limit {
                state.overLimit = true
                state.body = Data()
                if let claim = state.claim { server.bodyBudget.release(claim) }
            } else if let claim = state.claim, server.bodyBudget.extend(claim, toBodyBytes: state.body.count + size.pointee) != nil {
                // A body without Content-Length outgrew the budget: no response can be queued
                // in the middle of a body, so the connection is closed.
                return MHD_Result.NO
            } else {
                data.withMemoryRebound(to: UInt8.self, capacity: size.pointee) { state.body.append($0, count: size.pointee) }
            }
        }
        size.pointee = 0
        return MHD_Result.YES
    }
    faultline_http_body_complete(connection)
    let response: HTTPResponse
    if state.overLimit {
        response = .detail(413, "request body larger than \(state.limit) bytes")
    } else {
        let request = HTTPRequest(
            method: state.method, path: state.path, query: state.query, queryValues: state.queryValues,
            headers: state.headers, body: state.body, clientAddress: state.clientAddress)
        response = PhaseClock.time(.httpHandler) { server.handler.handle(request) }
    }
    return queue(response, adding: state.responseHeaders, on: connection)
}

extension HTTPServer {
    /// Everything decided from the request line and headers, in order: framing, authentication
    /// (the handler's preflight), the route's body limit, then the per-client and body budgets —
    /// so an anonymous client learns nothing about the budgets, and no refusal waits for a body.
    fileprivate func refusalAtHeaders(_ state: HTTPRequestState) -> HTTPResponse? {
        if state.conflictingLength { return .detail(400, "conflicting Content-Length headers") }
        state.limit = handler.bodyLimit(method: state.method, path: state.path)
        let head = HTTPRequest(
            method: state.method, path: state.path, query: state.query, queryValues: state.queryValues, headers: state.headers,
            body: Data(), clientAddress: state.clientAddress)
        if let refusal = handler.preflight(head) { return refusal }
        let declared = state.headers["content-length"].flatMap(ContentLength.parse)
        if let cl = declared, cl > UInt64(max(0, state.limit)) {
            return .detail(413, "request body of \(cl) bytes is larger than \(state.limit) bytes")
        }
        if state.forwarded {
            guard forwardedClients.enter(state.clientAddress) else {
                return .detail(429, "too many requests in flight from \(state.clientAddress)", headers: [("Retry-After", "10")])
            }
            state.countedAsForwarded = true
        }
        let claim = BodyBudget.Claim(address: state.clientAddress)
        state.claim = claim
        if let cl = declared, cl > 0 {
            switch bodyBudget.extend(claim, toBodyBytes: Int(cl)) {
            case .server?: return .detail(503, "the server is buffering as many request bodies as it takes; try again", headers: [("Retry-After", "10")])
            case .address?: return .detail(429, "too many request bytes in flight from \(state.clientAddress)", headers: [("Retry-After", "10")])
            case nil: state.body.reserveCapacity(Int(cl))
            }
        }
        return nil
    }

    /// Returns what a request held of the per-client caps and the body budget.
    fileprivate func release(_ state: HTTPRequestState) {
        if let claim = state.claim { bodyBudget.release(claim) }
        if state.countedAsForwarded {
            forwardedClients.leave(state.clientAddress)
            state.countedAsForwarded = false
        }
    }
}

private func queue(_ response: HTTPResponse, adding extraHeaders: [(String, String)], on connection: OpaquePointer) -> MHD_Result {
    var mhdResponse: OpaquePointer?
    switch response.body {
    case .data(let data):
        mhdResponse = data.withUnsafeBytes { raw in
            MHD_create_response_from_buffer(raw.count, UnsafeMutableRawPointer(mutating: raw.baseAddress), MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
    case .file(let path, let size):
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            mhdResponse = MHD_create_response_from_fd64(UInt64(size), fd)
            if mhdResponse == nil { close(fd) }
        }
    }
    guard let r = mhdResponse else {
        let fallback = MHD_create_response_from_buffer(0, nil, MHD_ResponseMemoryMode.RESPMEM_PERSISTENT)
        defer { MHD_destroy_response(fallback) }
        return MHD_queue_response(connection, 500, fallback)
    }
    for (name, value) in response.headers + extraHeaders { MHD_add_response_header(r, name, value) }
    let result = MHD_queue_response(connection, UInt32(response.status), r)
    MHD_destroy_response(r)
    return result
}

/// Frees the per-request state (MHD_OPTION_NOTIFY_COMPLETED).
func faultlineRequestCompleted(
    _ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_RequestTerminationCode
) {
    if let connection { faultline_http_request_finished(connection) }
    guard let cls, let conCls, let p = conCls.pointee else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
    server.release(Unmanaged<HTTPRequestState>.fromOpaque(p).takeUnretainedValue())
    Unmanaged<HTTPRequestState>.fromOpaque(p).release()
    conCls.pointee = nil
}
