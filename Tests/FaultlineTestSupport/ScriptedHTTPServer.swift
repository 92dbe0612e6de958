// A real HTTP/1.1 server on 127.0.0.1 whose answers a test scripts: 200, 429 with Retry-After,
// 413, 500, slowly, or never. It records every request (body gunzipped) and counts connections for
// assertions (a canary no page may reach). It listens on port 0: the kernel's port, never a race.
import FaultlineProtocol
import Foundation
import Synchronization

public final class ScriptedHTTPServer: @unchecked Sendable {
    public struct Request: Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]  // lowercased names
        public var body: Data                 // decoded if Content-Encoding: gzip
    }
    public enum Reply: Sendable {
        case status(Int, headers: [String: String] = [:], body: String = "{}")
        case slow(seconds: Double, then: Int)
        case noAnswer  // read the request, then close without answering
    }

    public let port: UInt16
    private let listener: Int32
    private let script: Mutex<@Sendable (Request) -> Reply>
    private let recorded = Mutex<[Request]>([])
    private let accepted = Atomic<Int>(0)
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
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
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
    public func dsn(key: String = "0123456789abcdef0123456789abcdef", project: String = "1") -> String {
        "http://\(key)@127.0.0.1:\(port)/\(project)"
    }

    private func acceptLoop() {
        while running.load(ordering: .relaxed) {
            let fd = accept(listener, nil, nil)
            if fd < 0 { if running.load(ordering: .relaxed) { continue } else { return } }
            accepted.wrappingAdd(1, ordering: .relaxed)
            let t = Thread { [self] in serve(fd) }
            t.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
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
            let request = Request(method: requestLine.first.map(String.init) ?? "", path: requestLine.count > 1 ? String(requestLine[1]) : "",
                                  headers: headers, body: body)
            recorded.withLock { $0.append(request) }
            let reply = script.withLock { $0 }(request)
            var status = 200, extra: [String: String] = [:], text = "{}"
            switch reply {
            case .status(let s, let h, let b): status = s; extra = h; text = b
            case .slow(let secs, let s): usleep(UInt32(secs * 1_000_000)); status = s
            case .noAnswer: return
            }
            var response = "HTTP/1.1 \(status) X\r\nContent-Length: \(text.utf8.count)\r\n"
            if !extra.keys.contains(where: { $0.lowercased() == "content-type" }) { response += "Content-Type: application/json\r\n" }
            for (k, v) in extra { response += "\(k): \(v)\r\n" }
            response += "\r\n" + text
            let bytes = Array(response.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
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
