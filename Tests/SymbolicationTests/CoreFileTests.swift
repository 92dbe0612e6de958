// Kernel core files of unmodified C, C++ and Swift programs (null dereference, abort, stack
// overflow, a crash on a second thread): `faultline symbolicate CORE` against `eu-stack --core`
// on the crashing thread, frame for frame — the pc, whether it is the interrupted instruction or a
// return address, and the function — and the report `faultline coredump` makes of the same core
// on stdin carries the same frames.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class CoreFileTests: XCTestCase {
    nonisolated(unsafe) static var work: String?
    let faultline = TestSupport.product("faultline")

    override class func setUp() {
        super.setUp()
        work = TestSupport.makeTemporaryDirectory("core-files")
    }

    override class func tearDown() {
        if let work { try? FileManager.default.removeItem(atPath: work) }
        super.tearDown()
    }

    /// A function each crash must show on its crashing thread, by language and kind.
    static let expectedFunction: [KernelCores.Language: [String: String]] = [
        .c: ["null": "read_through", "abort": "give_up", "overflow": "recurse", "thread": "worker"],
        .cxx: ["null": "crashing::readWidget", "abort": "crashing::giveUp", "overflow": "crashing::recurse", "thread": "crashOnSecondThread"],
        .swift: ["null": "readThrough", "abort": "giveUp", "overflow": "recurse", "thread": "crashOnSecondThread"]
    ]

    func testCProgramCoresMatchEuStackFrameForFrame() throws { try checkCores(of: .c) }
    func testCxxProgramCoresMatchEuStackFrameForFrame() throws { try checkCores(of: .cxx) }
    func testSwiftProgramCoresMatchEuStackFrameForFrame() throws { try checkCores(of: .swift) }

    func checkCores(of language: KernelCores.Language) throws {
        let work = try XCTUnwrap(Self.work)
        let program = try KernelCores.build(language, in: work)
        for kind in KernelCores.crashKinds {
            let (core, outcome, _) = try KernelCores.crash(program, kind, in: work)
            let label = "\(language.rawValue) \(kind)"
            XCTAssertEqual(outcome.signal, kind == "abort" ? SIGABRT : SIGSEGV, "\(label): \(outcome)")

            let reference = try EuStack.crashingThread(core: core, executable: program)
            let ours = try symbolicatedCrashingThread(core: core, label: label)
            XCTAssertEqual(ours.threadID, reference.tid, "\(label): the crashing thread is the one eu-stack lists first")
            // eu-stack prints at most 64 frames here (deep stacks: its walk slows with depth).
            let compared = min(reference.frames.count, 64)
            XCTAssertGreaterThan(compared, 2, "\(label): eu-stack walked \(reference.frames)")
            if reference.frames.count < 64 {
                XCTAssertEqual(ours.frames.count, reference.frames.count, "\(label): frame count\nours: \(ours.frames)\neu-stack: \(reference.frames)")
            }
            for i in 0..<min(compared, ours.frames.count) {
                let (mine, theirs) = (ours.frames[i], reference.frames[i])
                XCTAssertEqual(mine.address, theirs.address, "\(label) frame #\(i): pc")
                // The same function, or another name of its symbol (raise/gsignal: aliases at one
                // address, of which each tool picks one); unnamed by both (a local symbol of a
                // library without its symbol table) is agreement too.
                let agree =
                    (theirs.names.isEmpty && mine.names.isEmpty) || theirs.names.contains { mine.names.contains($0) }
                    || SymbolAliases.sameSymbol(theirs.names, mine.names, module: mine.module, buildID: mine.buildID)
                XCTAssertTrue(agree, "\(label) frame #\(i) at \(Address(theirs.address).hex): eu-stack says \(theirs.names), we say \(mine.names)")
            }
            XCTAssertTrue(
                ours.frames.contains { f in f.names.contains { $0.contains(Self.expectedFunction[language]![kind]!) } },
                "\(label): \(ours.frames.map(\.names))")

            // The pipe handler's report of the same core: the same walk, each frame's kind as
            // eu-stack marks it (an activation is exact; a return address is looked up minus one).
            let report = try coredumpReport(core: core, spool: work + "/spool-\(language.rawValue)-\(kind)")
            let frames = report["frames"]?.arrayValue ?? []
            for i in 0..<min(compared, frames.count) {
                XCTAssertEqual(frames[i]["address"]?.stringValue, Address(reference.frames[i].address).hex, "\(label) report frame #\(i)")
                XCTAssertEqual(
                    frames[i]["kind"]?.stringValue, reference.frames[i].isActivation ? "pc" : "return", "\(label) report frame #\(i): pc or return address")
            }
            XCTAssertEqual(report["signal"]?["number"]?.int64Value, Int64(outcome.signal ?? 0), "\(label)")
            XCTAssertEqual(report["thread"]?["tid"]?.int64Value, Int64(reference.tid), "\(label)")
            if kind == "overflow" {
                XCTAssertEqual(report["stack_overflow"]?.boolValue, true, "\(label): \(report["signal"]!.jsonString)")
                XCTAssertNotNil(report["frames_omitted"], "\(label): a deep stack keeps its innermost and outermost frames")
            }
            if kind == "thread" {
                XCTAssertNotEqual(report["thread"]?["tid"]?.int64Value, report["process"]?["pid"]?.int64Value, "\(label): crashed off the main thread")
                XCTAssertGreaterThanOrEqual(report["threads"]?.arrayValue?.count ?? 0, 2, "\(label): every thread is listed")
            }
        }
    }

    func testExeNamesAProgramThatMovedAfterTheCrash() throws {
        let work = try XCTUnwrap(Self.work)
        let program = try KernelCores.build(.c, in: work + "/moved")
        let (core, _, _) = try KernelCores.crash(program, "null", in: work + "/moved")
        let elsewhere = work + "/moved-program"
        try FileManager.default.moveItem(atPath: program, toPath: elsewhere)
        let without = try symbolicate([core], cached: false)
        XCTAssertFalse(without.stdout.contains("read_through"), "the program is gone: \(without)")
        let with = try symbolicate([core, "--exe", elsewhere], cached: false)
        XCTAssertEqual(with.exitCode, 0, with.description)
        XCTAssertTrue(with.stdout.contains("in read_through at "), with.description)
        XCTAssertTrue(with.stdout.hasPrefix("SIGSEGV: SIGSEGV / SEGV_MAPERR at 0x0"), with.description)
    }

    /// `--exe` names the program only when it is the build the core ran: another build's symbols
    /// would name every frame wrongly (libdwfl takes the file it is given). Refused with both
    /// build-ids on stderr; the program's own frames then stay unnamed.
    func testExeOfAnotherBuildIsRefused() throws {
        let work = try XCTUnwrap(Self.work)
        let program = try KernelCores.build(.c, in: work + "/rebuilt")
        let (core, _, _) = try KernelCores.crash(program, "null", in: work + "/rebuilt")
        let other = work + "/rebuilt/other-build"
        _ = try TestSupport.shell("printf 'int unrelated(void) { return 7; }\\nint main(void) { return unrelated(); }\\n' | cc -g -x c - -o '\(other)'")
        try FileManager.default.removeItem(atPath: program)
        let r = try symbolicate([core, "--exe", other], cached: false)
        XCTAssertNotEqual(r.exitCode, 0, "nothing of the program's own is named (1), or only the libraries' (4): \(r)")
        XCTAssertTrue(r.stderr.contains("is not the program this core ran"), r.description)
        XCTAssertFalse(r.stdout.contains("unrelated") || r.stdout.contains("in main at"), "no name from the other build: \(r.stdout)")
    }

    func testStrippedProgramIsNamedFromADebugDirectory() throws {
        let work = try XCTUnwrap(Self.work)
        let dir = work + "/stripped"
        let program = try KernelCores.build(.c, in: dir)
        let id = try XCTUnwrap(
            try TestSupport.shell("readelf -n '\(program)'").split(separator: "\n").first { $0.contains("Build ID:") }?.split(separator: " ").last)
        let debugFile = dir + "/debug/.build-id/\(id.prefix(2))/\(id.dropFirst(2)).debug"
        try FileManager.default.createDirectory(atPath: (debugFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        _ = try TestSupport.shell("objcopy --only-keep-debug '\(program)' '\(debugFile)' && strip --strip-all '\(program)'")
        let (core, _, _) = try KernelCores.crash(program, "thread", in: dir)
        let without = try symbolicate([core], cached: false)
        XCTAssertFalse(without.stdout.contains("null_dereference"), "stripped: no names of its own \(without)")
        // .eh_frame stays in a stripped program: the walk is whole either way; the names come
        // from the debug file found by build-id.
        let with = try symbolicate([core, "--debug-dir", dir + "/debug"], cached: false)
        XCTAssertEqual(with.exitCode, 0, with.description)
        for name in ["read_through", "null_dereference", "worker"] {
            XCTAssertTrue(with.stdout.contains("in \(name) at \(TestSupport.repositoryRoot().path)/Fixtures/CoreDumps/crash.c:"), "\(name): \(with)")
        }
    }

    func testCutOrForeignCoresAreInputErrors() throws {
        let work = try XCTUnwrap(Self.work)
        let program = try KernelCores.build(.c, in: work + "/cut")
        let (core, _, _) = try KernelCores.crash(program, "abort", in: work + "/cut")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: core))
        let cut = work + "/cut/core-cut"
        try bytes.prefix(40).write(to: URL(fileURLWithPath: cut))
        let r = try symbolicate([cut])
        XCTAssertEqual(r.exitCode, 3, r.description)
        XCTAssertTrue(r.stderr.contains("core file is truncated") || r.stderr.contains("not an ELF core"), r.description)
        // Cut after the notes: the threads are still listed, their stacks unwalkable.
        let afterNotes = work + "/cut/core-notes-only"
        try bytes.prefix(64 * 1024).write(to: URL(fileURLWithPath: afterNotes))
        let partial = try symbolicate([afterNotes])
        XCTAssertTrue(partial.stdout.hasPrefix("SIGABRT: SIGABRT / SI_TKILL"), partial.description)
        XCTAssertTrue(partial.stderr.contains("the core is cut short"), "said, not a quiet short stack: \(partial)")
        XCTAssertEqual(partial.exitCode, 4, partial.description)
        let stdin = try TestSupport.run("/bin/sh", ["-c", "'\(faultline)' coredump --spool '\(work)/cut/spool' 1 1 6 0 x < '\(cut)'"])
        XCTAssertEqual(stdin.exitCode, 3, stdin.description)
        XCTAssertTrue(stdin.stderr.contains("truncated"), stdin.description)
    }

    // MARK: - Running the two tools

    struct Frame: CustomStringConvertible {
        var address: UInt64
        var names: Set<String>
        var module: String?
        var buildID: String?
        var description: String { "\(Address(address).hex) \(names.sorted())" }
    }

    /// `cached`: share an index cache across the class (an identical build elsewhere has the
    /// same build-id, so its index would name the frames of a program that is gone).
    func symbolicate(_ args: [String], cached: Bool = true) throws -> TestSupport.Outcome {
        try TestSupport.run(
            faultline, ["symbolicate", "--no-debuginfod"] + (cached ? ["--cache-dir", Self.work! + "/cache"] : ["--no-cache"]) + args,
            removingEnvironment: ["DEBUGINFOD_URLS"], timeout: 120)
    }

    /// The crashing thread of `faultline symbolicate --json`, innermost first, one entry per
    /// physical frame with every name it has (inlined calls, mangled and demangled).
    func symbolicatedCrashingThread(core: String, label: String) throws -> (threadID: Int, frames: [Frame]) {
        let r = try symbolicate(["--json", core])
        XCTAssertTrue(r.exitCode == 0 || r.exitCode == 4, "\(label): \(r)")
        let event = try JSONValue.parse(Data(r.stdout.utf8))
        let exception = try XCTUnwrap(event["exception"]?["values"]?[0], "\(label): \(r)")
        var buildIDs: [String: String] = [:]
        for image in event["debug_meta"]?["images"]?.arrayValue ?? [] {
            if let file = image["code_file"]?.stringValue, let id = image["code_id"]?.stringValue { buildIDs[file] = id }
        }
        var frames: [Frame] = []
        var group = Set<String>()
        for f in (exception["stacktrace"]?["frames"]?.arrayValue ?? []).reversed() {
            for key in ["function", "raw_function", "symbol"] { if let n = f[key]?.stringValue { group.insert(EuStack.unversioned(n)) } }
            // Inlined calls come innermost first, then the out-of-line frame that closes the group.
            if f["data"]?["faultline_inlined"]?.boolValue == true { continue }
            let address = SentryStackTrace.address(f["instruction_addr"]) ?? 0
            let module = f["package"]?.stringValue
            if address != 0 { frames.append(Frame(address: address, names: group, module: module, buildID: module.flatMap { buildIDs[$0] })) }
            group = []
        }
        return (Int(exception["thread_id"]?.int64Value ?? -1), frames)
    }

    func coredumpReport(core: String, spool: String) throws -> JSONValue {
        let r = try TestSupport.run("/bin/sh", ["-c", "'\(faultline)' coredump --spool '\(spool)' - - - - - < '\(core)'"], timeout: 120)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(path.hasPrefix(spool + "/") && path.hasSuffix(".crash.json"), r.description)
        return try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
    }
}

