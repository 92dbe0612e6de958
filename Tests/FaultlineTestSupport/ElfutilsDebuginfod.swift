// A real elfutils `debuginfod` for tests: serves the ELF files under one directory (`-F`) on a
// loopback port, its database in a temporary directory. Nothing here reaches past 127.0.0.1.
import Foundation
import FaultlineProtocol
#if canImport(Glibc)
import Glibc
#endif

public final class ElfutilsDebuginfod {
    public static let binary = "/usr/bin/debuginfod"
    public let port: UInt16
    public let directory: String
    let process: Process
    let work: String
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts `debuginfod -F directory` (rescanning every `rescanSeconds`); nil when elfutils'
    /// debuginfod is not installed.
    public init?(serving directory: String, rescanSeconds: Int = 1) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { return nil }
        self.directory = directory
        work = TestSupport.makeTemporaryDirectory("debuginfod-db")
        port = Self.freeLoopbackPort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-F", directory, "-p", String(port), "-d", work + "/db.sqlite", "-t", String(rescanSeconds), "-c", "1"]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        FileManager.default.createFile(atPath: work + "/log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: work + "/log")
        try process.run()
    }

    /// Waits until the server answers 200 for the build-id's debuginfo (its scan has found it).
    public func waitUntilServes(_ id: BuildID, timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if Self.status(port: port, path: "/buildid/\(id.hex)/debuginfo") == 200 { return true }
            usleep(100_000)
        }
        return false
    }

    /// Waits until the server accepts requests at all.
    public func waitUntilUp(timeout: TimeInterval = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if Self.status(port: port, path: "/metrics") != nil { return true }
            usleep(100_000)
        }
        return false
    }

    public var log: String { (try? String(contentsOfFile: work + "/log", encoding: .utf8)) ?? "" }

    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: work)
    }

    /// A port nothing listens on right now (bound to 0, read back, closed).
    public static func freeLoopbackPort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// The status code of `GET path` on 127.0.0.1:port, nil when nothing answers.
    public static func status(port: UInt16, path: String) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard write(fd, request, request.count) == request.count else { return nil }
        var buf = [UInt8](repeating: 0, count: 64)
        let n = read(fd, &buf, buf.count)
        guard n > 12 else { return nil }
        let head = String(decoding: buf[0..<n], as: UTF8.self).split(separator: " ")
        return head.count > 1 ? Int(head[1]) : nil
    }
}
