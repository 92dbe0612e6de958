// Report mode, like gdb: a line-0 row (Swift's `<compiler-generated>`) reads as the nearest
// meaningful location in the same inline scope, marked inferred; the `Swift runtime failure: …`
// frame carries the user's line. `--obj` mode keeps llvm-symbolizer's `:0:0`.
import Foundation
import FaultlineTestSupport
import XCTest
import FaultlineProtocol
@testable import FaultlineSymbolication

final class InferredLocationTests: XCTestCase {
    func testLineZeroIsInferredInReportModeOnly() throws {
        let d = try Fixtures.directory()
        let exe = "\(d)/swift-O.full"
        guard FileManager.default.fileExists(atPath: exe) else { throw TestSupport.ShellError(command: "swiftc", output: "the Swift fixtures were not built") }
        let id = try XCTUnwrap(try ELFInfo.read(path: exe).buildID)
        let symbolicator = Symbolicator(
            locator: DebugFileLocator(explicitFiles: [exe], searchSystem: false),
            indexCacheDirectory: Fixtures.temporaryDirectory("inferred-cache"), persistIndexes: false)
        let (lo, size) = try XCTUnwrap(Fixtures.functionSymbols(exe).first { $0.2.contains("element") }.map { ($0.0, $0.1) })
        let subscriptLine = try Fixtures.line("swift_subscript", in: "subscript.swift")
        var inferredCount = 0, sawRuntimeFailure = false
        for a in lo..<(lo + size) {
            guard let objFrames = try symbolicator.symbolicate(objectFile: exe, address: a).frames,
                let report = symbolicator.symbolicate(buildID: id, modulePath: exe, relativeAddress: a, isReturnAddress: false, architecture: .x86_64).frames
            else { continue }
            XCTAssertEqual(objFrames.count, report.count)
            XCTAssertFalse(objFrames.contains { $0.isInferred }, "--obj mode never infers")
            for (k, f) in report.enumerated() where k > 0 { XCTAssertFalse(f.isInferred); XCTAssertEqual(f, objFrames[k]) }
            let inner = report[0], raw = objFrames[0]
            if raw.line != 0 {
                XCTAssertEqual(inner, raw, "a row with a line is taken as it is at 0x\(String(a, radix: 16))")
                continue
            }
            if inner.isInferred {
                inferredCount += 1
                XCTAssertGreaterThan(inner.line ?? 0, 0)
                XCTAssertNotEqual(inner.file, "/<compiler-generated>")
                XCTAssertEqual(inner.function, raw.function)
            }
            if raw.function?.hasPrefix("Swift runtime failure") == true {
                sawRuntimeFailure = true
                XCTAssertTrue(inner.isInferred)
                XCTAssertEqual(inner.line, subscriptLine, "the trap reads as the user's subscript line")
                XCTAssertTrue(inner.file?.hasSuffix("subscript.swift") ?? false, "\(inner)")
            }
        }
        XCTAssertGreaterThan(inferredCount, 0, "the fixture has <compiler-generated> rows")
        XCTAssertTrue(sawRuntimeFailure, "the fixture has an inlined runtime-failure frame")
    }
}