/// Whether two names are one symbol: both defined at the same address in the module's dynamic
/// symbol table or in its debug file's full one (found by build-id under /usr/lib/debug).
enum SymbolAliases {
    static func sameSymbol(_ a: Set<String>, _ b: Set<String>, module: String?, buildID: String?) -> Bool {
        guard let module, !a.isEmpty, !b.isEmpty else { return false }
        var tables = ["nm -D --defined-only '\(module)'"]
        if let id = buildID, id.count > 2 {
            tables.append("nm --defined-only '/usr/lib/debug/.build-id/\(id.prefix(2))/\(id.dropFirst(2)).debug'")
        }
        var addresses: [String: Set<String>] = [:]
        for command in tables {
            for line in ((try? TestSupport.shell(command + " 2>/dev/null || true")) ?? "").split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3 else { continue }
                addresses[EuStack.unversioned(String(fields[2])), default: []].insert(String(fields[0]))
            }
        }
        let left = a.reduce(into: Set<String>()) { $0.formUnion(addresses[$1] ?? []) }
        let right = b.reduce(into: Set<String>()) { $0.formUnion(addresses[$1] ?? []) }
        return !left.isDisjoint(with: right)
    }
}

/// elfutils' eu-stack, the reference: its first thread (the one that took the signal).
enum EuStack {
    struct Frame: CustomStringConvertible {
        var address: UInt64
        /// No " - 1": eu-stack looked the pc up as it is (the interrupted instruction).
        var isActivation: Bool
        /// Its symbol-table name and its DWARF name (-d), without symbol versions.
        var names: Set<String>
        var description: String { "\(Address(address).hex)\(isActivation ? "" : " - 1") \(names.sorted())" }
    }

