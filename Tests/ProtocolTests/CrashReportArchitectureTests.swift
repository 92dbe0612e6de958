// A crash report's `arch`: read per architecture, x86_64 when absent (reports before the field),
// refused when unknown, and carried into the event in Sentry's spelling.
import FaultlineProtocol
import Foundation
import XCTest

final class CrashReportArchitectureTests: XCTestCase {
    func report(arch: String?, registers: String) -> Data {
        let archField = arch.map { "\"arch\":\"\($0)\"," } ?? ""
        return Data(
            """
            {"format":"faultline-crash","version":2,\(archField)"event_id":"0123456789abcdef0123456789abcdef",
             "signal":{"number":11,"name":"SIGSEGV","code":1,"code_name":"SEGV_MAPERR","fault_address":"0x10"},
             "registers":{\(registers)},"frames":[{"address":"0x1000","kind":"pc"}],
             "modules":[{"path":"/bin/p","base":"0x0","size":65536}],"context":{},"end":true}
            """.utf8)
    }

    func testAReportWithoutArchIsX86_64AndItsEventSaysSo() throws {
        let r = try CrashReport.parse(report(arch: nil, registers: #""rip":"0x1000","rsp":"0x2000""#))
        XCTAssertNil(r.recordedArchitecture)
        XCTAssertEqual(r.architecture, .x86_64)
        XCTAssertEqual(r.registers.map(\.name), ["rsp", "rip"])
        let event = CrashEvent.make(from: r)
        XCTAssertEqual(event["contexts"]?["device"]?["arch"]?.stringValue, "x86_64")
        XCTAssertEqual(event["debug_meta"]?["images"]?[0]?["arch"]?.stringValue, "x86_64")
    }

    func testAnAarch64ReportReadsItsRegistersAndBecomesAnArm64Event() throws {
        let r = try CrashReport.parse(report(arch: "aarch64", registers: #""x0":"0x10","x30":"0x1234","sp":"0x2000","pc":"0x1000""#))
        XCTAssertEqual(r.architecture, .aarch64)
        XCTAssertEqual(r.registers.map(\.name), ["x0", "x30", "sp", "pc"])
        let event = CrashEvent.make(from: r)
        XCTAssertEqual(event["contexts"]?["device"]?["arch"]?.stringValue, "arm64")
        XCTAssertEqual(event["debug_meta"]?["images"]?[0]?["arch"]?.stringValue, "arm64")
    }

    func testAnUnknownArchIsRefusedWithItsName() {
        XCTAssertThrowsError(try CrashReport.parse(report(arch: "riscv64", registers: ""))) { error in
            XCTAssertTrue("\(error)".contains("riscv64"), "\(error)")
        }
    }
}
