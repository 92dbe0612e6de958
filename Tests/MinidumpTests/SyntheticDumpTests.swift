// Dumps laid out on purpose (MinidumpBuilder): Breakpad's Linux streams, which Crashpad's Linux
// handler does not write; frame-pointer chains walked through the maps stream's code ranges;
// stacks that would make a careless walker loop or run on; contexts of other CPUs.
import FaultlineMinidump
import FaultlineProtocol
import Foundation
import XCTest
import Synchronization

final class SyntheticDumpTests: XCTestCase {
    let code: UInt64 = 0x40_0000
    let stack: UInt64 = 0x7FF0_0000

    /// The app's first code bytes captured, every one a `call rel32` opcode (0xE8): whatever
    /// address a test puts on the stack there follows a call, as a return address must.
    var callSites: (address: UInt64, bytes: [UInt8]) { (code, [UInt8](repeating: 0xE8, count: 0x1000)) }

    /// A process with the app's code at 0x400000 (r-xp) and data after it (rw-p), one thread;
    /// `extra` memory beside its stack.
    func dump(
        stackWords: [Int: UInt64], rsp: UInt64, rbp: UInt64, rip: UInt64, stackSize: Int = 0x400, extra: [(address: UInt64, bytes: [UInt8])] = []
    ) -> [UInt8] {
        var b = MinidumpBuilder()
        b.systemInfo()
        let context = b.amd64Context(rip: rip, rsp: rsp, rbp: rbp)
        b.threads([.init(id: 7, stackStart: stack, stack: stackImage(size: stackSize, words: stackWords), context: context)], extra: extra)
        b.modules([(code, 0x10000, "/usr/bin/app", Array(0..<20))])
        b.exception(thread: 7, signal: 11, code: 1, address: 0x10, context: context)
        b.stream(0x4767_0009, Array("00400000-00408000 r-xp 00000000 08:01 12 /usr/bin/app\n00408000-00410000 rw-p 00008000 08:01 12 /usr/bin/app\n".utf8))
        b.stream(0x4767_0006, Array("/usr/bin/app\u{0}--serve\u{0}--port=8080\u{0}".utf8))
        b.stream(0x4767_0004, Array("Name:\tapp\nState:\tR (running)\n".utf8))
        b.stream(0x4767_0005, Array("DISTRIB_ID=Debian\nDISTRIB_RELEASE=12\nDISTRIB_DESCRIPTION=\"Debian GNU/Linux 12\"\n".utf8))
        b.stream(0x4767_0008, le64(6) + le64(4096) + le64(0) + le64(0))
        return b.finish()
    }

    func testLinuxStreamsReachTheReaderAndTheEvent() throws {
        let d = try Minidump(bytes: dump(stackWords: [:], rsp: stack, rbp: 0, rip: code + 0x100))
        XCTAssertEqual(d.linux.commandLine, ["/usr/bin/app", "--serve", "--port=8080"])
        XCTAssertEqual(d.linux.lsbFields["DISTRIB_RELEASE"], "12")
        XCTAssertEqual(d.linux.procStatus?.hasPrefix("Name:\tapp"), true)
        XCTAssertEqual(d.linux.auxv.first, LinuxProcessStreams.AuxvEntry(type: 6, value: 4096))
        XCTAssertEqual(d.linux.executableRanges.map(\.start), [0x40_0000], "only the r-xp mapping is code")
        XCTAssertEqual(d.modules.first?.buildID, BuildID(bytes: Array(0..<20)))

        let event = MinidumpEvent.make(dump: d, walk: MinidumpStackwalker().walk(d), eventID: "e", timestamp: 0)
        XCTAssertEqual(event["contexts"]?["os"]?["version"]?.stringValue, "12")
        XCTAssertEqual(event["contexts"]?["os"]?["distribution_name"]?.stringValue, "Debian")
        XCTAssertEqual(event["contexts"]?["os"]?["kernel_version"]?.stringValue, "Linux 6.1.0 #1 SMP x86_64")
        XCTAssertEqual(event["contexts"]?["process"]?["arguments"]?.arrayValue?.count, 2)
        XCTAssertEqual(event["timestamp"]?.doubleValue, 1_700_000_000, "the dump's own time")
        XCTAssertEqual(event["debug_meta"]?["images"]?[0]?["code_id"]?.stringValue, BuildID(bytes: Array(0..<20)).hex)
    }

