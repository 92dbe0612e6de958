// Outgoing alert traffic through libcurl (a well-kept client for both protocols we need): a JSON
// POST to a webhook, and a message to an SMTP relay. Every transfer is bounded: connect and total
// timeouts, no redirects, only the protocol the channel allows, the response body capped.
import CCurl
import Foundation

/// The SMTP relay alerts are mailed through (`faultline serve --smtp smtp://HOST:PORT`).
public struct SMTPSettings: Sendable, Equatable {
    /// `smtp://host:port` (STARTTLS when the server offers it) or `smtps://host:port`.
    public var url: String
    public var from: String
    public var username: String?
    public var password: String?
    /// Refuse to send without TLS (STARTTLS or smtps).
    public var requireTLS = false

    public init(url: String, from: String, username: String? = nil, password: String? = nil, requireTLS: Bool = false) {
        self.url = url; self.from = from; self.username = username; self.password = password; self.requireTLS = requireTLS
    }
}

enum CurlTransfer {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let maxResponseBytes = 64 * 1024

    private static let initialised: Bool = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()

    /// Buffers a transfer's outgoing and incoming bytes (libcurl's callbacks get it as context).
    private final class Buffers {
        var outgoing: [UInt8]
        var sent = 0
        var response = Data()
        var overflowed = false
        init(_ outgoing: Data) { self.outgoing = Array(outgoing) }
    }

    private static let readCallback: fl_curl_io_callback = { buffer, size, count, context in
        guard let buffer, let context else { return 0 }
        let b = Unmanaged<Buffers>.fromOpaque(context).takeUnretainedValue()
        let n = min(size * count, b.outgoing.count - b.sent)
        b.outgoing.withUnsafeBufferPointer { src in
            UnsafeMutableRawPointer(buffer).copyMemory(from: src.baseAddress! + b.sent, byteCount: n)
        }
        b.sent += n
        return n
    }

    private static let writeCallback: fl_curl_io_callback = { buffer, size, count, context in
        guard let buffer, let context else { return 0 }
        let b = Unmanaged<Buffers>.fromOpaque(context).takeUnretainedValue()
        let n = size * count
        guard b.response.count + n <= maxResponseBytes else { b.overflowed = true; return 0 }  // aborts the transfer
        b.response.append(UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: n)
        return n
    }

    private static func withHandle<T>(timeout: Int, _ body: (UnsafeMutableRawPointer) throws -> T) throws -> T {
        guard initialised, let handle = curl_easy_init() else { throw Failure(description: "libcurl could not be initialised") }
        defer { curl_easy_cleanup(handle) }
        fl_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        fl_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 5)
        fl_curl_set_long(handle, CURLOPT_TIMEOUT, timeout)
        fl_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        return try body(handle)
    }

    private static func check(_ code: CURLcode, _ what: String) throws {
        guard code == CURLE_OK else { throw Failure(description: "\(what): \(String(cString: curl_easy_strerror(code)))") }
    }

    /// POSTs `body` as JSON; returns when the receiver answered 2xx, throws otherwise.
    static func postJSON(url: String, body: Data, timeout: Int, extraHeaders: [String] = []) throws {
        try withHandle(timeout: timeout) { h in
            let buffers = Buffers(Data())
            let context = Unmanaged.passUnretained(buffers).toOpaque()
            var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
            headers = curl_slist_append(headers, "User-Agent: faultline-alerts")
            for header in extraHeaders { headers = curl_slist_append(headers, header) }
            defer { curl_slist_free_all(headers) }
            try check(fl_curl_set_string(h, CURLOPT_URL, url), "bad URL")
            try check(fl_curl_set_string(h, CURLOPT_PROTOCOLS_STR, "http,https"), "protocols")
            fl_curl_set_list(h, CURLOPT_HTTPHEADER, headers)
            fl_curl_set_long(h, CURLOPT_POST, 1)
            let bytes = [UInt8](body)
            let status: Int = try bytes.withUnsafeBufferPointer { p in
                fl_curl_set_long(h, CURLOPT_POSTFIELDSIZE, bytes.count)
                fl_curl_set_pointer(h, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: p.baseAddress))
                fl_curl_set_callback(h, CURLOPT_WRITEFUNCTION, writeCallback)
                fl_curl_set_pointer(h, CURLOPT_WRITEDATA, context)
                let code = curl_easy_perform(h)
                var status = 0
                fl_curl_response_code(h, &status)
                // A capped response still tells its status; anything else failed is a failure.
                if code != CURLE_OK && !(code == CURLE_WRITE_ERROR && buffers.overflowed && status > 0) {
                    try check(code, "POST \(url)")
                }
                return status
            }
            guard (200..<300).contains(status) else {
                let text = String(decoding: buffers.response.prefix(200), as: UTF8.self)
                throw Failure(description: "POST \(url): HTTP \(status) \(AlertMessage.oneLine(text))")
            }
        }
    }

    /// Sends `message` (RFC 5322) from `settings.from` to `recipient` through the relay.
    static func mail(_ settings: SMTPSettings, to recipient: String, message: Data, timeout: Int) throws {
        try withHandle(timeout: timeout) { h in
            let buffers = Buffers(message)
            let context = Unmanaged.passUnretained(buffers).toOpaque()
            let recipients = curl_slist_append(nil, "<\(recipient)>")
            defer { curl_slist_free_all(recipients) }
            try check(fl_curl_set_string(h, CURLOPT_URL, settings.url), "bad SMTP URL")
            try check(fl_curl_set_string(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps"), "protocols")
            // Credentials never go in the clear: with them, TLS is required (a stripped STARTTLS fails).
            let requireTLS = settings.requireTLS || settings.username != nil || settings.password != nil
            fl_curl_set_long(h, CURLOPT_USE_SSL, requireTLS ? Int(CURLUSESSL_ALL.rawValue) : Int(CURLUSESSL_TRY.rawValue))
            if let u = settings.username { fl_curl_set_string(h, CURLOPT_USERNAME, u) }
            if let p = settings.password { fl_curl_set_string(h, CURLOPT_PASSWORD, p) }
            fl_curl_set_string(h, CURLOPT_MAIL_FROM, "<\(settings.from)>")
            fl_curl_set_list(h, CURLOPT_MAIL_RCPT, recipients)
            fl_curl_set_callback(h, CURLOPT_READFUNCTION, readCallback)
            fl_curl_set_pointer(h, CURLOPT_READDATA, context)
            fl_curl_set_long(h, CURLOPT_UPLOAD, 1)
            fl_curl_set_long(h, CURLOPT_INFILESIZE, buffers.outgoing.count)
            try withExtendedLifetime(buffers) { try check(curl_easy_perform(h), "SMTP \(settings.url)") }
        }
    }
}
