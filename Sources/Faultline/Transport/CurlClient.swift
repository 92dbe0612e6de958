// The SDK's HTTP client: one request at a time over libcurl, whose answer is bounded (HTTPAnswer:
// the status, a few headers, at most 64 KiB of body), which never follows a redirect and never
// decompresses, and whose request in flight another thread can cancel at once (at exit).
//
// Why libcurl itself and not URLSession (issue 29, items 4 and 12). On Linux, URLSession is
// swift-corelibs-foundation's FoundationNetworking, and it cannot bound what a server sends back
// (read in its NativeProtocol.swift and HTTP/HTTPURLProtocol.swift, as Swift 6.3 ships them):
// - a data task with a completion handler concatenates the whole body in memory, so a server's
//   gigabyte answer becomes the app's gigabytes (issue 29 has the figures);
// - it always turns libcurl's automatic decompression on (CURLOPT_ACCEPT_ENCODING ""), whatever the
//   request says, so a gzip bomb is inflated whole;
// - a delegate sees the body through didReceive(data:), but that call and cancel() are both queued
//   (delegate queue, work queue) while libcurl keeps reading: a cap there does not bound memory;
// - the body of a 301–308 answer is appended to `lastRedirectBody`, whole, before any delegate is
//   asked whether to follow it, so nothing an app can do bounds a redirect's body;
// - a followed 307/308 is re-sent with every header, X-Sentry-Auth included, to whatever origin
//   Location names (the test server saw the POSTs arrive there without their bodies).
// FoundationNetworking is itself built on libcurl, so the same libcurl.so.4 is already loaded in
// every process that links the SDK: calling it directly adds no library at run time, only its
// headers (libcurl4-openssl-dev) at build time. libcurl does none of the above unless asked:
// CURLOPT_FOLLOWLOCATION is off and no CURLOPT_ACCEPT_ENCODING is set, so bodies arrive as sent;
// a write callback that refuses more than the cap ends the transfer and closes the connection.
import CCurl
import FaultlineHashing
import FaultlineProtocol
import Foundation
import Synchronization

final class CurlClient: @unchecked Sendable {
    /// libcurl's global set-up, once per process, after OpenSSL's own without its atexit clean-up
    /// (CryptoLibrary: an exit during this set-up tore OpenSSL down under it).
    static let libraryReady: Bool = {
        _ = CryptoLibrary.ready
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// Both live as long as the client: the multi handle keeps the connection to the server open
    /// between requests (one TLS handshake per flush, not per envelope).
    private let multi: UnsafeMutableRawPointer?
    private let easy: UnsafeMutableRawPointer?
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    /// One request at a time; `flight` is what another thread may look at meanwhile (cancel).
    private let serial = Mutex<Void>(())
    private struct Flight { var active = false; var cancelled = false }
    private let flight = Mutex(Flight())

    init() {
        guard Self.libraryReady else { multi = nil; easy = nil; return }
        multi = curl_multi_init()
        easy = curl_easy_init()
    }

    deinit {
        if let easy { curl_easy_cleanup(easy) }
        if let multi { curl_multi_cleanup(multi) }
        errorText.deallocate()
    }

    /// Ends the request in flight, if any, at once (its perform returns "cancelled", or the answer
    /// when its status and headers had already arrived). Any thread.
    func cancel() {
        let wake = flight.withLock { f -> Bool in
            guard f.active else { return false }
            f.cancelled = true
            return true
        }
        if wake, let multi { curl_multi_wakeup(multi) }
    }

    /// Sends `request` and waits for the answer (at most `request.timeout`, plus a second's
    /// backstop). An answer whose body was cut off at the cap still counts as its status.
    func perform(_ request: HTTPRequest) -> Result<HTTPAnswer, HTTPFailure> {
        serial.withLock { _ in performAlone(request) }
    }

    private func performAlone(_ request: HTTPRequest) -> Result<HTTPAnswer, HTTPFailure> {
        guard let multi, let easy else { return .failure(HTTPFailure(description: "libcurl could not be initialised")) }
        curl_easy_reset(easy)
        errorText[0] = 0
        let exchange = Exchange()
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        var headers: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers {
            // A line break in a value would start a header of its own: never sent as one.
            let line = "\(name): \(value)".map { $0.isNewline ? " " : String($0) }.joined()
            headers = curl_slist_append(headers, line)
        }
        // No 100-continue round trip before a large body; and ask for the body as it is (we would
        // not inflate it anyway: a compressed answer is kept compressed, capped, and not parsed).
        headers = curl_slist_append(headers, "Expect:")
        headers = curl_slist_append(headers, "Accept-Encoding: identity")
        defer { curl_slist_free_all(headers) }

        guard fl_curl_set_string(easy, CURLOPT_URL, request.url.absoluteString) == CURLE_OK else {
            return .failure(HTTPFailure(description: "libcurl refused the URL \(request.url)"))
        }
        fl_curl_set_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        fl_curl_set_long(easy, CURLOPT_NOSIGNAL, 1)
        // Explicit, though it is libcurl's default: a 3xx is the answer (HTTPTransport.classify),
        // so the body and X-Sentry-Auth never go anywhere but the DSN's origin.
        fl_curl_set_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        fl_curl_set_long(easy, CURLOPT_TIMEOUT_MS, Int(request.timeout * 1000))
        fl_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(min(request.timeout, 10) * 1000))
        fl_curl_set_pointer(easy, CURLOPT_ERRORBUFFER, errorText)
        fl_curl_set_string(easy, CURLOPT_USERAGENT, "\(Faultline.sdkName)/\(FaultlineVersion.string)")
        fl_curl_set_list(easy, CURLOPT_HTTPHEADER, headers)
        fl_curl_set_callback(easy, CURLOPT_HEADERFUNCTION, Self.headerLine)
        fl_curl_set_pointer(easy, CURLOPT_HEADERDATA, context)
        fl_curl_set_callback(easy, CURLOPT_WRITEFUNCTION, Self.bodyBytes)
        fl_curl_set_pointer(easy, CURLOPT_WRITEDATA, context)

        // The body's bytes must stay where they are until the transfer ends.
        let body = request.body ?? Data()
        let storage = body.isEmpty ? Data([0]) : body
        let ended: TransferEnd = storage.withUnsafeBytes { raw in
            if request.body != nil {
                fl_curl_set_long(easy, CURLOPT_POST, 1)
                fl_curl_set_long(easy, CURLOPT_POSTFIELDSIZE, body.count)
                fl_curl_set_pointer(easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
                if request.method != "POST" { fl_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method) }
            } else if request.method == "GET" {
                fl_curl_set_long(easy, CURLOPT_HTTPGET, 1)
            } else {
                fl_curl_set_string(easy, CURLOPT_CUSTOMREQUEST, request.method)
            }
            return withExtendedLifetime(exchange) { run(easy, on: multi, timeout: request.timeout) }
        }
        if exchange.headersComplete {
            let whole: Bool
            if case .libcurl(let code) = ended { whole = code == CURLE_OK && !exchange.bodyOverflowed } else { whole = false }
            return .success(HTTPAnswer(status: exchange.status, headers: exchange.headers, body: exchange.body, bodyComplete: whole))
        }
        switch ended {
        case .stopped(let why): return .failure(HTTPFailure(description: why))
        case .libcurl(let code):
            let detail = errorText[0] != 0 ? String(cString: errorText) : String(cString: curl_easy_strerror(code))
            return .failure(HTTPFailure(description: code == CURLE_OK ? "no HTTP answer" : detail))
        }
    }