    /// rbp → (saved rbp, return address) three times; a data pointer (rw-p) on the way is never
    /// taken for a return address; the last saved rbp is 0, so the chain ends there.
    func testFramePointerChainThroughCapturedStack() throws {
        let bytes = dump(
            stackWords: [
                0x00: 0x40_9000,  // at rsp: a pointer into data, not code
                0x40: stack + 0x80, 0x48: code + 0x1234,
                0x80: stack + 0xC0, 0x88: code + 0x2345,
                0xC0: 0, 0xC8: code + 0x3456
            ], rsp: stack, rbp: stack + 0x40, rip: code + 0x100)
        let walk = MinidumpStackwalker().walk(try Minidump(bytes: bytes))
        let t = try XCTUnwrap(walk.crashingThread)
        XCTAssertEqual(t.frames.map(\.address.address.value), [code + 0x100, code + 0x1234, code + 0x2345, code + 0x3456])
        XCTAssertEqual(t.frames.map(\.trust), [.context, .fp, .fp, .fp])
        XCTAssertTrue(t.stoppedBy.contains("no frame pointer or return address"), t.stoppedBy)
    }

    /// A chain that points back down the stack (a cycle) is not followed round: each step must
    /// move up the stack, so the walk ends.
    func testCyclicFramePointerChainEnds() throws {
        let bytes = dump(
            stackWords: [0x40: stack + 0x80, 0x48: code + 0x1234, 0x80: stack + 0x40, 0x88: code + 0x2345],
            rsp: stack, rbp: stack + 0x40, rip: code + 0x100)
        let t = try XCTUnwrap(MinidumpStackwalker().walk(try Minidump(bytes: bytes)).crashingThread)
        XCTAssertEqual(Array(t.frames.map(\.address.address.value).prefix(3)), [code + 0x100, code + 0x1234, code + 0x2345])
        XCTAssertLessThan(t.frames.count, 10, "\(t.frames)")
    }

    /// What a scan and a frame-pointer step must not take, all on one stack: the module's base
    /// (the auxiliary vector holds it), a code address whose captured bytes end in no call, one
    /// in code whose bytes nobody has (no file, not captured), and a saved rbp pointing at an
    /// ASCII word. Only the address after the captured call is a caller.
    func testOnlyAddressesAfterACallAreReturnAddresses() throws {
        var codeBytes = [UInt8](repeating: 0x90, count: 0x1000)
        codeBytes.replaceSubrange(0x200 - 5..<0x200, with: [0xE8, 0, 0, 0, 0])
        let ascii: UInt64 = 0x312e_302e_302e_3732
        let words: [Int: UInt64] = [
            0x00: code, 0x08: code + 0x100, 0x10: code + 0x5000, 0x18: ascii, 0x20: code + 0x200, 0x40: stack + 0x80, 0x48: ascii
        ]
        let bytes = dump(stackWords: words, rsp: stack, rbp: stack + 0x40, rip: code + 0x10, extra: [(code, codeBytes)])
        let t = try XCTUnwrap(MinidumpStackwalker().walk(try Minidump(bytes: bytes)).crashingThread)
        XCTAssertEqual(t.frames.map(\.address.address.value), [code + 0x10, code + 0x200], "\(t.frames)")
        XCTAssertEqual(t.frames.map(\.trust), [.context, .scan])
    }

