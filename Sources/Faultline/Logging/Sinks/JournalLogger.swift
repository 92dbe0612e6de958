// System journal sink: systemd's native protocol over its datagram socket.
//
// Why native and not syslog(3): syslog carries only a priority and one line of text (glibc
// formats it with open_memstream, a heap allocation under a lock); the native protocol carries
// structured fields journalctl can filter on — PRIORITY, CODE_FILE, CODE_LINE, CODE_FUNC, TID,
// SYSLOG_IDENTIFIER, our attributes as FAULTLINE_ATTR_<KEY> — and multi-line messages as one
// entry (binary field form). Where no journal socket exists (containers, non-systemd hosts) the
// sink is silent: `isAvailable` says so, and send errors are reported once on stderr.
import Foundation
import Synchronization

public final class JournalLogger: Logger, @unchecked Sendable {
    public static let defaultSocket = "/run/systemd/journal/socket"
    public let identifier: String
    public let minimumLevel: LogLevel
    /// Extra fields on every entry (e.g. a subsystem/category pair like os_log's).
    public let fields: [String: String]
    private let fd: Int32
    private var address = sockaddr_un()
    private let reported = Atomic<Bool>(false)

    /// Whether the journal socket exists on this machine.
    public static var isAvailable: Bool { access(defaultSocket, W_OK) == 0 }

    public init(
        identifier: String = ((CommandLine.arguments.first ?? "app") as NSString).lastPathComponent,
        subsystem: String? = nil, category: String? = nil,
        minimumLevel: LogLevel = .trace, socketPath: String = JournalLogger.defaultSocket
    ) {
        self.identifier = identifier
        self.minimumLevel = minimumLevel
        var f: [String: String] = [:]
        if let s = subsystem { f["FAULTLINE_SUBSYSTEM"] = s }
        if let c = category { f["FAULTLINE_CATEGORY"] = c }
        fields = f
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in
            let bytes = Array(socketPath.utf8.prefix(p.count - 1))
            p.copyBytes(from: bytes)
        }
        var size: Int32 = 8 << 20
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    /// syslog priorities: critical 2, error 3, warning 4, notice 5, info 6, debug and trace 7.
    static func priority(_ l: LogLevel) -> Int {
        switch l {
        case .critical: 2;
        case .error: 3;
        case .warning: 4;
        case .notice: 5;
        case .info: 6;
        case .debug, .trace: 7
        }
    }

    /// The datagram for one event (journal native format; binary form for values with a newline).
    func datagram(_ e: LogEvent) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + e.message.utf8.count)
        func field(_ key: String, _ value: String) {
            out.append(contentsOf: key.utf8)
            if value.utf8.contains(10) {
                out.append(10)
                var n = UInt64(value.utf8.count).littleEndian
                withUnsafeBytes(of: &n) { out.append(contentsOf: $0) }
                out.append(contentsOf: value.utf8)
            } else {
                out.append(0x3D)
                out.append(contentsOf: value.utf8)
            }
            out.append(10)
        }
        field("MESSAGE", e.message)
        field("PRIORITY", String(Self.priority(e.level)))
        field("SYSLOG_IDENTIFIER", identifier)
        field("CODE_FILE", e.file.description)
        field("CODE_LINE", String(e.line))
        field("CODE_FUNC", e.function.description)
        field("TID", String(e.threadID))
        field("FAULTLINE_LEVEL", e.level.name)
        if let t = e.traceID { field("FAULTLINE_TRACE_ID", t) }
        if let s = e.spanID { field("FAULTLINE_SPAN_ID", s) }
        for (k, v) in fields.sorted(by: { $0.key < $1.key }) { field(k, v) }
        for (k, v) in e.attributes.sorted(by: { $0.key < $1.key }) { field("FAULTLINE_ATTR_" + Self.fieldName(k), v.consoleText) }
        return out
    }

    /// Journal field names: A–Z, 0–9 and _, not starting with a digit or _, at most 64 characters.
    static func fieldName(_ key: String) -> String {
        let mapped = key.uppercased().unicodeScalars.map { ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") ? Character($0) : "_" }
        return String(String(mapped).prefix(64 - "FAULTLINE_ATTR_".count))
    }

    public func log(_ event: LogEvent) {
        guard event.level >= minimumLevel else { return }
        let bytes = datagram(event)
        let sent = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &address) { a in
                a.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        if sent < 0 && errno != ENOENT && !reported.exchange(true, ordering: .relaxed) {
            let text = "faultline: cannot send to the journal: \(String(cString: strerror(errno)))\n"
            _ = text.withCString { write(2, $0, strlen($0)) }
        }
    }
}
