// `faultline coredump` as the kernel runs it, on a real kernel core: a chained handler gets the
// core byte for byte, a pipe that stalls ends within the time budget with an incomplete report
// (the kernel is never held), a core larger than --keep-core is not kept, and the report belongs
// to the spool directory's owner.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class CoredumpHandlerTests: XCTestCase {
    nonisolated(unsafe) static var work: String?
    nonisolated(unsafe) static var core: String?
    let faultline = TestSupport.product("faultline")

    override class func setUp() {
        super.setUp()
        let dir = TestSupport.makeTemporaryDirectory("coredump-handler")
        work = dir
        do {
            let program = try KernelCores.build(.c, in: dir)
            core = try KernelCores.crash(program, "thread", in: dir).core
        } catch {
            FileHandle.standardError.write(Data("CoredumpHandlerTests set-up failed: \(error)\n".utf8))
        }
    }

    override class func tearDown() {
        if let work { try? FileManager.default.removeItem(atPath: work) }
        super.tearDown()
    }

    func kernelCore() throws -> String { try XCTUnwrap(Self.core, "no kernel core (see stderr for why)") }

    /// `faultline coredump ARGS < input` through the shell, as the kernel would start it.
    func coredump(_ args: String, input: String) throws -> (outcome: TestSupport.Outcome, report: JSONValue?) {
        let r = try TestSupport.run("/bin/sh", ["-c", "exec '\(faultline)' coredump \(args) < '\(input)'"], timeout: 60)
        let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // Not a ternary: JSONValue is ExpressibleByNilLiteral, so `nil` there would be `.null`.
        var report: JSONValue?
        if !path.isEmpty { report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: path))) }
        return (r, report)
    }

    func testChainedHandlerGetsTheWholeCoreAsTheKernelSentIt() throws {
        let core = try kernelCore()
        let work = try XCTUnwrap(Self.work)
        let copy = work + "/chained-copy"
        let (r, report) = try coredump("--spool '\(work)/spool-chained' 1 - 11 0 crash --then /bin/sh -c 'cat > \(copy)'", input: core)
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: copy)), try Data(contentsOf: URL(fileURLWithPath: core)))
        XCTAssertEqual(report?["core"]?["chained"]?.stringValue, "/bin/sh exited 0", report?.jsonString ?? r.description)
        XCTAssertEqual(report?["signal"]?["name"]?.stringValue, "SIGSEGV")
    }

    func testCrashesCommandReadsTheSpoolAsCrashEvents() throws {
        let core = try kernelCore()
        let work = try XCTUnwrap(Self.work)
        let spool = work + "/spool-crashes"
        let (r, report) = try coredump("--spool '\(spool)' 4242 - 11 1796045464 crash-c", input: core)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let events = try TestSupport.run(faultline, ["crashes", spool])
        XCTAssertEqual(events.exitCode, 0, events.description)
        let lines = events.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, events.description)
        let event = try JSONValue.parse(Data(lines[0].utf8))
        XCTAssertEqual(event["event_id"]?.stringValue, report?["event_id"]?.stringValue)
        XCTAssertEqual(report?["arch"]?.stringValue, "x86_64", "the core reader's one architecture, named in its report")
        XCTAssertEqual(event["contexts"]?["device"]?["arch"]?.stringValue, "x86_64")
        XCTAssertEqual(event["contexts"]?["process"]?["pid"]?.int64Value, 4242, "%P is the pid the host knows")
        XCTAssertEqual(event["exception"]?["values"]?[0]?["type"]?.stringValue, "SIGSEGV")
        XCTAssertEqual(event["threads"]?["values"]?.arrayValue?.count, 2, "both threads of the program")
        XCTAssertEqual(event["timestamp"]?.doubleValue.map(Int.init), 1_796_045_464, "%t is the crash's time")
    }

    func testAStalledPipeEndsWithinTheBudgetWithAnIncompleteReport() throws {
        let core = try kernelCore()
        let work = try XCTUnwrap(Self.work)
        let fifo = work + "/stalled"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // The headers and notes, then a writer that keeps the pipe open and sends nothing more
        // (it ends by itself later; the handler must not wait for it).
        let r = try TestSupport.run(
            "/bin/sh",
            [
                "-c",
                "(head -c 65536 '\(core)'; sleep 20) > '\(fifo)' & exec '\(faultline)' coredump --timeout 2 --spool '\(work)/spool-stalled' - - - - - < '\(fifo)'"
            ],
            timeout: 15)
        XCTAssertEqual(r.exitCode, 0, "the handler ended on its own, with a report: \(r)")
        let path = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let report = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertTrue(report["core"]?["incomplete"]?.stringValue?.contains("time budget") == true, report.jsonString)
        XCTAssertEqual(report["signal"]?["name"]?.stringValue, "SIGSEGV", "the notes came before the stall")
        XCTAssertTrue(r.stderr.contains("incomplete"), r.description)
    }

    func testACoreLargerThanKeepCoreIsNotKept() throws {
        let core = try kernelCore()
        let work = try XCTUnwrap(Self.work)
        let spool = work + "/spool-capped"
        let (r, report) = try coredump("--spool '\(spool)' --keep-core 64K - - - - -", input: core)
        XCTAssertEqual(r.exitCode, 0, r.description)
        XCTAssertNil(report?["core"]?["kept_core"], report?.jsonString ?? "")
        XCTAssertTrue(report?["core"]?["core_not_kept"]?.stringValue?.contains("larger than 65536 bytes") == true, report?.jsonString ?? "")
        let names = try FileManager.default.contentsOfDirectory(atPath: spool)
        XCTAssertEqual(names.filter { !$0.hasSuffix(".crash.json") }, [], "no core, no temporary left")
    }

    func testReportsBelongToTheSpoolDirectorysOwner() throws {
        let core = try kernelCore()
        let work = try XCTUnwrap(Self.work)
        let spool = work + "/spool-owned"
        try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
        // As root (how the kernel runs the handler) the spool may belong to an app's user.
        let owner: uid_t = getuid() == 0 ? 65534 : getuid()
        XCTAssertEqual(chown(spool, owner, owner == 65534 ? 65534 : getgid()), 0)
        let (r, _) = try coredump("--spool '\(spool)' --keep-core 64M - - - - -", input: core)
        XCTAssertEqual(r.exitCode, 0, r.description)
        let files = try FileManager.default.contentsOfDirectory(atPath: spool)
        XCTAssertEqual(files.count, 2, "\(files)")
        for f in files {
            var st = stat()
            XCTAssertEqual(stat(spool + "/" + f, &st), 0)
            XCTAssertEqual(st.st_uid, owner, f)
            XCTAssertEqual(st.st_mode & 0o777, 0o600, f)
        }
    }

    /// A real core with bytes overwritten (mostly in the headers and notes, where the parsing is):
    /// both readers end with an exit code, never by a signal. The positions are the same every run.
    func testCorruptedCoresNeverCrashTheReaders() throws {
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try kernelCore())))
        let work = try XCTUnwrap(Self.work)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for variant in 0..<30 {
            var bytes = original
            for _ in 0..<[1, 4, 16, 64][variant % 4] {
                bytes[next(variant % 5 == 0 ? bytes.count : min(bytes.count, 12_000))] = UInt8(next(256))
            }
            let path = work + "/corrupt-\(variant)"
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let read = try TestSupport.run(faultline, ["symbolicate", "--no-cache", "--no-system", "--no-debuginfod", path])
            XCTAssertNil(read.signal, "symbolicate, variant \(variant): \(read)")
            XCTAssertTrue([0, 1, 3, 4].contains(read.exitCode ?? -1), "symbolicate, variant \(variant): \(read)")
            let (piped, _) = try coredump("--spool '\(work)/spool-corrupt' - - - - -", input: path)
            XCTAssertNil(piped.signal, "coredump, variant \(variant): \(piped)")
            XCTAssertTrue([0, 3].contains(piped.exitCode ?? -1), "coredump, variant \(variant): \(piped)")
        }
    }

    /// A core cut inside its notes (the kernel's pipe closed early) says it is truncated, not
    /// that the process had no threads.
    func testACoreCutInsideItsNotesSaysItIsTruncated() throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try kernelCore())))
        func u64(_ at: Int) -> Int { (0..<8).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let (phoff, phentsize, phnum) = (u64(0x20), u16(0x36), u16(0x38))
        let note = try XCTUnwrap((0..<phnum).map { phoff + $0 * phentsize }.first { bytes[$0] == 4 }, "a PT_NOTE header")
        let cut = u64(note + 8) + 16  // inside the first note's header
        let work = try XCTUnwrap(Self.work)
        let path = work + "/cut-in-notes"
        try Data(bytes.prefix(cut)).write(to: URL(fileURLWithPath: path))
        let (r, report) = try coredump("--spool '\(work)/spool-cut' - - - - -", input: path)
        XCTAssertEqual(r.exitCode, 3, r.description)
        XCTAssertNil(report)
        XCTAssertTrue(r.stderr.contains("truncated") && r.stderr.contains("notes"), r.description)
        XCTAssertFalse(r.stderr.contains("NT_PRSTATUS"), r.description)
    }

    func testUsageErrorsAndANonCoreOnStdin() throws {
        let work = try XCTUnwrap(Self.work)
        XCTAssertEqual(try TestSupport.run(faultline, ["coredump", "--keep-core", "lots"]).exitCode, 2)
        XCTAssertEqual(try TestSupport.run(faultline, ["coredump", "--then", "relative"]).exitCode, 2)
        XCTAssertTrue(try TestSupport.run(faultline, ["coredump", "--help"]).stdout.contains("%P %i %s %t %e"))
        let notACore = work + "/not-a-core"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notACore))
        let (r, report) = try coredump("--spool '\(work)/spool-junk' - - - - -", input: notACore)
        XCTAssertEqual(r.exitCode, 3, r.description)
        XCTAssertNil(report)
        XCTAssertTrue(r.stderr.contains("truncated") || r.stderr.contains("not an ELF core"), r.description)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work + "/spool-junk"), [], "nothing left behind")
    }
}
