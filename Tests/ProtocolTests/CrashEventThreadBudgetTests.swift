// A crash with thousands of threads (or hundreds of deep stacks) still becomes an event a server
// takes: the other threads fill at most their share of the 1 MiB limit and the rest are counted.
import FaultlineProtocol
import Foundation
import XCTest

final class CrashEventThreadBudgetTests: XCTestCase {
    /// A report as the crash core or the core-file reader writes it, with `threads` other threads
    /// of `frames` frames each and a full register set.
    func report(threads: Int, frames: Int, omitted: Int = 0) throws -> CrashReport {
        let registers = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"]
            .enumerated().map { "\"\($0.element)\":\"0x\(String(0x7ffd_0000_0000 + $0.offset * 8, radix: 16))\"" }.joined(separator: ",")
        let stack = (0..<frames).map { "{\"address\":\"0x\(String(0x5555_5555_0000 + $0 * 16, radix: 16))\",\"kind\":\"return\"}" }
            .joined(separator: ",")
        let others = (0..<threads).map { i in
            "{\"tid\":\(1000 + i),\"name\":\"worker-\(i)\",\"state\":\"sleeping\",\"registers\":{\(registers)},\"frames\":[\(stack)]}"
        }.joined(separator: ",")
        let json = """
            {"format":"faultline-crash","version":2,"arch":"x86_64","event_id":"0123456789abcdef0123456789abcdef",
             "thread":{"tid":999,"name":"main"},
             "signal":{"number":11,"name":"SIGSEGV","code":1,"code_name":"SEGV_MAPERR","fault_address":"0x10"},
             "registers":{\(registers)},"frames":[{"address":"0x555555550000","kind":"pc"}],
             "threads":[{"tid":999,"name":"main","crashed":true},\(others)],"threads_omitted":\(omitted),
             "modules":[{"path":"/bin/p","base":"0x555555550000","size":65536}],"context":{},"end":true}
            """
        return try CrashReport.parse(Data(json.utf8))
    }

    func testAThousandThreadsOfDeepStacksFitTheServersEventLimit() throws {
        let r = try report(threads: 1_000, frames: 64, omitted: 24)
        XCTAssertEqual(r.otherThreads.count, 1_000)
        let event = CrashEvent.make(from: r)
        XCTAssertLessThan(event.serialized().count, 1_048_576, "the server's limit for an event")
        let listed = (event["threads"]?["values"]?.arrayValue ?? []).count - 1
        XCTAssertGreaterThan(listed, 0)
        XCTAssertLessThan(listed, 1_000)
        XCTAssertEqual(event["extra"]?["threads_omitted"]?.int64Value, Int64(1_000 - listed + 24), "every thread left out is counted")
        XCTAssertEqual(event["threads"]?["values"]?[0]?["crashed"]?.boolValue, true, "the crashing thread first, always")
        XCTAssertEqual(event["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue?.count, 1)
    }

    func testAFewThreadsAreAllListedAndNothingIsSaidOmitted() throws {
        let event = CrashEvent.make(from: try report(threads: 20, frames: 64))
        XCTAssertEqual((event["threads"]?["values"]?.arrayValue ?? []).count, 21)
        XCTAssertNil(event["extra"]?["threads_omitted"])
    }

    func testThreadsTheReportAlreadyLeftOutAreCounted() throws {
        let event = CrashEvent.make(from: try report(threads: 3, frames: 4, omitted: 5))
        XCTAssertEqual(event["extra"]?["threads_omitted"]?.int64Value, 5)
    }
}
