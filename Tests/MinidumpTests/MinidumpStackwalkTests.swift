// Walking real Crashpad dumps: CFI from the module files, frame pointers and stack scanning
// where there is none; the event symbolicated with the binary built here names the functions.
import FaultlineMinidump
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Foundation
import XCTest

final class MinidumpStackwalkTests: XCTestCase {
    var dir = ""
    override func setUpWithError() throws { dir = TestSupport.makeTemporaryDirectory("minidump-walk") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testCrashingThreadWalksWithCFIAndNamesItsFunctions() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, in: dir))
        let walk = MinidumpStackwalker(lookup: CrashpadDumps.lookup()).walk(dump)
        let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])

        let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
        XCTAssertEqual(crashing.prefix(3).map(\.function), ["crash_here", "caller", "main"], "\(crashing)")
        XCTAssertEqual(crashing.prefix(3).map(\.trust), ["context", "cfi", "cfi"], "\(crashing)")
        XCTAssertTrue(crashing.dropFirst(3).allSatisfy { $0.trust == "cfi" }, "libc has CFI too: \(crashing)")
        XCTAssertEqual(walk.crashingThread?.stoppedBy, "end of stack")
        // The program's frames are in-app; libc's and the loader's (named by soname) are not.
        for frame in event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue ?? [] {
            let package = frame["package"]?.stringValue ?? ""
            XCTAssertEqual(frame["in_app"]?.boolValue, package == binary, "\(package)")
        }

        let mechanism = event["exception"]?["values"]?[0]?["mechanism"]
        XCTAssertEqual(mechanism?["type"]?.stringValue, "minidump")
        XCTAssertEqual(mechanism?["handled"]?.boolValue, false)
        XCTAssertEqual(mechanism?["synthetic"]?.boolValue, true)
        XCTAssertEqual(event["exception"]?["values"]?[0]?["type"]?.stringValue, "SIGSEGV")

        // Every thread is listed; the workers' stacks go through the functions they wait in.
        let threads = event["threads"]?["values"]?.arrayValue ?? []
        XCTAssertEqual(threads.count, 3)
        XCTAssertEqual(threads.filter { $0["crashed"]?.boolValue == true }.count, 1)
        XCTAssertEqual(threads.compactMap { $0["name"]?.stringValue }.sorted(), ["crasher", "waiter", "waiter"])
        for t in threads where t["crashed"]?.boolValue != true {
            let names = CrashpadDumps.functions(t["stacktrace"]).map(\.function)
            XCTAssertTrue(names.contains("wait_in_worker") && names.contains("worker"), "\(names)")
        }
        let images = event["debug_meta"]?["images"]?.arrayValue ?? []
        let own = try XCTUnwrap(images.first { $0["code_file"]?.stringValue == binary })
        XCTAssertEqual(own["code_id"]?.stringValue, try ELFInfo.read(path: binary).buildID?.hex)
        XCTAssertEqual(event["contexts"]?["device"]?["arch"]?.stringValue, "x86_64")
        XCTAssertEqual(event["contexts"]?["os"]?["name"]?.stringValue, "Linux")
    }

    /// An abort: the dump's context is inside libc (raise), and CFI carries the walk through
    /// abort to the program's functions.
    func testAbortWalksFromLibcToTheCaller() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, how: "abort", in: dir))
        XCTAssertEqual(dump.exception?.signal.name, "SIGABRT")
        let walk = MinidumpStackwalker(lookup: CrashpadDumps.lookup()).walk(dump)
        let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
        let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
        let names = crashing.map(\.function)
        let i = try XCTUnwrap(names.firstIndex(of: "crash_here"), "\(crashing)")
        XCTAssertEqual(Array(names[i..<min(i + 3, names.count)]), ["crash_here", "caller", "main"], "\(crashing)")
        XCTAssertTrue(names[..<i].contains("abort"), "\(crashing)")
        XCTAssertEqual(crashing.first?.trust, "context")
        XCTAssertTrue(crashing.dropFirst().prefix(i + 2).allSatisfy { $0.trust == "cfi" }, "\(crashing)")
    }

    /// A call through a null function pointer: the pc is 0, in no module, so nothing has CFI
    /// for it; the return address the call pushed is at rsp, after a call instruction (`scan`),
    /// and CFI takes over from the caller on.
    func testNullFunctionCallRecoversTheCallerFromTheStack() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, how: "nullcall", in: dir))
        XCTAssertEqual(dump.startContext(of: try XCTUnwrap(dump.crashingThread)).instructionPointer, 0)
        let walk = MinidumpStackwalker(lookup: CrashpadDumps.lookup()).walk(dump)
        let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
        let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
        XCTAssertEqual(crashing.dropFirst().prefix(3).map(\.function), ["crash_here", "caller", "main"], "\(crashing)")
        XCTAssertEqual(crashing.prefix(4).map(\.trust), ["context", "scan", "cfi", "cfi"], "\(crashing)")
    }

    /// No CFI for the program's own code (built without unwind tables, then stripped of the
    /// `.debug_frame` that -g puts there instead). With frame pointers the walk follows rbp
    /// (`fp`); crash_here's caller may instead be the word at rsp (`scan`) when the compiler set
    /// up crash_here's frame only on another path. Without frame pointers every frame is scanned.
    /// The same functions either way.
    func testWithoutCFIFallsBackToFramePointersThenScanning() throws {
        let noCFI = ["-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"]
        for (variant, flags, expected) in [
            ("fp", noCFI + ["-fno-omit-frame-pointer"], [["context"], ["fp", "scan"], ["fp"]]),
            ("scan", noCFI + ["-fomit-frame-pointer"], [["context"], ["scan"], ["scan"]])
        ] {
            let binary = try CrashpadDumps.buildCrasher(in: dir, name: "crasher-\(variant)", flags: flags)
            let stripped = binary + ".stripped"
            _ = try TestSupport.shell("strip -o \(stripped) \(binary)")
            let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, in: dir))
            let walk = MinidumpStackwalker(lookup: CrashpadDumps.lookup(extra: [stripped], refusing: [binary])).walk(dump)
            let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
            let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
            XCTAssertEqual(crashing.prefix(3).map(\.function), ["crash_here", "caller", "main"], "\(variant): \(crashing)")
            for (frame, allowed) in zip(crashing, expected) {
                XCTAssertTrue(allowed.contains(frame.trust), "\(variant): \(frame) not \(allowed) in \(crashing)")
            }
        }
    }

    /// CFI that lives only in the separate debug file (`.debug_frame`: built without unwind
    /// tables, so `-g` puts it there, then split off): found through libdwfl's find_debuginfo
    /// beside the stripped executable, and with the debug file alone standing in for the executable.
    func testCFIFromTheSeparateDebugFile() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir, flags: ["-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"])
        let debug = binary + ".debug", stripped = binary + ".stripped"
        _ = try TestSupport.shell("objcopy --only-keep-debug \(binary) \(debug) && strip --strip-debug -o \(stripped) \(binary)")
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, in: dir))
        let system = CrashpadDumps.lookup()
        for (variant, executable) in [("stripped executable + debug file", stripped as String?), ("debug file only", nil)] {
            let lookup = ModuleFileLookup { buildID, path, kind in
                guard path == binary else { return system(buildID, path, kind) }
                return kind == .executable ? executable : debug
            }
            let walk = MinidumpStackwalker(lookup: lookup).walk(dump)
            let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
            let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
            XCTAssertEqual(crashing.prefix(3).map(\.function), ["crash_here", "caller", "main"], "\(variant): \(crashing)")
            XCTAssertEqual(crashing.prefix(3).map(\.trust), ["context", "cfi", "cfi"], "\(variant): \(crashing)")
        }
        // Neither file: the same dump falls back (control for the two cases above).
        let bare = MinidumpStackwalker(lookup: CrashpadDumps.lookup(refusing: [binary])).walk(dump)
        XCTAssertNotEqual(bare.crashingThread?.frames.dropFirst().first?.trust, .cfi)
    }

    /// Without any module file the walk still ends, within its limits, on every thread.
    func testWalkWithoutModuleFilesStaysBounded() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, in: dir))
        var limits = MinidumpStackwalker.Limits()
        limits.maxFramesPerThread = 2
        let walk = MinidumpStackwalker(limits: limits).walk(dump)
        XCTAssertEqual(walk.threads.count, 3)
        for t in walk.threads {
            XCTAssertEqual(t.frames.first?.trust, .context)
            XCTAssertLessThanOrEqual(t.frames.count, 2)
        }
    }
}
