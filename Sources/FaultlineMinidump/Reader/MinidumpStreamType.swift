// The stream types the reader understands (Microsoft's, Breakpad's Linux ones, Crashpad's).

/// A directory entry's stream type.
public struct MinidumpStreamType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let threadList = Self(rawValue: 3)
    public static let moduleList = Self(rawValue: 4)
    public static let memoryList = Self(rawValue: 5)
    public static let exception = Self(rawValue: 6)
    public static let systemInfo = Self(rawValue: 7)
    public static let memory64List = Self(rawValue: 9)
    public static let miscInfo = Self(rawValue: 15)
    public static let threadNames = Self(rawValue: 24)
    // Breakpad's Linux streams (also written by Crashpad's Linux handler in some versions).
    public static let linuxCPUInfo = Self(rawValue: 0x4767_0003)
    public static let linuxProcStatus = Self(rawValue: 0x4767_0004)
    public static let linuxLSBRelease = Self(rawValue: 0x4767_0005)
    public static let linuxCmdLine = Self(rawValue: 0x4767_0006)
    public static let linuxEnviron = Self(rawValue: 0x4767_0007)
    public static let linuxAuxv = Self(rawValue: 0x4767_0008)
    public static let linuxMaps = Self(rawValue: 0x4767_0009)
    public static let linuxDSODebug = Self(rawValue: 0x4767_000A)
    public static let crashpadInfo = Self(rawValue: 0x4350_0001)

    public var description: String { "0x" + String(rawValue, radix: 16) }
}

/// One entry of the stream directory: where a stream's bytes are.
public struct MinidumpStreamEntry: Hashable, Sendable {
    public var type: MinidumpStreamType
    public var size: UInt32
    public var rva: UInt32
}