    static func crashingThread(core: String, executable: String) throws -> (tid: Int, frames: [Frame]) {
        let plain = try run(core: core, executable: executable, extra: [])
        let dwarf = try run(core: core, executable: executable, extra: ["-d"])
        XCTAssertEqual(plain.tid, dwarf.tid)
        var frames = plain.frames
        for i in frames.indices where i < dwarf.frames.count && dwarf.frames[i].address == frames[i].address {
            frames[i].names.formUnion(dwarf.frames[i].names)
        }
        return (plain.tid, frames)
    }

    /// `#3  0x00007f…9a - 1 name` lines of the first `TID n:` block.
    static func run(core: String, executable: String, extra: [String]) throws -> (tid: Int, frames: [Frame]) {
        let r = try TestSupport.run(
            "/usr/bin/eu-stack", ["--core", core, "-e", executable, "-a", "-n", "64"] + extra, removingEnvironment: ["DEBUGINFOD_URLS"], timeout: 120)
        var tid = -1
        var frames: [Frame] = []
        for line in r.stdout.split(separator: "\n") {
            if line.hasPrefix("TID ") {
                if tid != -1 { break }
                tid = Int(line.dropFirst(4).prefix { $0.isNumber }) ?? -1
                continue
            }
            guard tid != -1, line.hasPrefix("#") else { continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let address = UInt64(fields[1].dropFirst(2), radix: 16) else { continue }
            let isActivation = !(fields.count >= 4 && fields[2] == "-" && fields[3] == "1")
            let rest = fields.dropFirst(isActivation ? 2 : 4)
            let name = rest.joined(separator: " ")
            frames.append(Frame(address: address, isActivation: isActivation, names: name.isEmpty ? [] : [unversioned(name)]))
        }
        guard tid != -1, !frames.isEmpty else {
            throw KernelCores.Unavailable(description: "eu-stack printed no thread for \(core): \(r)")
        }
        return (tid, frames)
    }

    /// `__libc_start_main@@GLIBC_2.34` → `__libc_start_main`.
    static func unversioned(_ name: String) -> String {
        guard !name.hasPrefix("@"), let at = name.firstIndex(of: "@") else { return name }
        return String(name[..<at])
    }
}