    /// How a transfer ended: libcurl finished it (with this code), or we stopped it (why).
    private enum TransferEnd {
        case libcurl(CURLcode)
        case stopped(String)
    }

    /// Drives one transfer on the multi handle until it ends, is cancelled, or overruns its time.
    private func run(_ easy: UnsafeMutableRawPointer, on multi: UnsafeMutableRawPointer, timeout: Double) -> TransferEnd {
        flight.withLock { $0 = Flight(active: true, cancelled: false) }
        defer { flight.withLock { $0.active = false } }
        guard curl_multi_add_handle(multi, easy) == CURLM_OK else { return .stopped("libcurl could not start the request") }
        // Removing the handle ends a transfer still running and closes its connection (an
        // unfinished answer is never reused), so what was not read is never read.
        defer { curl_multi_remove_handle(multi, easy) }
        // libcurl's own CURLOPT_TIMEOUT_MS normally ends it first: this is the backstop.
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64((timeout + 1) * 1e9)
        var running: Int32 = 1
        while true {
            guard curl_multi_perform(multi, &running) == CURLM_OK else { return .stopped("libcurl failed while sending") }
            if running == 0 { break }
            if flight.withLock({ $0.cancelled }) { return .stopped("cancelled") }
            let now = DispatchTime.now().uptimeNanoseconds
            if now >= deadline { return .stopped("timed out after \(timeout) s") }
            let wait = Int32(min(1000, (deadline - now) / 1_000_000 + 1))
            _ = curl_multi_poll(multi, nil, 0, wait, nil)  // returns early on traffic or cancel()
        }
        var code = CURLE_OK
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE && message.pointee.easy_handle == easy { code = message.pointee.data.result }
        }
        return .libcurl(code)
    }

    /// What libcurl's callbacks collect during one transfer.
    private final class Exchange {
        var status = 0
        var headers: [String: String] = [:]
        /// The final (not 1xx) answer's header block has ended: from here on it is an answer.
        var headersComplete = false
        var body = Data()
        var bodyOverflowed = false
    }

    /// Runs on the requesting thread inside libcurl: one header line (status line included, CRLF
    /// included). Keeps the status and HTTPAnswer.keptHeaders of the final answer, capped.
    private static let headerLine: fl_curl_io_callback = { buffer, size, count, context in
        let n = size * count
        guard let buffer, let context else { return n }
        let e = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        if e.headersComplete { return n }  // chunked trailers after the body: not read
        let line = String(decoding: UnsafeRawBufferPointer(start: buffer, count: n), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new answer begins (after a 1xx): only the last one's headers count.
            e.status = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap { Int($0) } ?? 0
            e.headers = [:]
        } else if line == "\r\n" || line == "\n" {
            if e.status >= 200 { e.headersComplete = true }
        } else if let colon = line.firstIndex(of: ":") {
            let name = line[..<colon].lowercased()
            if HTTPAnswer.keptHeaders.contains(name) {
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
                e.headers[name] = String(value.prefix(HTTPAnswer.headerValueCap))
            }
        }
        return n
    }

    /// Runs on the requesting thread inside libcurl: body bytes, as they arrived (never inflated).
    /// Keeps up to HTTPAnswer.bodyCap; past it, returns short, which ends the transfer.
    private static let bodyBytes: fl_curl_io_callback = { buffer, size, count, context in
        let n = size * count
        guard let buffer, let context else { return 0 }
        let e = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        let room = HTTPAnswer.bodyCap - e.body.count
        let kept = min(n, room)
        if kept > 0 { e.body.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: kept) }
        if kept < n { e.bodyOverflowed = true; return 0 }  // CURLE_WRITE_ERROR: the rest is never read
        return n
    }
}
