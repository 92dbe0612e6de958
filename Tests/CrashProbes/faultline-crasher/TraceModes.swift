// Tracing modes of the crasher: a crash inside a span, and the two ends of a real HTTP hop
// (a client that calls through URLSession, a server that continues the inbound traceparent).
import CCrashProbes
import Faultline
import FaultlineURLSession
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

enum TraceModes {
    /// Sends a finished `startup` transaction, then crashes inside `request` → `db.query` of the
    /// same trace. Prints `trace <trace id> <crashing span id>` before the crash.
    static func spanSegv(traceparent: String?) -> Never {
        Trace.withTraceparent(traceparent) {
            Trace.withSpan("startup", operation: "app.start") { _ in }
            _ = Faultline.flush(timeout: 60)
            Trace.withSpan("request", operation: "http.server") { _ in
                Trace.withSpan("db.query", operation: "db.query") { span in
                    print("trace \(span.context.traceID.hex) \(span.context.spanID.hex)")
                    fflush(nil)
                    probe_segv()
                }
            }
        }
        exit(3)
    }

    /// One traced GET through a session opted into propagation; prints the status and trace id.
    static func client(url: String) -> Never {
        let config = URLSessionConfiguration.ephemeral
        Trace.propagate(on: config)
        let session = URLSession(configuration: config)
        let done = DispatchSemaphore(value: 0)
        Trace.withSpan("client-job", operation: "task") { span in
            print("trace \(span.context.traceID.hex)")
            session.dataTask(with: URL(string: url)!) { _, response, error in
                print("status \((response as? HTTPURLResponse)?.statusCode ?? -1) \(error.map { "\($0)" } ?? "")")
                done.signal()
            }.resume()
            done.wait()
        }
        print(Faultline.flush(timeout: 60) ? "flushed" : "flush timed out")
        exit(0)
    }

    /// Serves one HTTP request on 127.0.0.1 (prints `port N` first), continuing its traceparent.
    static func serveOnce() -> Never {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(fd, 4)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        print("port \(UInt16(bigEndian: addr.sin_port))")
        fflush(nil)
        let c = accept(fd, nil, nil)
        var request = [UInt8](), buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: request, as: UTF8.self).contains("\r\n\r\n") {
            let n = read(c, &buffer, buffer.count)
            if n <= 0 { break }
            request += buffer[0..<n]
        }
        let lines = String(decoding: request, as: UTF8.self).components(separatedBy: "\r\n")
        let header = lines.first { $0.lowercased().hasPrefix("traceparent:") }.map { String($0.dropFirst("traceparent:".count)) }
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        Trace.withTraceparent(header) {
            Trace.withSpan("GET \(path)", operation: "http.server") { _ in
                Trace.withSpan("compute", operation: "function") { _ in usleep(2000) }
                let reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                _ = reply.withCString { write(c, $0, strlen($0)) }
            }
        }
        close(c)
        print(Faultline.flush(timeout: 60) ? "flushed" : "flush timed out")
        exit(0)
    }
}
