// A raw HTTP/1.1 client over POSIX sockets, so tests can send exactly the bytes they mean (bad
// lengths, huge headers, half-closed connections) and see exactly what comes back.
import Foundation
import FaultlineProtocol

public enum RawHTTP {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public init(status: Int, headers: [String: String], body: Data) {
            self.status = status; self.headers = headers; self.body = body
        }
        public var text: String { String(decoding: body, as: UTF8.self) }
        public var json: JSONValue? { try? JSONValue.parse(body) }
    }

    public static func send(
        port: UInt16, method: String, path: String, headers: [String: String] = [:], body: Data = Data(),
        contentLength: Int? = nil
    ) -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        head += "Content-Length: \(contentLength ?? body.count)\r\n\r\n"
        return sendRaw(port: port, Data(head.utf8) + body)
    }

    /// Sends bytes and reads until the server closes (or the timeout passes).
    public static func sendRaw(port: UInt16, _ bytes: Data, halfClose: Bool = false, timeoutSeconds: Int = 30) -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0)
        defer { close(fd) }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { return Response(status: -1, headers: [:], body: Data()) }
        _ = bytes.withUnsafeBytes { raw -> Int in
            var off = 0
            while off < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + off, raw.count - off, Int32(MSG_NOSIGNAL))
                if n <= 0 { break }
                off += n
            }
            return off
        }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        var data = Data()
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n <= 0 { break }
            data.append(buf, count: n)
        }
        return parse(data)
    }

    public static func parse(_ data: Data) -> Response {
        guard let split = data.range(of: Data("\r\n\r\n".utf8)) else { return Response(status: -1, headers: [:], body: data) }
        let head = String(decoding: data[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? -1
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            let kv = line.split(separator: ":", maxSplits: 1)
            if kv.count == 2 { headers[kv[0].lowercased()] = kv[1].trimmingCharacters(in: .whitespaces) }
        }
        var body = Data(data[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: body)
    }

    public static func dechunk(_ d: Data) -> Data {
        var out = Data(); var pos = d.startIndex
        while let nl = d.range(of: Data("\r\n".utf8), in: pos..<d.endIndex) {
            let sizeText = String(decoding: d[pos..<nl.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText, radix: 16), size > 0 else { break }
            let start = nl.upperBound
            guard start + size <= d.endIndex else { break }
            out.append(d[start..<(start + size)])
            pos = start + size + 2
        }
        return out
    }
}
