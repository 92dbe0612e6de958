// Breakpad's Linux streams: /proc files and the auxiliary vector copied into the dump as they were.

/// What the dump copied from the crashed process's `/proc` (each nil when the dump has no such stream).
public struct LinuxProcessStreams: Hashable, Sendable {
    /// `/proc/PID/maps` text.
    public var maps: String?
    /// `/proc/PID/cmdline`, split at its NUL bytes.
    public var commandLine: [String]?
    /// `/proc/PID/status` text.
    public var procStatus: String?
    /// `/etc/lsb-release` (or os-release) text.
    public var lsbRelease: String?
    /// `/proc/cpuinfo` text.
    public var cpuInfo: String?
    /// `/proc/PID/auxv` as (type, value) pairs.
    public var auxv: [AuxvEntry] = []

    public struct AuxvEntry: Hashable, Sendable {
        public var type: UInt64
        public var value: UInt64
        public init(type: UInt64, value: UInt64) { self.type = type; self.value = value }
    }

    public init() {}

    /// The `KEY=value` lines of lsb-release / os-release, quotes removed.
    public var lsbFields: [String: String] {
        var fields: [String: String] = [:]
        for line in (lsbRelease ?? "").split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            var value = line[line.index(after: eq)...]
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            fields[String(line[..<eq])] = String(value)
        }
        return fields
    }

    /// The executable mappings of `maps` (`r-xp`), for telling code from data when scanning stacks.
    public var executableRanges: [(start: UInt64, end: UInt64)] {
        var list: [(UInt64, UInt64)] = []
        for line in (maps ?? "").split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].count >= 3, fields[1].dropFirst(2).first == "x" else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let s = UInt64(bounds[0], radix: 16), let e = UInt64(bounds[1], radix: 16), s < e else { continue }
            list.append((s, e))
        }
        return list
    }

    /// Streams past this size are cut: they are text for people, and a hostile size must not make a copy huge.
    static let maxTextBytes: UInt32 = 1 << 20

    mutating func read(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) {
        let bytes = try b.slice(UInt64(s.rva), UInt64(s.size), "Linux stream \(s.type)")
        let text = { String(decoding: bytes.prefix(Int(Self.maxTextBytes)), as: UTF8.self) }
        switch s.type {
        case .linuxMaps: maps = text()
        case .linuxProcStatus: procStatus = text()
        case .linuxLSBRelease: lsbRelease = text()
        case .linuxCPUInfo: cpuInfo = text()
        case .linuxCmdLine:
            commandLine = bytes.prefix(Int(Self.maxTextBytes)).split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        case .linuxAuxv:
            let n = Int(s.size / 16)
            auxv = (0..<n).compactMap { i in
                let e = UInt64(s.rva) + UInt64(i) * 16
                guard let t = try? b.u64(e, "auxv"), let v = try? b.u64(e + 8, "auxv") else { return nil }
                return AuxvEntry(type: t, value: v)
            }
        default: break
        }
    }
}
