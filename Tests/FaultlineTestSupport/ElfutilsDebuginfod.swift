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

    /// Starts `debuginfod -F directory` (rescanning every `rescanSeconds`) and returns once it
    /// listens; nil when elfutils' debuginfod is not installed.
    ///
    /// debuginfod cannot listen on port 0 (`-p 0`: "port number: Invalid argument"), so it gets a
    /// candidate port, and when another process binds that port first it prints "Failed to bind to
    /// port N: Address already in use" and exits: then it starts again on a fresh port, at most five
    /// times. `candidatePorts` gives each attempt's port (a test of this very retry passes a taken one).
    public init?(serving directory: String, rescanSeconds: Int = 1, candidatePorts: () -> UInt16 = LoopbackPort.candidate) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { return nil }
        self.directory = directory
        let work = TestSupport.makeTemporaryDirectory("debuginfod-db")
        self.work = work
        do {
            (process, port) = try LoopbackPort.retryingLostBinds {
                try Self.launch(serving: directory, work: work, rescanSeconds: rescanSeconds, port: candidatePorts())
            }
        } catch {
            try? FileManager.default.removeItem(atPath: work)
            throw error
        }
    }

    /// One start on `port`, polled (bounded) until debuginfod listens there. Throws
    /// `LoopbackPort.Lost` when its bind failed because the port was taken; the child has exited then.
    static func launch(serving directory: String, work: String, rescanSeconds: Int, port: UInt16) throws -> (Process, UInt16) {
        let logPath = work + "/log"
        FileManager.default.createFile(atPath: logPath, contents: nil)  // this attempt's output only
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["-F", directory, "-p", String(port), "-d", work + "/db.sqlite", "-t", String(rescanSeconds), "-c", "1"]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            // Our child's own listening socket, not merely something answering on the port.
            if LoopbackPort.listeningPorts(of: process.processIdentifier).contains(port) { return (process, port) }
            let exited = !process.isRunning
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            // Its last words before exit(1) when it could not listen (noticed even before the exit is).
            if exited || log.contains("cannot start http server") {
                process.awaitEnd()
                let lines = log.split(separator: "\n")
                if log.contains("Address already in use") {
                    throw LoopbackPort.Lost(port: port, detail: String(lines.last { $0.contains("Failed to bind") } ?? ""))
                }
                throw TestSupport.ShellError(command: "debuginfod -p \(port)", output: "exited before listening:\n\(log)")
            }
            usleep(10_000)
        }
        process.end(with: SIGKILL)
        throw TestSupport.ShellError(
            command: "debuginfod -p \(port)", output: "did not listen within 30 s:\n" + ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""))
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

    /// The server's process id (tests check what it listens on).
    public var processIdentifier: pid_t { process.processIdentifier }

    public var log: String { (try? String(contentsOfFile: work + "/log", encoding: .utf8)) ?? "" }

    public func stop() {
        process.end()
        try? FileManager.default.removeItem(atPath: work)
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
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
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