    /// A stack full of code addresses that follow calls: every scan finds one, so only the frame
    /// limit ends it.
    func testStackOfReturnAddressesStopsAtTheFrameLimit() throws {
        var words: [Int: UInt64] = [:]
        for i in 0..<(0x4000 / 8) { words[i * 8] = code + 0x100 + UInt64(i) }
        let bytes = dump(stackWords: words, rsp: stack, rbp: 0, rip: code + 0x100, stackSize: 0x4000, extra: [callSites])
        var limits = MinidumpStackwalker.Limits()
        limits.maxFramesPerThread = 100
        let t = try XCTUnwrap(MinidumpStackwalker(limits: limits).walk(try Minidump(bytes: bytes)).crashingThread)
        XCTAssertEqual(t.frames.count, 100)
        XCTAssertEqual(t.stoppedBy, "frame limit")
        XCTAssertEqual(t.frames.dropFirst().filter { $0.trust != .scan }.count, 0)
    }

    /// Modules named by soname (as Crashpad names the system's libraries) are never in-app; the
    /// executable is.
    func testSonameModulesAreNotInApp() throws {
        var b = MinidumpBuilder()
        b.systemInfo()
        let loader: UInt64 = 0x7F00_0000_0000
        let context = b.amd64Context(rip: loader + 0x100, rsp: stack, rbp: stack + 0x40)
        let words: [Int: UInt64] = [0x40: stack + 0x80, 0x48: code + 0x1234]
        b.threads([.init(id: 1, stackStart: stack, stack: stackImage(size: 0x100, words: words), context: context)])
        b.modules([(code, 0x10000, "/usr/bin/app", [1]), (loader, 0x10000, "ld-linux-x86-64.so.2", [2])])
        b.exception(thread: 1, signal: 11, code: 1, address: 0, context: context)
        let d = try Minidump(bytes: b.finish())
        let event = MinidumpEvent.make(dump: d, walk: MinidumpStackwalker().walk(d), eventID: "e", timestamp: 0)
        let frames = (event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue ?? []).reversed()
        XCTAssertEqual(frames.map { $0["package"]?.stringValue ?? "" }, ["ld-linux-x86-64.so.2", "/usr/bin/app"])
        XCTAssertEqual(frames.map { $0["in_app"]?.boolValue ?? true }, [false, true])
    }

    /// Memory64List: ranges stored back to back from one base RVA; a read answers only from one
    /// range; a list whose ranges run past the file, or whose count cannot fit, is refused.
    func testMemory64ListReadsAndRefusals() throws {
        func dump(count: UInt64, sizes: [UInt64], data: [UInt8]) -> [UInt8] {
            var b = MinidumpBuilder()
            let base = b.append(data)
            var list = le64(count) + le64(UInt64(base))
            for (i, size) in sizes.enumerated() { list += le64(0x1000 + UInt64(i) * 0x100) + le64(size) }
            b.stream(9, list)
            return b.finish()
        }
        let bytes = Array(0..<0x180).map { UInt8(truncatingIfNeeded: $0) }
        let d = try Minidump(bytes: dump(count: 2, sizes: [0x100, 0x80], data: bytes))
        XCTAssertEqual(d.memory.ranges.map(\.address), [0x1000, 0x1100])
        XCTAssertEqual(d.memory.read(address: 0x10FE, count: 2).map(Array.init), [0xFE, 0xFF])
        XCTAssertEqual(d.memory.read(address: 0x1100, count: 2).map(Array.init), [0x00, 0x01], "the second range's bytes follow the first's")
        XCTAssertNil(d.memory.read(address: 0x10FF, count: 2), "a read across two ranges")
        XCTAssertNil(d.memory.read(address: 0x1180, count: 1), "past the last range")
        XCTAssertNil(d.memory.read(address: 0xFFF, count: 1))

        XCTAssertThrowsError(try Minidump(bytes: dump(count: 2, sizes: [0x100, 0x1000], data: bytes))) { error in
            guard case .outOfBounds = error as? MinidumpError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try Minidump(bytes: dump(count: UInt64.max, sizes: [0x100], data: bytes))) { error in
            guard case .implausibleCount = error as? MinidumpError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try Minidump(bytes: dump(count: 2, sizes: [UInt64.max, 0x10], data: bytes)))
    }

