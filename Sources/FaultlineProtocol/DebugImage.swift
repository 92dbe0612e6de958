// A loaded module as Sentry's `debug_meta.images` entry: built here once (crash events, captured
// errors) and read here once (the CLI's and the server's stack readers).
import FoundationEssentials

/// One ELF image of a process: where it was loaded, how large, and which build it is.
public struct DebugImage: Sendable, Hashable {
    public var codeFile: String?
    /// Lowest mapped address (Sentry's `image_addr`).
    public var base: Address
    /// Mapped size (`image_size`); 0 means unknown — see `DebugImageMap` for what it covers then.
    public var size: UInt64
    public var buildID: BuildID?
    /// The CPU architecture in Sentry's spelling (`x86_64`, `arm64`).
    public var arch: String

    public init(codeFile: String?, base: Address, size: UInt64, buildID: BuildID?, arch: String) {
        self.codeFile = codeFile; self.base = base; self.size = size; self.buildID = buildID; self.arch = arch
    }

    /// The architecture this code was compiled for in Sentry's spelling: the in-process SDK's
    /// images are this (CPUArchitecture.host; "unknown" where the crash core does not run).
    public static var hostArchitecture: String { CPUArchitecture.host?.sentryName ?? "unknown" }

    /// The image's architecture, when `arch` names one Faultline knows.
    public var architecture: CPUArchitecture? { CPUArchitecture(name: arch) }

    /// Reads an entry; nil without a usable `image_addr`.
    public init?(json j: JSONValue) {
        guard let base = SentryStackTrace.address(j["image_addr"]) else { return nil }
        self.base = Address(base)
        self.size = SentryStackTrace.address(j["image_size"]) ?? 0
        self.buildID = j["code_id"]?.stringValue.flatMap(BuildID.init(hex:))
        self.codeFile = j["code_file"]?.stringValue
        self.arch = j["arch"]?.stringValue ?? ""
    }

    /// The entry as Sentry's native SDKs write it (ELF).
    public var json: JSONValue {
        var image: [String: JSONValue] = [
            "type": "elf", "image_addr": .string(base.hex), "image_size": .int(Int64(clamping: size)), "arch": .string(arch)
        ]
        if let codeFile { image["code_file"] = .string(codeFile) }
        if let b = buildID {
            image["code_id"] = .string(b.hex)
            image["debug_id"] = .string(b.debugID.description)
        }
        return .object(image)
    }
}
