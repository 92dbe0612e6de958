// The minidump reader over dumps Crashpad's own handler writes at test time, and over those dumps
// cut short and corrupted: every fault is a typed MinidumpError, never a crash.
import FaultlineMinidump
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Foundation
import XCTest

final class MinidumpReaderTests: XCTestCase {
    var dir = ""
    override func setUpWithError() throws { dir = TestSupport.makeTemporaryDirectory("minidump") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testCrashpadDumpListsThreadsModulesExceptionAndSystem() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let dump = try Minidump(bytes: try CrashpadDumps.crash(binary, in: dir))

        XCTAssertEqual(dump.threads.count, 3, "main and two workers")
        XCTAssertEqual(dump.threads.compactMap(\.name).sorted(), ["crasher", "waiter", "waiter"], "the thread-names stream")
        let exception = try XCTUnwrap(dump.exception)
        XCTAssertEqual(exception.signal.name, "SIGSEGV")
        XCTAssertEqual(exception.signal.codeName, "SEGV_MAPERR")
        XCTAssertEqual(exception.address, 16, "the program writes to address 16")
        let crashed = try XCTUnwrap(dump.crashingThread, "the exception names a listed thread")
        let context = try XCTUnwrap(dump.startContext(of: crashed).amd64)
        XCTAssertTrue(context.hasControl && context.hasInteger)

        let own = try XCTUnwrap(dump.modules.first { $0.path == binary }, "the executable is in the module list: \(dump.modules.map(\.path))")
        XCTAssertEqual(own.buildID, try ELFInfo.read(path: binary).buildID, "BpEL record = the ELF's build-id")
        XCTAssertTrue(own.contains(context.rip), "the crash is in the executable")
        XCTAssertTrue(dump.modules.contains { $0.path.contains("libc.so") })

        let system = try XCTUnwrap(dump.systemInfo)
        XCTAssertEqual(system.architecture, "x86_64")
        XCTAssertEqual(system.osName, "Linux")
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        XCTAssertTrue(
            (system.versionText ?? "").contains(release) || release.hasPrefix("\(system.majorVersion).\(system.minorVersion)"),
            "kernel version \(system.versionText ?? system.version) vs uname \(release)")

        // Every thread's stack was captured, and the walk can read the crashing one at its rsp.
        for t in dump.threads {
            XCTAssertNotNil(dump.memory.read(address: t.stackStart, count: 8), "stack of thread \(t.id)")
        }
        XCTAssertNotNil(dump.memory.readWord(context.rsp))
        XCTAssertNil(dump.memory.read(address: 8, count: 8), "address 8 was never captured")
        XCTAssertNotNil(dump.crashpadInfo, "Crashpad writes its own stream")
    }

