// The libdebuginfod client: loaded with dlopen, its settings held here and set per query.
import FoundationEssentials
import FaultlineProtocol
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// libdebuginfod, opened with dlopen on the first query rather than linked: linking it loads
/// libcurl-gnutls and about a dozen libraries behind it (GnuTLS, nettle, p11-kit, Kerberos, …)
/// into every `faultline` process, which cost a few milliseconds of dynamic linking on each
/// start — most of a one-address `faultline symbolicate`, which never asks debuginfod unless
/// DEBUGINFOD_URLS is set.
enum LibDebuginfod {
    typealias Begin = @convention(c) () -> OpaquePointer?
    typealias End = @convention(c) (OpaquePointer?) -> Void
    typealias SetProgress = @convention(c) (OpaquePointer?, OpaquePointer?) -> Void
    typealias Find = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32

    struct Functions {
        let begin: Begin, end: End, setProgress: SetProgress, findDebuginfo: Find, findExecutable: Find
    }

    /// Nil when libdebuginfod.so.1 (Debian `libdebuginfod1`) is not installed.
    static let functions: Functions? = {
        guard let h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func sym<T>(_ name: String, _: T.Type) -> T? { dlsym(h, name).map { unsafeBitCast($0, to: T.self) } }
        guard let b = sym("debuginfod_begin", Begin.self), let e = sym("debuginfod_end", End.self),
            let p = sym("debuginfod_set_progressfn", SetProgress.self),
            let d = sym("debuginfod_find_debuginfo", Find.self), let x = sym("debuginfod_find_executable", Find.self)
        else { return nil }
        return Functions(begin: b, end: e, setProgress: p, findDebuginfo: d, findExecutable: x)
    }()
}

/// A libdebuginfod client with its settings held here rather than in the environment: the
/// library reads `DEBUGINFOD_URLS`, `DEBUGINFOD_CACHE_PATH` and its timeouts from the environment
/// at each query, so every query sets them under one process-wide lock (two servers in one
/// process, or a server and a CLI test, may use different upstreams).
public final class DebuginfodClient: @unchecked Sendable {
    /// Space-separated server URLs, as in `DEBUGINFOD_URLS`.
    public let urls: [String]
    /// The library's cache (`<cache>/<build-id>/debuginfo`, negative answers as empty 000 files).
    public let cacheDirectory: String
    /// Seconds without progress (connect or transfer) before a server is given up (`DEBUGINFOD_TIMEOUT`).
    public let timeoutSeconds: Int
    /// Seconds one download may take at most (`DEBUGINFOD_MAXTIME`).
    public let maxTimeSeconds: Int
    /// How long a "not found" is believed before the servers are asked again (the library's
    /// `cache_miss_s`, written into the cache directory).
    public let negativeRetrySeconds: Int
    /// A larger file is not downloaded (`DEBUGINFOD_MAXSIZE`; the answer is EFBIG); nil: no cap.
    public let maxFileBytes: Int64?

    static let queryLock = Mutex<Void>(())

    public init(
        urls: [String], cacheDirectory: String, timeoutSeconds: Int = 10, maxTimeSeconds: Int = 120, negativeRetrySeconds: Int = 600,
        maxFileBytes: Int64? = nil
    ) {
        self.urls = urls
        self.maxFileBytes = maxFileBytes.map { max(1, $0) }
        self.cacheDirectory = cacheDirectory
        self.timeoutSeconds = max(1, timeoutSeconds)
        self.maxTimeSeconds = max(1, maxTimeSeconds)
        self.negativeRetrySeconds = max(0, negativeRetrySeconds)
    }

    /// The client `DEBUGINFOD_URLS` asks for (nil when unset or empty), caching under
    /// `<cacheDirectory>/debuginfod`.
    /// - Parameter environment: nil reads the process's own (getenv: building ProcessInfo's whole
    ///   dictionary is a visible part of a one-address `faultline symbolicate`).
    public static func fromEnvironment(cacheDirectory: String?, environment: [String: String]? = nil) -> DebuginfodClient? {
        let variable = { (name: String) -> String? in environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) } }
        let urls = (variable("DEBUGINFOD_URLS") ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !urls.isEmpty else { return nil }
        let timeout = variable("DEBUGINFOD_TIMEOUT").flatMap { Int($0) } ?? 10
        let cache =
            variable("DEBUGINFOD_CACHE_PATH").flatMap { $0.isEmpty ? nil : $0 }
            ?? (cacheDirectory ?? IndexCache.defaultDirectory) + "/debuginfod"
        return DebuginfodClient(urls: urls, cacheDirectory: cache, timeoutSeconds: timeout)
    }

    public enum Answer: Sendable, Equatable {
        /// The file, in the cache directory.
        case found(String)
        /// Every server said it has no such file (or a cached "not found" is still fresh).
        case notFound
        /// No server could be asked (connection refused, timeout, …): errno.
        case failed(Int32)
    }

    /// Drops the library's remembered "not found" for `id` (an empty file in its cache), so a
    /// caller whose own retry interval has passed really asks again: the library's clock (file
    /// times in whole seconds, from when its answer was written) must not outlast the caller's.
    public func forgetNegativeAnswer(for id: BuildID) {
        for kind in ["debuginfo", "executable"] {
            let marker = cacheDirectory + "/" + id.hex + "/" + kind
            if let size = (try? FileManager.default.attributesOfItem(atPath: marker))?[.size] as? Int, size == 0 {
                try? FileManager.default.removeItem(atPath: marker)
            }
        }
    }

    public func debugInfo(_ id: BuildID) -> Answer { query(id) { $0.findDebuginfo } }
    public func executable(_ id: BuildID) -> Answer { query(id) { $0.findExecutable } }

    private func query(_ id: BuildID, _ pick: (LibDebuginfod.Functions) -> LibDebuginfod.Find) -> Answer {
        guard !id.bytes.isEmpty, !urls.isEmpty else { return .notFound }
        guard let lib = LibDebuginfod.functions else { return .failed(ENOSYS) }
        let find = pick(lib)
        try? FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        // The library reads its negative-cache lifetime from this file in the cache directory.
        try? "\(negativeRetrySeconds)\n".write(toFile: cacheDirectory + "/cache_miss_s", atomically: true, encoding: .utf8)
        return Self.queryLock.withLock { _ in
            setenv("DEBUGINFOD_URLS", urls.joined(separator: " "), 1)
            setenv("DEBUGINFOD_CACHE_PATH", cacheDirectory, 1)
            setenv("DEBUGINFOD_TIMEOUT", String(timeoutSeconds), 1)
            setenv("DEBUGINFOD_MAXTIME", String(maxTimeSeconds), 1)
            if let maxFileBytes { setenv("DEBUGINFOD_MAXSIZE", String(maxFileBytes), 1) } else { unsetenv("DEBUGINFOD_MAXSIZE") }
            guard let client = lib.begin() else { return .failed(ENOMEM) }
            defer { lib.end(client) }
            lib.setProgress(client, nil)
            var path: UnsafeMutablePointer<CChar>? = nil
            let fd = id.bytes.withUnsafeBufferPointer { find(client, $0.baseAddress!, Int32($0.count), &path) }
            defer { free(path) }
            if fd >= 0 {
                close(fd)
                guard let path else { return .failed(EIO) }
                return .found(String(cString: path))
            }
            return fd == -ENOENT ? .notFound : .failed(-fd)
        }
    }
}
