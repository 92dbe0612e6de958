// The debugger-style text of `faultline symbolicate`: frame numbers in a column of four, and
// never run into the address (a 1,000-frame recursion printed "#1000x0000…").
import XCTest
@testable import FaultlineSymbolication

final class BacktraceTextTests: XCTestCase {
    func testFrameNumbersStaySeparateFromTheirAddressesPastOneHundred() {
        let frames = (0..<1_200).map { i in
            SymbolicatedStack.Frame(physicalIndex: i, instructionAddress: 0x5555_0000 + UInt64(i), outcome: .notLookedUp, role: .inApp)
        }
        let lines = BacktraceText.render(SymbolicatedStack(frames: frames), showFaultlineFrames: false).split(separator: "\n")
        XCTAssertTrue(lines[7].hasPrefix("#7  0x0000000055550007"), String(lines[7]))
        XCTAssertTrue(lines[42].hasPrefix("#42 0x000000005555002a"), String(lines[42]))
        XCTAssertTrue(lines[100].hasPrefix("#100 0x0000000055550064"), String(lines[100]))
        XCTAssertTrue(lines[1_100].hasPrefix("#1100 0x000000005555044c"), String(lines[1_100]))
    }
}