    /// Crashpad's own stream carries the process annotations the handler was given.
    func testCrashpadAnnotationsAreReadAndReachTheEvent() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let bytes = try CrashpadDumps.crash(
            binary, handlerArguments: ["--annotation=release=shop@2.1", "--annotation=channel=beta"], in: dir)
        let dump = try Minidump(bytes: bytes)
        let info = try XCTUnwrap(dump.crashpadInfo)
        XCTAssertEqual(info.simpleAnnotations["release"], "shop@2.1", "\(info.simpleAnnotations)")
        XCTAssertEqual(info.simpleAnnotations["channel"], "beta")
        let event = MinidumpEvent.make(dump: dump, walk: MinidumpStackwalker().walk(dump), eventID: "e", timestamp: 0)
        XCTAssertEqual(event["contexts"]?["crashpad"]?["annotations"]?["channel"]?.stringValue, "beta")
    }

    /// A module's identity record under another signature: RSDS read as GUID and age, anything
    /// else kept as unknown; neither is an error, and the module stays listed.
    func testCodeViewRecordsOtherThanBpELAreKeptNotRefused() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let bytes = try CrashpadDumps.crash(binary, in: dir)
        let original = try Minidump(bytes: bytes)
        let bpel: [UInt8] = Array("LEpB".utf8)  // 0x4270454c little-endian
        let at = try XCTUnwrap((0..<bytes.count - 4).first { Array(bytes[$0..<$0 + 4]) == bpel })

        var unknown = bytes
        unknown.replaceSubrange(at..<at + 4, with: Array("ABCD".utf8))
        let withUnknown = try Minidump(bytes: unknown)
        XCTAssertEqual(withUnknown.modules.count, original.modules.count)
        XCTAssertTrue(withUnknown.modules.contains { if case .unknown(0x4443_4241) = $0.codeView { true } else { false } })

        var rsds = bytes
        rsds.replaceSubrange(at..<at + 4, with: Array("RSDS".utf8))
        let withRSDS = try Minidump(bytes: rsds)
        let module = try XCTUnwrap(withRSDS.modules.first { if case .pdb70 = $0.codeView { true } else { false } })
        guard case .pdb70(let guid, _, _) = module.codeView else { return XCTFail() }
        XCTAssertEqual(guid.count, 16)
        XCTAssertNil(module.buildID)
        let images = MinidumpEvent.make(dump: withRSDS, walk: MinidumpStackwalker().walk(withRSDS), eventID: "e", timestamp: 0)["debug_meta"]?[
            "images"]?.arrayValue
        XCTAssertEqual(images?.count, original.modules.count)
    }

    /// Each cut of a real dump either reads (the cut fell after everything the streams point to)
    /// or throws MinidumpError; the event of whatever reads is built without a crash.
    func testTruncatedDumpsThrowTypedErrors() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let bytes = try CrashpadDumps.crash(binary, in: dir)
        var errors = 0
        for cut in stride(from: 0, to: bytes.count, by: 61) {
            do {
                let dump = try Minidump(bytes: Array(bytes.prefix(cut)))
                let walk = MinidumpStackwalker().walk(dump)
                _ = MinidumpEvent.make(dump: dump, walk: walk, eventID: "e", timestamp: 0)
            } catch {
                errors += 1
                XCTAssertFalse(error.description.isEmpty)
            }
        }
        XCTAssertGreaterThan(errors, bytes.count / 61 / 2, "most cuts lose data a stream points to")
        XCTAssertThrowsError(try Minidump(bytes: Array(bytes.prefix(31)))) { error in
            guard case .notAMinidump = error as? MinidumpError else { return XCTFail("\(error)") }
        }
    }

    /// Directory entries pointing past the end, lists claiming more entries than fit: named errors.
    func testHostileOffsetsAndCountsAreRefused() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let bytes = try CrashpadDumps.crash(binary, in: dir)
        let dump = try Minidump(bytes: bytes)
        let directory = Int(dump.header.directoryRVA)

        for (i, stream) in dump.streams.enumerated() {
            var hostile = bytes
            put(UInt32.max - 8, at: directory + i * 12 + 8, in: &hostile)  // rva
            XCTAssertThrowsError(try Minidump(bytes: hostile)) { error in
                guard case .outOfBounds = error as? MinidumpError else { return XCTFail("stream \(stream.type): \(error)") }
            }
        }
        let threadList = try XCTUnwrap(dump.streams.first { $0.type == .threadList })
        var hostile = bytes
        put(UInt32.max, at: Int(threadList.rva), in: &hostile)
        XCTAssertThrowsError(try Minidump(bytes: hostile)) { error in
            guard case .implausibleCount(let what, _, _) = error as? MinidumpError else { return XCTFail("\(error)") }
            XCTAssertEqual(what, "thread list")
        }
        var manyStreams = bytes
        put(UInt32.max, at: 8, in: &manyStreams)
        XCTAssertThrowsError(try Minidump(bytes: manyStreams))
    }

    /// Every 32-bit word of a real dump set to a hostile value, one at a time: the reader, the
    /// walker and the event builder never crash, and whatever fails fails as MinidumpError.
    func testEveryWordFlippedReadsOrThrowsTyped() throws {
        let binary = try CrashpadDumps.buildCrasher(in: dir)
        let bytes = try CrashpadDumps.crash(binary, in: dir)
        var read = 0, refused = 0
        for offset in stride(from: 0, to: bytes.count - 4, by: 4) {
            for value: UInt32 in [offset % 8 == 0 ? 0xFFFF_FFF0 : 0x7FFF_FFFF] {
                var hostile = bytes
                put(value, at: offset, in: &hostile)
                do {
                    let dump = try Minidump(bytes: hostile)
                    let walk = MinidumpStackwalker().walk(dump)
                    XCTAssertTrue(walk.threads.allSatisfy { $0.frames.count <= MinidumpStackwalker.Limits().maxFramesPerThread })
                    _ = MinidumpEvent.make(dump: dump, walk: walk, eventID: "e", timestamp: 0)
                    read += 1
                } catch {
                    refused += 1
                }
            }
        }
        XCTAssertGreaterThan(read, 0)
        XCTAssertGreaterThan(refused, 0)
    }

    private func put(_ value: UInt32, at offset: Int, in bytes: inout [UInt8]) {
        for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
    }
}
