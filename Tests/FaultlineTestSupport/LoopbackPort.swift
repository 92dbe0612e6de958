// Loopback ports for tests without the "pick a free port, close it, bind it later" race.
//
// A port picked by binding to 0 and closing is free only at that moment: any process on the machine
// can take it before the server the test starts binds it (elfutils' debuginfod once failed with
// "Failed to bind to port 44185: Address already in use" and the test waited 120 s). So, in order
// of preference:
//   - a server in the test process or a child that can listen on port 0 does so and reports the
//     port (Server, ScriptedHTTPServer, `faultline serve --port 0`);
//   - a child that takes a listening socket from its parent (haproxy's `bind fd@0`) gets one the
//     test made on port 0 (`listeningSocket()`);
//   - a port that must refuse connections is a socket the test keeps bound and never listens on
//     (`RefusingPort`): nothing else can bind it meanwhile;
//   - a child that must be told its port (debuginfod cannot listen on 0) gets a `candidate()` inside
//     `retryingLostBinds`, which starts over with a fresh port when the child lost the bind.
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

public enum LoopbackPort {
    /// Thrown by an attempt whose server could not bind its port because another process had it;
    /// `retryingLostBinds` starts the attempt over.
    public struct Lost: Error, CustomStringConvertible {
        public var port: UInt16
        public var detail: String
        public init(port: UInt16, detail: String) { self.port = port; self.detail = detail }
        public var description: String { "port \(port) was taken by another process: \(detail)" }
    }

    /// A socket call that failed (the machine is out of descriptors or ports).
    public struct SocketFailure: Error, CustomStringConvertible {
        public var call: String
        public var errno: Int32
        public var description: String { "\(call): \(String(cString: strerror(errno)))" }
    }

    /// Runs `attempt` until it does not throw `Lost`, at most `attempts` times (then the last `Lost`
    /// is thrown). Each attempt must take a fresh port and clean up what it started before throwing.
    public static func retryingLostBinds<T>(attempts: Int = 5, _ attempt: () throws -> T) throws -> T {
        precondition(attempts > 0)
        var tries = 0
        while true {
            tries += 1
            do {
                return try attempt()
            } catch let lost as Lost where tries < attempts {
                // Visible in the test log: a retry that happens often means something else is wrong.
                FileHandle.standardError.write(Data("LoopbackPort: \(lost); starting again (\(tries) of \(attempts))\n".utf8))
            }
        }
    }

    /// A port to try: one the kernel just handed out and took back. Another process may bind it
    /// first, so use it only for a child that cannot listen on port 0, inside `retryingLostBinds`.
    /// Asked of a dual-stack `[::]:0` socket, as debuginfod binds: the kernel then hands out a port
    /// free on every address, IPv4 and IPv6. A port free on 127.0.0.1 alone can be held on
    /// 127.0.0.2 (tests send from other loopback addresses), and the kernel hands the same such
    /// port out again and again, so every retry would lose the same way.
    public static func candidate() -> UInt16 {
        let fd6 = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        if fd6 >= 0 {
            defer { close(fd6) }
            var off: Int32 = 0
            _ = setsockopt(fd6, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_addr = in6addr_any
            var len = socklen_t(MemoryLayout<sockaddr_in6>.size)
            let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd6, $0, len) } }
            if bound == 0 {
                _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd6, $0, &len) } }
                return UInt16(bigEndian: addr.sin6_port)
            }
        }
        // No IPv6 on this machine: every IPv4 address (INADDR_ANY) instead.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket: \(String(cString: strerror(errno)))")
        defer { close(fd) }
        var addr = loopback(port: 0)
        addr.sin_addr.s_addr = INADDR_ANY
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        precondition(bound == 0, "bind 0.0.0.0:0: \(String(cString: strerror(errno)))")
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return UInt16(bigEndian: addr.sin_port)
    }

    /// The TCP ports process `pid` listens on (what `ss -ltnp` shows for it): its socket descriptors
    /// in /proc/PID/fd matched by inode against the LISTEN rows of /proc/PID/net/tcp and tcp6. Tells
    /// "our child is up on the port" apart from "something else answers there". IPv6 rows count:
    /// debuginfod listens on one dual-stack `[::]:PORT` socket, whose bind fails while another
    /// process holds 127.0.0.1:PORT.
    public static func listeningPorts(of pid: pid_t) -> Set<UInt16> {
        let fdDirectory = "/proc/\(pid)/fd"
        var inodes = Set<Substring>()
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: fdDirectory)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fdDirectory + "/" + fd),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(Substring(target.dropFirst("socket:[".count).dropLast()))
        }
        var ports = Set<UInt16>()
        for table in ["tcp", "tcp6"] {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/net/\(table)", encoding: .utf8)) ?? ""
            // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ..."; 0A is LISTEN.
            for row in text.split(separator: "\n").dropFirst() {
                let f = row.split(separator: " ")
                guard f.count > 9, f[3] == "0A", inodes.contains(f[9]),
                    let hex = f[1].split(separator: ":").last, let port = UInt16(hex, radix: 16)
                else { continue }
                ports.insert(port)
            }
        }
        return ports
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = port.bigEndian
        return addr
    }
}

/// A loopback port that refuses connections for as long as the test keeps it: a socket bound to
/// 127.0.0.1 that never listens (a connect gets RST, as from a stopped server). Unlike a port closed
/// after picking it, no other process can bind it and answer meanwhile. Call `close()` (a `defer`
/// keeps it alive until then).
public final class RefusingPort {
    public let port: UInt16
    private var fd: Int32

    public init() throws { (fd, port) = try LoopbackPort.boundSocket() }

    public var url: String { "http://127.0.0.1:\(port)" }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { close() }
}

/// A server that accepts and never answers, for as long as the test keeps it: a listening socket
/// nobody accepts on (the kernel completes the handshakes into its backlog), so a client connects,
/// sends, and waits. Bound once and kept, like RefusingPort.
public final class StalledServer {
    public let port: UInt16
    private var fd: Int32

    public init() throws {
        (fd, port) = try LoopbackPort.boundSocket()
        guard listen(fd, 16) == 0 else {
            let e = errno
            close()
            throw LoopbackPort.SocketFailure(call: "listen", errno: e)
        }
    }

    /// Whether a client has connected (a connection waits in the backlog), waiting up to `timeout`.
    public func hasConnection(within timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 20) == 1 { return true }
        }
        return false
    }

    public func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    deinit { close() }
}

extension LoopbackPort {
    /// A TCP socket bound to 127.0.0.1 on a port the kernel picked, and that port. No
    /// SO_REUSEADDR: another socket must not be able to share the port.
    /// A socket listening on 127.0.0.1 at a port the kernel chose, for a child that takes a
    /// listening socket from its parent (haproxy's `bind fd@0`): nothing can take the port between
    /// the choice and the listen. The caller owns the descriptor.
    public static func listeningSocket(backlog: Int32 = 128) throws -> (fd: Int32, port: UInt16) {
        let (fd, port) = try boundSocket()
        guard listen(fd, backlog) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SocketFailure(call: "listen 127.0.0.1:\(port)", errno: e)
        }
        return (fd, port)
    }

    static func boundSocket() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure(call: "socket", errno: errno) }
        var addr = loopback(port: 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        guard bound == 0 else {
            let e = errno
            Glibc.close(fd)
            throw SocketFailure(call: "bind 127.0.0.1:0", errno: e)
        }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, UInt16(bigEndian: addr.sin_port))
    }
}
