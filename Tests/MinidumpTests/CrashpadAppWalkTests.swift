// The server's two moments for a real Crashpad dump of Fixtures/CrashPrograms/crashpad_app.cpp
// (the end-to-end test's program): before any file of the process arrived (no CFI anywhere: what
// the walk finds must still be real return addresses), and after (CFI carries every thread,
// the workers blocked in libc's `pause` included, to the app's own functions).
import FaultlineMinidump
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Foundation
import XCTest

final class CrashpadAppWalkTests: XCTestCase {
    var dir = ""
    override func setUpWithError() throws { dir = TestSupport.makeTemporaryDirectory("crashpad-app-walk") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// The app as the end-to-end test ships it: CFI only in `.debug_frame`, split off.
    func buildApp() throws -> (binary: String, stripped: String) {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms/crashpad_app.cpp").path
        let binary = dir + "/crashpad_app", stripped = dir + "/crashpad_app.stripped"
        _ = try TestSupport.shell(
            "c++ -g -O2 -fno-exceptions -fno-asynchronous-unwind-tables -fno-unwind-tables -pthread -Wl,--build-id=sha1 '\(source)' -o '\(binary)'"
                + " && strip -o '\(stripped)' '\(binary)'")
        return (binary, stripped)
    }

    /// Crashes the app (it takes HANDLER DATABASE URL|-) and returns Crashpad's dump.
    func crash(_ binary: String) throws -> Minidump {
        let database = dir + "/db-\(UUID().uuidString.prefix(8))"
        let run = try TestSupport.run(binary, [try CrashpadDumps.handler(), database, "-"], timeout: 60)
        XCTAssertEqual(run.signal, SIGSEGV, "\(run)")
        let dumps = ["pending", "completed", "new"].flatMap { TestSupport.files(in: database + "/" + $0, suffix: ".dmp") }
        let path = try XCTUnwrap(dumps.first, "no minidump: \(run)")
        return try Minidump(bytes: [UInt8](try XCTUnwrap(FileManager.default.contents(atPath: path))))
    }

    /// The executable `PT_LOAD` segments of the file a module was loaded from, at its base: the
    /// ground truth a walked return address is checked against (independent of the walker).
    func executableRanges(of module: MinidumpModule, file: String) throws -> [ClosedRange<UInt64>] {
        let out = try TestSupport.shell("readelf -lW '\(file)'")
        return out.split(separator: "\n").compactMap { line -> ClosedRange<UInt64>? in
            let f = line.split(separator: " ", omittingEmptySubsequences: true)
            guard f.first == "LOAD", f.count >= 7, f.dropFirst(6).contains(where: { $0.contains("E") }),
                let vaddr = UInt64(f[2].dropFirst(2), radix: 16), let size = UInt64(f[5].dropFirst(2), radix: 16), size > 0
            else { return nil }
            return (module.base + vaddr)...(module.base + vaddr + size - 1)
        }
    }

    /// The file on this machine a module was loaded from (Crashpad names system libraries by soname).
    func file(of module: MinidumpModule, app binary: String) -> String? {
        if module.path == binary { return binary }
        let candidates = module.path.hasPrefix("/") ? [module.path] : ["/lib/x86_64-linux-gnu/" + module.path, "/lib64/" + module.path]
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Without any module file (the server before the upload), or with the system's libraries
    /// but nothing of the app, every frame the walk finds is a return address: inside an
    /// executable segment of a module, never a module's base or its headers (the auxiliary vector
    /// on the stack holds both), right after a call.
    func testWithoutTheAppsFilesEveryFrameIsAReturnAddressAfterACall() throws {
        let (binary, _) = try buildApp()
        let dump = try crash(binary)
        var checked = 0
        for lookup in [ModuleFileLookup.none, CrashpadDumps.lookup(refusing: [binary])] {
            checked += try checkReturnAddresses(MinidumpStackwalker(lookup: lookup).walk(dump), dump: dump, app: binary)
        }
        XCTAssertGreaterThan(checked, 0, "libc's CFI finds callers at least")
        // Crashpad keeps the release's numbers apart from the rest of `uname`: the event joins them.
        let event = MinidumpEvent.make(dump: dump, walk: MinidumpStackwalker().walk(dump), eventID: "e", timestamp: 0)
        let release = try TestSupport.shell("uname -r").trimmingCharacters(in: .whitespacesAndNewlines)
        let kernel = event["contexts"]?["os"]?["kernel_version"]?.stringValue ?? ""
        XCTAssertTrue(kernel.hasPrefix(release), "\(kernel) names the release \(release)")
    }

    /// Checks every frame but the context's against the module files on disk; returns how many.
    func checkReturnAddresses(_ walk: MinidumpStackwalk, dump: Minidump, app binary: String) throws -> Int {
        XCTAssertEqual(walk.threads.count, 3)
        var checked = 0
        for thread in walk.threads {
            for frame in thread.frames.dropFirst() {
                let pc = frame.address.address.value
                let module = try XCTUnwrap(dump.module(containing: pc), "\(frame) of thread \(thread.id) lies in no module: \(thread.frames)")
                guard pc > module.base + 16 else {
                    XCTFail("\(frame) is \(module.path)'s base or its ELF header: \(thread.frames)")
                    continue
                }
                guard let path = file(of: module, app: binary) else {
                    XCTFail("\(frame) in \(module.path), a module with no file (the vdso): nothing proves it a return address")
                    continue
                }
                let code = try executableRanges(of: module, file: path)
                XCTAssertTrue(code.contains { $0.contains(pc - 1) }, "\(frame) is not in \(path)'s code: \(thread.frames)")
                let disassembly = try TestSupport.shell(
                    "objdump -d --no-show-raw-insn --start-address=\(pc - module.base - 16) --stop-address=\(pc - module.base) '\(path)' | tail -1")
                XCTAssertTrue(disassembly.contains("call"), "\(frame) does not follow a call in \(path): \(disassembly)")
                checked += 1
            }
        }
        return checked
    }

    /// The server after the end-to-end test's upload: the app's debug file only (its CFI is in
    /// `.debug_frame`, its code sections are NOBITS), no file of libc. The workers blocked in
    /// libc's `pause` have no CFI there; the scan finds the return address into the app's
    /// `wait_for_orders` (its bytes unknown, but the debug file's CFI puts it inside a function)
    /// and CFI goes on from there. Nothing recovered lies outside a function.
    func testWithTheDebugFileOnlyTheWorkersReachTheAppFromLibc() throws {
        let (binary, _) = try buildApp()
        let dump = try crash(binary)
        let debug = binary + ".debug"
        _ = try TestSupport.shell("objcopy --only-keep-debug '\(binary)' '\(debug)'")
        let lookup = ModuleFileLookup { _, path, kind in path == binary && kind == .debug ? debug : nil }
        let walk = MinidumpStackwalker(lookup: lookup).walk(dump)
        let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
        let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
        XCTAssertEqual(
            crashing.map(\.function).prefix(3), ["inventory::Shelf::restock(int)", "inventory::nightly_restock(inventory::Shelf&, int)", "main"], "\(crashing)")
        XCTAssertEqual(crashing.map(\.trust).prefix(3), ["context", "cfi", "cfi"], "\(crashing)")
        let workers = (event["threads"]?["values"]?.arrayValue ?? []).filter { $0["crashed"]?.boolValue != true }
        XCTAssertEqual(workers.count, 2)
        for t in workers {
            let frames = CrashpadDumps.functions(t["stacktrace"])
            let names = frames.map(\.function)
            let i = try XCTUnwrap(names.firstIndex { $0.contains("wait_for_orders") }, "\(frames)")
            XCTAssertEqual(frames[i].trust, "scan", "\(frames)")
            XCTAssertTrue(names[i...].contains { $0.contains("worker") }, "\(frames)")
        }
    }

    /// With the files (the upload done), the workers blocked in `pause` walk through libc's CFI
    /// into the app's `wait_for_orders` and `worker`; the crashing thread reaches `main`.
    func testWithTheFilesEveryThreadReachesTheAppsFunctions() throws {
        let (binary, _) = try buildApp()
        let dump = try crash(binary)
        let debug = binary + ".debug"
        _ = try TestSupport.shell("objcopy --only-keep-debug '\(binary)' '\(debug)'")
        let system = CrashpadDumps.lookup()
        let lookup = ModuleFileLookup { buildID, path, kind in
            guard path == binary else { return system(buildID, path, kind) }
            return kind == .executable ? binary + ".stripped" : debug
        }
        let walk = MinidumpStackwalker(lookup: lookup).walk(dump)
        let event = CrashpadDumps.symbolicatedEvent(dump, walk: walk, files: [binary])
        let crashing = CrashpadDumps.functions(event["exception"]?["values"]?[0]?["stacktrace"])
        let names = crashing.map(\.function)
        XCTAssertEqual(names.first, "inventory::Shelf::restock(int)", "\(crashing)")
        XCTAssertTrue(names.contains("main"), "\(crashing)")
        let workers = (event["threads"]?["values"]?.arrayValue ?? []).filter { $0["crashed"]?.boolValue != true }
        XCTAssertEqual(workers.count, 2)
        for t in workers {
            let frames = CrashpadDumps.functions(t["stacktrace"])
            XCTAssertTrue(frames.map(\.function).contains { $0.contains("wait_for_orders") }, "\(frames)")
            XCTAssertTrue(frames.map(\.function).contains { $0.contains("worker") }, "\(frames)")
        }
    }
}
