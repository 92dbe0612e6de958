// Hostile clients for the hostile-input and load tests: raw sockets that hold connections open,
// trickle header bytes, or send from another loopback address (127.0.0.2 reaches a server on
// 127.0.0.1 but counts as another IP), and a peak-RSS probe for the test process (which hosts
// the server).
import Foundation
import XCTest
import Synchronization

enum HostileClient {
    /// A connected socket to 127.0.0.1:port from `source` (nil: let the kernel choose), or -1.
    static func connect(port: UInt16, source: String? = nil, timeoutSeconds: Int = 10) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let rc = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else { close(fd); return -1 }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(fd); return -1 }
        return fd
    }

    @discardableResult
    static func write(_ fd: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// True when the server has closed (or reset) the connection: a read returns 0 or an error
    /// other than a timeout within `seconds`.
    static func isClosedByServer(_ fd: Int32, within seconds: Int) -> Bool {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n > 0 { continue }  // a response (e.g. 408/503) before the close
            if n == 0 { return true }
            return errno != EAGAIN && errno != EWOULDBLOCK
        }
    }

    /// Slowloris: connections that send a request line and then one header byte every
    /// `interval` seconds, until `stop` is set. Returns the thread's done semaphore.
    final class Trickler: @unchecked Sendable {
        private let stopped = Mutex(false)
        private(set) var fds: [Int32] = []
        private let done = DispatchSemaphore(value: 0)

        init(port: UInt16, connections: Int, interval: Double, source: String? = nil) {
            for _ in 0..<connections {
                let fd = HostileClient.connect(port: port, source: source)
                if fd >= 0 { HostileClient.write(fd, "GET /health HTTP/1.1\r\nX-Slow: "); fds.append(fd) }
            }
            Thread.detachNewThread { [self] in
                while !self.isStopped {
                    for fd in self.fds { HostileClient.write(fd, "a") }
                    Thread.sleep(forTimeInterval: interval)
                }
                self.done.signal()
            }
        }
        var isStopped: Bool { stopped.withLock { $0 } }
        func stop() {
            stopped.withLock { $0 = true }
            done.wait()
            for fd in fds { close(fd) }
        }
    }
}

enum ProcessMemory {
    /// Current resident set size of this process (the tests host the server), in bytes.
    static var rss: Int { status("VmRSS") }
    /// Peak RSS since the last `resetPeak()` (or the start), in bytes.
    static var peak: Int { status("VmHWM") }

    /// Resets VmHWM to the current RSS (`echo 5 > /proc/self/clear_refs`, Linux ≥ 4.0).
    static func resetPeak() -> Bool {
        guard let fh = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? fh.close() }
        do { try fh.write(contentsOf: Data("5".utf8)); return true } catch { return false }
    }

    private static func status(_ field: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }

    /// Runs `body` and returns how far the peak RSS rose above the RSS before it.
    static func peakGrowth(_ body: () throws -> Void) rethrows -> Int {
        let reset = resetPeak()
        precondition(reset, "cannot reset VmHWM through /proc/self/clear_refs")
        let before = rss
        try body()
        return max(0, peak - before)
    }
}