    /// A stack captured at the very top of the address space: reads and steps stop there
    /// instead of wrapping around.
    func testStackAtTheTopOfTheAddressSpace() throws {
        let top = UInt64.max - 0x3F
        var b = MinidumpBuilder()
        b.systemInfo()
        var words: [Int: UInt64] = [:]
        for i in 0..<8 { words[i * 8] = code + 0x100 }
        let context = b.amd64Context(rip: code + 0x10, rsp: top, rbp: top + 0x30)
        b.threads([.init(id: 1, stackStart: top, stack: stackImage(size: 0x40, words: words), context: context)], extra: [callSites])
        b.modules([(code, 0x10000, "/usr/bin/app", [1])])
        let d = try Minidump(bytes: b.finish())
        XCTAssertEqual(d.memory.readWord(UInt64.max - 7), code + 0x100)
        XCTAssertNil(d.memory.read(address: UInt64.max - 7, count: 9))
        let t = try XCTUnwrap(MinidumpStackwalker().walk(d).threads.first)
        XCTAssertGreaterThan(t.frames.count, 1)
        XCTAssertLessThan(t.frames.count, 10)
    }

    /// Many deep threads share one frame budget; the crashing thread, though listed third, is
    /// walked first and keeps its full depth; every thread keeps at least its context frame.
    func testThreadsShareTheFrameBudgetCrashingThreadFirst() throws {
        var words: [Int: UInt64] = [:]
        for i in 0..<(0x1000 / 8) { words[i * 8] = code + 0x100 + UInt64(i) }
        var b = MinidumpBuilder()
        b.systemInfo()
        var threads: [MinidumpBuilder.Thread] = []
        for i in 0..<6 {
            let start = stack + UInt64(i) * 0x10_0000
            threads.append(
                .init(
                    id: UInt32(i + 1), stackStart: start, stack: stackImage(size: 0x1000, words: words), context: b.amd64Context(rip: code, rsp: start, rbp: 0))
            )
        }
        b.threads(threads, extra: [callSites])
        b.modules([(code, 0x10000, "/usr/bin/app", [1])])
        b.exception(thread: 3, signal: 11, code: 1, address: 0, context: threads[2].context)
        var limits = MinidumpStackwalker.Limits()
        limits.maxFramesPerThread = 100
        limits.maxTotalFrames = 250
        let walk = MinidumpStackwalker(limits: limits).walk(try Minidump(bytes: b.finish()))
        XCTAssertEqual(walk.threads.map(\.id), [1, 2, 3, 4, 5, 6], "the dump's order")
        XCTAssertEqual(walk.crashingThread?.id, 3)
        XCTAssertEqual(walk.crashingThread?.frames.count, 100)
        XCTAssertEqual(walk.threads.map(\.frames.count), [100, 50, 100, 1, 1, 1])
    }

    /// A dump listing more threads than are walked: the crashing thread, listed last, is walked
    /// all the same (in the last walked place), and the others beyond the limit are counted.
    func testCrashingThreadPastTheThreadLimitIsWalked() throws {
        var b = MinidumpBuilder()
        b.systemInfo()
        var threads: [MinidumpBuilder.Thread] = []
        for i in 0..<5 {
            let start = stack + UInt64(i) * 0x10_0000
            threads.append(
                .init(
                    id: UInt32(i + 1), stackStart: start, stack: stackImage(size: 0x100, words: [:]),
                    context: b.amd64Context(rip: code + UInt64(i), rsp: start, rbp: 0)))
        }
        b.threads(threads)
        b.modules([(code, 0x10000, "/usr/bin/app", [1])])
        b.exception(thread: 5, signal: 11, code: 1, address: 0, context: threads[4].context)
        var limits = MinidumpStackwalker.Limits()
        limits.maxThreads = 2
        let walk = MinidumpStackwalker(limits: limits).walk(try Minidump(bytes: b.finish()))
        XCTAssertEqual(walk.threads.map(\.id), [1, 5])
        XCTAssertEqual(walk.crashingThread?.frames.first?.address.address.value, code + 4)
        XCTAssertEqual(walk.threadsOmitted, 3)
    }

