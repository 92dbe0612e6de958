// Address mode's lookup order and the index searches that follow it: the radix-sorted order
// must be a plain stable sort by address, and a search started from the previous answer (the
// hints) must find what a search from scratch finds, in any order of addresses.
import Foundation
import XCTest
@testable import FaultlineSymbolication

final class AddressModeOrderTests: XCTestCase {
    /// (address, line) of the address lines, by address, then by line: what the order must be.
    func plainOrder(_ lineAddress: [UInt64], _ isAddress: [Bool]) -> [(UInt64, Int32)] {
        lineAddress.indices.filter { isAddress[$0] }.map { (lineAddress[$0], Int32($0)) }.sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
    }

    func assertOrder(_ lineAddress: [UInt64], _ isAddress: [Bool], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let order = LLVMStyleSymbolizer.AddressOrder(lineAddress, isAddress)
        let expected = plainOrder(lineAddress, isAddress)
        XCTAssertEqual(order.count, expected.count, what, file: file, line: line)
        let got = (0..<order.count).map { order[$0] }
        if let k = zip(got, expected).map({ $0.address == $1.0 && $0.line == $1.1 }).firstIndex(of: false) {
            XCTFail("\(what): entry \(k) is \(got[k]), expected \(expected[k])", file: file, line: line)
        }
        order.withView { view in
            XCTAssertEqual(view.count, order.count, what, file: file, line: line)
            for k in 0..<view.count where view[k] != order[k] {
                return XCTFail("\(what): the view's entry \(k) differs", file: file, line: line)
            }
        }
    }

    /// Repeated addresses keep their lines in input order; lines that are not addresses are left
    /// out; spans of every width from one address to one that fills the key (where the keys
    /// become line numbers sorted by address) sort as a plain sort does.
    func testTheOrderIsAStableSortByAddressForEverySpan() {
        var rng = SplitMix64(state: 35)
        for (lines, spanBits) in [
            (0, 8), (1, 8), (2, 0), (100, 3), (5_000, 12), (20_000, 22), (100_000, 30), (3_000, 47), (70_000, 47), (70_000, 48), (2_000, 64)
        ] {
            let base: UInt64 = spanBits == 64 ? 0 : 0x40_0000
            let mask: UInt64 = spanBits == 64 ? .max : (1 << UInt64(spanBits)) - 1
            // Few distinct addresses in the small spans: many lines share each one.
            let lineAddress = (0..<lines).map { _ in base &+ (rng.next() & mask) }
            let isAddress = (0..<lines).map { _ in rng.next() % 10 != 0 }
            assertOrder(lineAddress, isAddress, "\(lines) lines over \(spanBits) bits")
        }
        // The lowest and the highest 64-bit addresses together, and one line alone.
        assertOrder([.max, 0, .max, 1, 0], [true, true, true, true, true], "extremes")
        assertOrder([7], [true], "one line")
        assertOrder([7, 8], [false, false], "no address lines")
    }

    func testTheRadixSortSortsByTheBitsItIsGiven() {
        var rng = SplitMix64(state: 11)
        for (count, from, to) in [(10, 0, 64), (5_000, 0, 64), (5_000, 17, 40), (5_000, 3, 14), (300, 20, 21)] {
            let original = (0..<count).map { _ in rng.next() }
            var keys = original
            LLVMStyleSymbolizer.AddressOrder.radixSort(&keys, fromBit: from, toBit: to)
            let width = UInt64(to - from)
            let digit: (UInt64) -> UInt64 = { width == 64 ? $0 : ($0 >> UInt64(from)) & ((1 << width) - 1) }
            // Stable: keys of one digit stay in their original order.
            let expected = original.enumerated().sorted { (digit($0.element), $0.offset) < (digit($1.element), $1.offset) }.map(\.element)
            XCTAssertEqual(keys, expected, "\(count) keys, bits \(from)..<\(to)")
        }
    }

    /// Lookups carrying their search hints from one to the next answer exactly what lookups from
    /// scratch answer: in rising order (how address mode looks up), falling, and shuffled (a
    /// hint above the address must be ignored), over every byte of the fixtures' functions and
    /// the gaps around them.
    func testLookupsWithHintsAnswerWhatLookupsFromScratchAnswer() throws {
        let s = Symbolicator(locator: DebugFileLocator(searchSystem: false), indexCacheDirectory: nil, persistIndexes: false)
        let d = try Fixtures.directory()
        var checked = 0
        for base in try Fixtures.bases() {
            let object = "\(d)/\(base).full"
            let index = try XCTUnwrap(try s.loadedModule(objectFile: object)?.index, base)
            var addresses = Fixtures.functionBytes(object)
            guard let low = addresses.first, let high = addresses.last else { continue }
            addresses += [0, 1, low - 1, high + 1, high + 4096, .max]
            var rng = SplitMix64(state: UInt64(addresses.count))
            let shuffled = addresses.shuffled(using: &rng)
            for (name, order) in [("rising", addresses.sorted()), ("falling", addresses.sorted(by: >)), ("shuffled", shuffled)] {
                var hints = DWARFIndex.SearchHints()
                var withHints: [IndexedFrame] = [], fromScratch: [IndexedFrame] = []
                for a in order {
                    index.lookup(a, into: &withHints, hints: &hints)
                    index.lookup(a, into: &fromScratch)
                    guard withHints.map(Key.init) == fromScratch.map(Key.init) else {
                        return XCTFail("\(base), \(name): 0x\(String(a, radix: 16)) answers \(withHints) with hints, \(fromScratch) without")
                    }
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 1_000)
    }

    private struct Key: Equatable {
        let name: UInt32, file: UInt32, line: UInt32, column: UInt32, isInlined: Bool, nameFromSymbolTable: Bool
        init(_ f: IndexedFrame) {
            name = f.name; file = f.file; line = f.line; column = f.column
            isInlined = f.isInlined; nameFromSymbolTable = f.nameFromSymbolTable
        }
    }
}
