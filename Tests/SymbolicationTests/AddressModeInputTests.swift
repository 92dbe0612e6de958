// Address mode's reading of its input: the one-pass reading of `0x` lines must read every line as
// the general reading does. The reference here is llvm-symbolizer's rule written plainly: lines
// split at each newline (a final one starts no line), a NUL ends a line's text, spaces, tabs and
// CRs around it are trimmed, and `parseAddress` reads what is left; empty input has no line.
import Foundation
import XCTest
@testable import FaultlineSymbolication

final class AddressModeInputTests: XCTestCase {
    func reference(_ input: [UInt8]) -> (addresses: [UInt64], isAddress: [Bool], blank: Int) {
        var lines = input.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        if input.last == 10 || input.isEmpty { lines.removeLast() }  // no input: no line
        var addresses: [UInt64] = [], flags: [Bool] = [], blank = 0
        for var line in lines {
            if let nul = line.firstIndex(of: 0) { line = Array(line[..<nul]) }
            let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 9 || $0 == 13 }
            let text = Array(line.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
            if text.isEmpty { blank += 1 }
            let address = text.isEmpty ? nil : text.withUnsafeBytes { LLVMStyleSymbolizer.parseAddress($0, 0, $0.count) }
            addresses.append(address ?? 0)
            flags.append(address != nil)
        }
        return (addresses, flags, blank)
    }

    /// Random lines made of what the quick reading looks at (`0x`, hex digits of either case, 16
    /// and 17 digits, spaces, CRs, tabs, NULs, letters, blank lines, no final newline), read both ways.
    func testTheQuickReadingReadsEveryLineAsTheGeneralReadingDoes() {
        var rng = SplitMix64(state: 0x0F)
        let pieces: [[UInt8]] = [
            Array("0x".utf8), Array("0X".utf8), Array("0".utf8), Array("7".utf8), Array("f".utf8), Array("A".utf8), Array("g".utf8),
            Array("0123456789abcdef".utf8), Array("1".utf8), [32], [9], [13], [0], Array("CODE ".utf8), Array("0b".utf8), Array("x".utf8)
        ]
        for round in 0..<300 {
            var input: [UInt8] = []
            for _ in 0..<Int(rng.next() % 60) {
                for _ in 0..<Int(rng.next() % 5) { input += pieces[Int(rng.next() % UInt64(pieces.count))] }
                input.append(10)
            }
            if rng.next() % 2 == 0 { input += pieces[Int(rng.next() % UInt64(pieces.count))] }  // a last line without a newline
            let expected = reference(input)
            let parsed = input.withUnsafeBytes { LLVMStyleSymbolizer.lines(of: $0) }
            let shown = String(decoding: input.map { $0 == 0 ? UInt8(ascii: "@") : $0 }, as: UTF8.self).debugDescription
            XCTAssertEqual(parsed.lineAddress, expected.addresses, "round \(round): \(shown)")
            XCTAssertEqual(parsed.isAddress, expected.isAddress, "round \(round): \(shown)")
            XCTAssertEqual(parsed.blankLines, expected.blank, "round \(round): \(shown)")
            if parsed.lineAddress != expected.addresses || parsed.isAddress != expected.isAddress { return }
        }
    }
}
