// A real HTTP/1.1 server on 127.0.0.1 whose answers a test scripts: 200, 429 with Retry-After,
// 413, 500, a redirect, slowly, never, or with a hostile body (endless, or any bytes such as a gzip
// bomb). It records every request (body gunzipped), counts connections for assertions (a canary no
// page may reach) and the body bytes it got out before a client hung up. It listens on port 0: the
// kernel's port, never a race.
import FaultlineProtocol
import Foundation
import Synchronization
import FaultlineFiles

public final class ScriptedHTTPServer: @unchecked Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]  // lowercased names
        public var body: Data  // decoded if Content-Encoding: gzip
    }
    public enum Reply: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "{}")
        case slow(seconds: Double, then: Int)
        case noAnswer  // read the request, then close without answering
        /// `body` as given (any bytes, say a gzip bomb) with its Content-Length, written until done
        /// or the client hangs up.
        case bytes(Int, headers: [String: String] = [:], body: Data)
        /// A body that never ends: `chunk` again and again until the client hangs up. Chunked, or
        /// with `Content-Length: declaredLength` when given (then it ends after that many bytes).
        case endless(Int, headers: [String: String] = [:], chunk: Data, declaredLength: Int64? = nil)
    }

    public let port: UInt16
    private let listener: Int32
    private let script: Mutex<@Sendable (Request) -> Reply>
    private let recorded = Mutex<[Request]>([])
    private let accepted = Atomic<Int>(0)
    private let bodyBytes = Atomic<Int>(0)
    private let serving = NSCondition()
    private var openConnections = 0  // under `serving`
    private let running = Atomic<Bool>(true)

    public init(script: @escaping @Sendable (Request) -> Reply = { _ in .status(200) }) throws {
        self.script = Mutex(script)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw NSError(domain: "ScriptedHTTPServer", code: Int(errno)) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
        self.port = UInt16(bigEndian: addr.sin_port)
        let t = Thread { [self] in acceptLoop() }
        t.start()
    }

    deinit { stop() }

    public func stop() {
        if running.exchange(false, ordering: .relaxed) { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
    }

    public func setScript(_ s: @escaping @Sendable (Request) -> Reply) { script.withLock { $0 = s } }
    public var requests: [Request] { recorded.withLock { $0 } }
    /// Connections accepted so far, whether or not a whole request followed.
    public var connectionCount: Int { accepted.load(ordering: .relaxed) }
    /// Body bytes of `.bytes` and `.endless` replies the kernel took before the client hung up
    /// (what the client read, plus at most the two sockets' buffers).
    public var bodyBytesSent: Int { bodyBytes.load(ordering: .relaxed) }

    /// Waits until every connection accepted so far has ended (the client closed it, or it failed).
    /// False if some were still open after `timeout` seconds.
    public func waitForConnectionsToClose(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        serving.lock()
        defer { serving.unlock() }
        while openConnections > 0 { if !serving.wait(until: deadline) { return openConnections == 0 } }
        return true
    }
    public func dsn(key: String = "0123456789abcdef0123456789abcdef", project: String = "1") -> String {
        "http://\(key)@127.0.0.1:\(port)/\(project)"
    }

    private func acceptLoop() {
        while running.load(ordering: .relaxed) {
            let fd = accept(listener, nil, nil)
            if fd < 0 { if running.load(ordering: .relaxed) { continue } else { return } }
            accepted.wrappingAdd(1, ordering: .relaxed)
            serving.lock(); openConnections += 1; serving.unlock()
            let t = Thread { [self] in
                serve(fd)
                serving.lock(); openConnections -= 1; serving.broadcast(); serving.unlock()
            }
            t.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))  // a client that stops reading
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {  // keep-alive: several requests per connection
            var headerEnd: Int?
            while headerEnd == nil {
                if let r = find(buffer, [13, 10, 13, 10]) { headerEnd = r; break }
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
            var headers: [String: String] = [:]
            for l in lines { if let c = l.firstIndex(of: ":") { headers[l[..<c].lowercased()] = l[l.index(after: c)...].trimmingCharacters(in: .whitespaces) } }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = headerEnd! + 4
            while buffer.count < bodyStart + length {
                let n = recv(fd, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer.append(contentsOf: chunk[0..<n])
            }
            var body = Data(buffer[bodyStart..<(bodyStart + length)])
            buffer.removeFirst(bodyStart + length)
            if headers["content-encoding"] == "gzip", let g = ScriptedHTTPServer.gunzip(body) { body = g }
            let request = Request(
                method: requestLine.first.map(String.init) ?? "", path: requestLine.count > 1 ? String(requestLine[1]) : "",
                headers: headers, body: body)
            recorded.withLock { $0.append(request) }
            let reply = script.withLock { $0 }(request)
            var status = 200, extra: [String: String] = [:], text = "{}"
            switch reply {
            case .status(let s, let h, let b): status = s; extra = h; text = b
            case .slow(let secs, let s): usleep(UInt32(secs * 1_000_000)); status = s
            case .noAnswer: return
            case .bytes(let s, let h, let body):
                guard sendHead(fd, status: s, headers: h, framing: "Content-Length: \(body.count)"),
                    sendBody(fd, body)
                else { return }
                continue
            case .endless(let s, let h, let chunk, let declared):
                guard !chunk.isEmpty else { return }
                if let declared {
                    guard sendHead(fd, status: s, headers: h, framing: "Content-Length: \(declared)") else { return }
                    var left = declared
                    while left > 0 {
                        guard sendBody(fd, chunk.prefix(Int(min(left, Int64(chunk.count))))) else { return }
                        left -= Int64(min(left, Int64(chunk.count)))
                    }
                    continue
                }
                guard sendHead(fd, status: s, headers: h, framing: "Transfer-Encoding: chunked") else { return }
                var framed = Data(String(chunk.count, radix: 16).utf8) + Data("\r\n".utf8)
                framed += chunk + Data("\r\n".utf8)
                while sendBody(fd, framed) {}
                return
            }
            var response = "HTTP/1.1 \(status) X\r\nContent-Length: \(text.utf8.count)\r\n"
            if !extra.keys.contains(where: { $0.lowercased() == "content-type" }) { response += "Content-Type: application/json\r\n" }
            for (k, v) in extra { response += "\(k): \(v)\r\n" }
            response += "\r\n" + text
            let bytes = Array(response.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    private func sendHead(_ fd: Int32, status: Int, headers: [String: String], framing: String) -> Bool {
        var head = "HTTP/1.1 \(status) X\r\n\(framing)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        return sendAll(fd, Data((head + "\r\n").utf8))
    }

    /// Body bytes, counted as the kernel takes them; false once the client is gone.
    private func sendBody(_ fd: Int32, _ bytes: Data) -> Bool {
        sendAll(fd, bytes) { bodyBytes.wrappingAdd($0, ordering: .relaxed) }
    }

    private func sendAll(_ fd: Int32, _ bytes: Data, sent: (Int) -> Void = { _ in }) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = retryingOnInterrupt { send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return false }
                sent(n)
                offset += n
            }
            return true
        }
    }

    private func find(_ hay: [UInt8], _ needle: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        for i in 0...(hay.count - needle.count) where hay[i] == needle[0] && Array(hay[i..<(i + needle.count)]) == needle { return i }
        return nil
    }

    public static func gunzip(_ data: Data) -> Data? {
        try? Inflate.inflate(data, limit: 256 * 1024 * 1024)
    }
}
