// swift-tools-version:6.0
// Faultline: crash reporting with symbolication for Swift, C and C++ on Linux.
// One place lists every target and what it depends on; the folder tree under
// Sources/ mirrors the parts in docs/ARCHITECTURE.md.
import PackageDescription

let package = Package(
    name: "Faultline",
    products: [
        // What an app links: the SDK and the crash core (libc, libunwind, zlib, libcurl; never FoundationNetworking).
        .library(name: "Faultline", targets: ["Faultline"]),
        // Opt-in: trace propagation into the app's own URLSession (links FoundationNetworking).
        .library(name: "FaultlineURLSession", targets: ["FaultlineURLSession"]),
        .library(name: "FaultlineSymbolication", targets: ["FaultlineSymbolication"]),
        .library(name: "FaultlineServer", targets: ["FaultlineServer"]),
        .executable(name: "faultline", targets: ["faultline"]),
        .executable(name: "faultline-server", targets: ["faultline-server"]),
        .executable(name: "faultline-crasher", targets: ["faultline-crasher"]),
    ],
    targets: [
        // MARK: System libraries (one Debian -dev package each)
        // No pkgConfig: it would add -ldw -lelf, the shared libraries; the module map names the archives.
        .systemLibrary(name: "CDw", path: "Sources/System/CDw",
                       providers: [.apt(["libdw-dev", "libelf-dev", "liblzma-dev", "libbz2-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/System/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/System/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/System/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/System/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/System/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CBrotli", path: "Sources/System/CBrotli", pkgConfig: "libbrotlidec",
                       providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CLibDeflate", path: "Sources/System/CLibDeflate", pkgConfig: "libdeflate",
                       providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/System/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),

        // MARK: Crash core (C, runs inside a crashed process)
        .target(
            name: "CFaultlineCrash",
            cSettings: [.define("_GNU_SOURCE")],
            // Only the generic x86_64 libunwind: libunwind.so would take over _Unwind_* from
            // libgcc_s (C++ exceptions 22x slower, Swift's _Unwind_Backtrace loses frames).
            linkerSettings: [.linkedLibrary("unwind-x86_64"), .linkedLibrary("dl"), .linkedLibrary("pthread")]
        ),
        // The C++ terminate handler (normal context): an uncaught exception's type and what() for
        // the crash report. Apart from the crash core so C programs never need libstdc++.
        .target(name: "CFaultlineCxx", dependencies: ["CFaultlineCrash"]),
        // LD_PRELOAD library for unmodified programs. Built by tools/build-preload with the C
        // compiler alone: a SwiftPM dynamic product would pull libswiftCore (and Swift's own
        // crash handler) into every C program it is preloaded into.

        // The SQLite writer's VFS: a commit's WAL frames in one write call (Storage/SQLite/SQLiteStore).
        .target(name: "CFaultlineSQLiteVFS", dependencies: ["CSQLite"], path: "Sources/CFaultlineSQLiteVFS"),
        // Non-variadic front for MHD_start_daemon (Swift cannot call C variadics).
        .target(name: "CFaultlineHTTPShim", dependencies: ["CMicroHTTPD"],
                linkerSettings: [.linkedLibrary("microhttpd")]),

        // MARK: Wire formats and identities shared by SDK, symbolicator and server (Swift over zlib):
        // each rule the CLI, the SDK and the server must apply alike is written here once.
        .target(name: "FaultlineProtocol", dependencies: ["CZlib"]),

        // MARK: The one background-worker loop (wait for work or a deadline, drain, stop, join),
        // used by the SDK and the server alike; Foundation only, so neither links the other.
        .target(name: "FaultlineThreads"),

        // MARK: Crash pickup and the outbox: what the SDK does at the next launch and `faultline
        // crashes` does on demand, in Swift alone (no crash core, so no libc interposers).
        .target(name: "FaultlineCrashPickup", dependencies: ["FaultlineProtocol", "FaultlineFiles"]),
        // POSIX file I/O every part shares: whole writes and reads on a descriptor, atomic replacement.
        .target(name: "FaultlineFiles", dependencies: ["FaultlineProtocol"]),

        // MARK: SDK (what apps import)
        // CCurl: the SDK's own HTTP client (Transport/CurlClient.swift says why not URLSession); the
        // libcurl FoundationNetworking already loads, so only its headers are new, at build time.
        .target(
            name: "Faultline",
            dependencies: [
                "CFaultlineCrash", "CFaultlineCxx", "FaultlineProtocol", "FaultlineCrashPickup", "FaultlineThreads", "FaultlineHashing", "FaultlineFiles",
                "CCurl"
            ]),
        // Trace.propagate(on:) for URLSession: apart from the SDK so only apps that use it link
        // FoundationNetworking (the SDK itself sends through libcurl).
        .target(name: "FaultlineURLSession", dependencies: ["Faultline"]),
        // SHA-1 and SHA-256 over libcrypto, for the SDK, the server and the upload client.
        .target(name: "FaultlineHashing", dependencies: ["CCrypto", "FaultlineProtocol"]),

        // MARK: Symbolication (never in the crashing process)
        // libstdc++ for `__cxa_demangle` (Demangler.swift), which it calls directly.
        .target(name: "FaultlineSymbolication", dependencies: ["CDw", "FaultlineProtocol", "FaultlineFiles"],
                linkerSettings: [.linkedLibrary("stdc++")]),

        // MARK: Minidumps (Crashpad/Breakpad): a reader that never trusts an offset, a stackwalker over
        // libdwfl with frame-pointer and stack-scan fallbacks, and the Sentry event of a walked dump.
        .target(name: "FaultlineMinidump", dependencies: ["CDw", "FaultlineProtocol"]),
        // Linux core files → crash reports: notes parsed here, threads walked by libdwfl (libdw),
        // for `faultline symbolicate CORE` and the core_pattern pipe handler `faultline coredump`.
        .target(name: "FaultlineCoreDump", dependencies: ["CDw", "FaultlineProtocol", "FaultlineFiles"]),

        // MARK: Server
        .target(name: "FaultlineServer",
                dependencies: [
                    "FaultlineSymbolication", "FaultlineMinidump", "FaultlineProtocol", "FaultlineThreads", "FaultlineHashing", "FaultlineFiles", "CMicroHTTPD",
                    "CFaultlineHTTPShim", "CSQLite", "CFaultlineSQLiteVFS", "CCrypto", "CLibPQ", "CCurl", "CBrotli", "CLibDeflate"
                ]),

        // MARK: CI client: find, split and upload debug files, wait for the server (used by the CLI)
        .target(name: "FaultlineUpload", dependencies: ["FaultlineHashing", "FaultlineSymbolication", "FaultlineProtocol"]),

        // MARK: Executables
        // Never the SDK: its crash core interposes pthread_create and sigprocmask (checked by nm).
        // `faultline` links only symbolication, crash pickup and the console, so it starts as fast as
        // llvm-symbolizer; it execs `faultline-server` (same directory) for the server-side
        // commands. Why: Sources/FaultlineCommandLine/Subcommand.swift. Its modules (this one,
        // FaultlineProtocol, FaultlineCrashPickup, FaultlineSymbolication) import FoundationEssentials,
        // never Foundation: CoreFoundation's and ICU's start-up was ~3 MB of a one-address run.
        .target(name: "FaultlineCommandLine", dependencies: ["FaultlineProtocol", "FaultlineFiles"]),
        // Linked by lld with packed relative relocations (DT_RELR, glibc 2.36+): the static Swift
        // runtime and Foundation carry tens of thousands of relative relocations, whose unpacked
        // table the loader read at every start (gold cannot pack them; a non-PIE link would, at
        // the cost of ASLR for a tool that reads untrusted files). docs/SYMBOLICATION.md has the
        // figures.
        // libstdc++ and libgcc's unwinder come from their static archives (the linker script in
        // Sources/System/StaticLibStdCxx says why and how), as libdw does (its module map): the
        // installed executable loads only libc, libm and zlib. No archive's symbols are exported
        // (as the toolchain's static link already has it): in a build with the shared Swift
        // runtime, which loads the shared libstdc++ for itself, neither binds to the other's copy.
        .executableTarget(name: "faultline",
                          dependencies: [
                              "FaultlineCommandLine", "FaultlineCrashPickup", "FaultlineSymbolication", "FaultlineCoreDump", "FaultlineMinidump", "FaultlineProtocol", "FaultlineFiles"
                          ],
                          linkerSettings: [
                              .unsafeFlags([
                                  "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                  "-L", Context.packageDirectory + "/Sources/System/StaticLibStdCxx", "-Xclang-linker", "-static-libgcc",
                                  "-Xlinker", "--exclude-libs", "-Xlinker", "ALL",
                              ])
                          ]),
        .executableTarget(name: "faultline-server",
                          dependencies: ["FaultlineCommandLine", "FaultlineServer", "FaultlineUpload", "FaultlineCrashPickup", "FaultlineProtocol", "FaultlineFiles"]),
        // Test-only: a program that crashes in every way the tests need.
        .target(name: "CCrashProbes", path: "Tests/CrashProbes/CCrashProbes"),
        .executableTarget(name: "faultline-crasher", dependencies: ["Faultline", "FaultlineURLSession", "CFaultlineCrash", "CCrashProbes"],
                          path: "Tests/CrashProbes/faultline-crasher"),

        // Test-only: writes file logs, captures stderr and crashes for the logging tests.
        .executableTarget(name: "faultline-log-probe", dependencies: ["Faultline", "CCrashProbes"],
                          path: "Tests/LoggingProbes/faultline-log-probe"),

        // Test-only: writes rolling logs and uploads their archives for the log-archive tests.
        .executableTarget(name: "faultline-archive-probe", dependencies: ["Faultline"],
                          path: "Tests/LogArchiveProbes/faultline-archive-probe"),

        // MARK: Examples
        .executableTarget(name: "faultline-example", dependencies: ["Faultline"], path: "Examples/faultline-example"),

        // MARK: Benchmarks (run through tools/measure-*)
        .executableTarget(name: "faultline-sdk-bench", dependencies: ["Faultline", "FaultlineProtocol"],
                          path: "Benchmarks/faultline-sdk-bench"),
        .executableTarget(name: "faultline-trace-bench", dependencies: ["Faultline", "FaultlineServer", "FaultlineProtocol"],
                          path: "Benchmarks/faultline-trace-bench"),
        .executableTarget(name: "faultline-logging-bench", dependencies: ["Faultline"],
                          path: "Benchmarks/faultline-logging-bench"),
        .executableTarget(name: "faultline-ingest-bench", dependencies: ["FaultlineServer", "FaultlineProtocol"],
                          path: "Benchmarks/faultline-ingest-bench"),
        .executableTarget(name: "faultline-minidump-bench", dependencies: ["FaultlineMinidump", "FaultlineProtocol"],
                          path: "Benchmarks/faultline-minidump-bench"),

        // MARK: Tests
        .target(name: "CTestOutput", path: "Tests/CTestOutput"),
        .target(name: "FaultlineTestSupport", dependencies: ["FaultlineProtocol", "FaultlineFiles", "CZlib", "CTestOutput"], path: "Tests/FaultlineTestSupport"),
        // The server's test doubles (an in-memory core `Store`): apart from FaultlineTestSupport so
        // the SDK's and the crash core's tests never link the server.
        .target(name: "FaultlineServerTestSupport", dependencies: ["FaultlineServer", "FaultlineProtocol"], path: "Tests/FaultlineServerTestSupport"),
        .testTarget(name: "ProtocolTests", dependencies: ["FaultlineProtocol"]),
        .testTarget(name: "CrashCaptureTests",
                    dependencies: ["Faultline", "CFaultlineCrash", "FaultlineProtocol", "FaultlineTestSupport", "faultline-crasher"]),
        .testTarget(name: "SymbolicationTests",
                    dependencies: ["FaultlineSymbolication", "FaultlineFiles", "FaultlineProtocol", "FaultlineTestSupport", "faultline", "faultline-server", "faultline-crasher"]),
        .testTarget(name: "SDKTests",
                    dependencies: ["Faultline", "FaultlineURLSession", "FaultlineProtocol", "FaultlineThreads", "FaultlineTestSupport"]),
        .testTarget(name: "LoggingTests",
                    dependencies: [
                        "Faultline", "FaultlineProtocol", "FaultlineTestSupport", "faultline", "faultline-server", "faultline-log-probe", "faultline-crasher"
                    ]),
        .testTarget(name: "LogArchiveTests",
                    dependencies: [
                        "Faultline", "FaultlineServer", "FaultlineProtocol", "FaultlineHashing", "FaultlineTestSupport", "faultline", "faultline-server",
                        "faultline-archive-probe"
                    ]),
        .testTarget(name: "MinidumpTests",
                    dependencies: ["FaultlineMinidump", "FaultlineSymbolication", "FaultlineProtocol", "FaultlineTestSupport"]),
        .testTarget(name: "ServerTests",
                    dependencies: [
                        "FaultlineServer", "FaultlineUpload", "FaultlineProtocol", "FaultlineHashing", "FaultlineSymbolication", "FaultlineTestSupport",
                        "FaultlineServerTestSupport", "faultline", "faultline-server", "faultline-crasher"
                    ]),
    ]
)
