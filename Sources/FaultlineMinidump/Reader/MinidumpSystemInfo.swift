// The system-info stream: CPU architecture and count, operating system and its version.
import FaultlineProtocol

/// What machine and system the process ran on.
public struct MinidumpSystemInfo: Hashable, Sendable {
    /// `processor_architecture`: 9 AMD64, 0 x86, 5 ARM, 12 or 0x8003 ARM64.
    public var processorArchitecture: UInt16
    public var processorCount: UInt8
    /// `platform_id`: 0x8201 Linux, 0x8203 Android, 0x8101 macOS, 2 Windows.
    public var platformID: UInt32
    public var majorVersion: UInt32
    public var minorVersion: UInt32
    public var buildNumber: UInt32
    /// The CSD version string: Crashpad and Breakpad put the kernel's `uname` there on Linux.
    public var versionText: String?

    static let size: UInt32 = 56

    /// The architecture in Sentry's spelling (`x86_64`, `arm64`, `x86`, `arm`), nil if unknown.
    public var architecture: String? {
        switch processorArchitecture {
        case 9: CPUArchitecture.x86_64.sentryName
        case 0: "x86"
        case 5: "arm"
        case 12, 0x8003: CPUArchitecture.aarch64.sentryName
        default: nil
        }
    }

    /// The operating system's name as Sentry's `os` context spells it.
    public var osName: String {
        switch platformID {
        case 0x8201: "Linux"
        case 0x8203: "Android"
        case 0x8101: "macOS"
        case 0x8102: "iOS"
        case 2: "Windows"
        default: "unknown (0x\(String(platformID, radix: 16)))"
        }
    }

    /// `major.minor.build`, the kernel release's numbers on Linux.
    public var version: String { "\(majorVersion).\(minorVersion).\(buildNumber)" }

    init(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) {
        guard s.size >= Self.size else { throw .streamTooSmall(what: "system info", size: s.size, needed: Int(Self.size)) }
        let e = UInt64(s.rva)
        processorArchitecture = try b.u16(e, "system info")
        processorCount = try b.u8(e + 6, "system info")
        majorVersion = try b.u32(e + 8, "system info")
        minorVersion = try b.u32(e + 12, "system info")
        buildNumber = try b.u32(e + 16, "system info")
        platformID = try b.u32(e + 20, "system info")
        let csd = try b.u32(e + 24, "system info")
        versionText = csd == 0 ? nil : try b.utf16String(at: csd, "CSD version")
    }
}