    /// An exception naming a thread the thread list lacks: the crash is walked from the
    /// exception's own registers (its stack in the memory list), and marked crashed.
    func testAnExceptionOfAThreadTheListLacksIsWalkedFromItsOwnContext() throws {
        var b = MinidumpBuilder()
        b.systemInfo()
        let listed = b.amd64Context(rip: code + 0x10, rsp: stack + 0x10_0000, rbp: 0)
        b.threads(
            [.init(id: 1, stackStart: stack + 0x10_0000, stack: stackImage(size: 0x100, words: [:]), context: listed)],
            extra: [(stack, stackImage(size: 0x100, words: [0x40: 0, 0x48: code + 0x1234]))])
        b.modules([(code, 0x10000, "/usr/bin/app", [1])])
        let crash = b.amd64Context(rip: code + 0x100, rsp: stack, rbp: stack + 0x40)
        b.exception(thread: 99, signal: 11, code: 1, address: 0x10, context: crash)
        b.stream(0x4767_0009, Array("00400000-00408000 r-xp 00000000 08:01 12 /usr/bin/app\n".utf8))
        let dump = try Minidump(bytes: b.finish())
        let walk = MinidumpStackwalker().walk(dump)
        XCTAssertEqual(walk.threads.map(\.id), [99, 1])
        let t = try XCTUnwrap(walk.crashingThread)
        XCTAssertEqual(t.id, 99)
        XCTAssertEqual(t.frames.map(\.address.address.value), [code + 0x100, code + 0x1234], "its frames, from its registers and stack")
        let event = MinidumpEvent.make(dump: dump, walk: walk, eventID: "e", timestamp: 0)
        XCTAssertEqual(event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue?.count, 2, event.jsonString)
    }

    /// A thread whose context is another CPU's is listed, with no frames and the reason.
    func testOtherCPUContextIsListedNotWalked() throws {
        var b = MinidumpBuilder()
        var arm = [UInt8](repeating: 0, count: 912)
        arm.replaceSubrange(48..<52, with: le32(0x8000_0003))
        let context = (UInt32(912), b.append(arm))
        b.threads([.init(id: 3, stackStart: stack, stack: [UInt8](repeating: 0, count: 64), context: context)])
        let d = try Minidump(bytes: b.finish())
        guard case .unsupported = d.threads.first?.context else { return XCTFail("\(d.threads)") }
        let t = try XCTUnwrap(MinidumpStackwalker().walk(d).threads.first)
        XCTAssertEqual(t.frames.count, 0)
        XCTAssertEqual(t.stoppedBy, "registers of an unsupported CPU")
    }

    /// A module list naming one build many times: its files are asked for (and opened) once.
    func testOneBuildListedManyTimesIsLookedUpOnce() throws {
        var b = MinidumpBuilder()
        b.systemInfo()
        b.modules((0..<300).map { (UInt64($0 + 1) << 24, 0x1000, "/lib/libsame.so", Array(repeating: 7, count: 20)) })
        let d = try Minidump(bytes: b.finish())
        XCTAssertEqual(d.modules.count, 300)
        let asked = Counter()
        _ = MinidumpStackwalker(
            lookup: ModuleFileLookup { _, _, _ in
                asked.add(); return nil
            }
        ).walk(d)
        XCTAssertEqual(asked.value, 2, "one executable and one debug lookup")
    }

    /// Many records naming one long string: the strings budget stops the decoding.
    func testOneStringNamedByEveryModuleIsRefused() throws {
        var b = MinidumpBuilder()
        let name = b.string(String(repeating: "a", count: 20_000))
        var list = le32(500)
        for i in 0..<500 {
            list += le64(UInt64(i) << 20) + le32(4096) + le32(0) + le32(0) + le32(name) + [UInt8](repeating: 0, count: 52 + 32)
        }
        b.stream(4, list)
        XCTAssertThrowsError(try Minidump(bytes: b.finish())) { error in
            guard case .implausibleCount(let what, _, _) = error as? MinidumpError else { return XCTFail("\(error)") }
            XCTAssertEqual(what, "string bytes")
        }
    }
}

/// A count the lookup closure (Sendable) can bump.
final class Counter: Sendable {
    private let n = Mutex(0)
    func add() { n.withLock { $0 += 1 } }
    var value: Int { n.withLock { $0 } }
}
