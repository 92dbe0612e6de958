// Which unit answers an address several units claim (DWARFIndexBuilder.unitSegments).
import XCTest
@testable import FaultlineSymbolication

final class UnitSegmentsTests: XCTestCase {
    /// The two-thread build numbers units in alternating runs, so the winner is decided by file
    /// offset, not by unit number: here unit 0 lies later in .debug_info than unit 1.
    func testTheFirstUnitInTheFileWinsWhereUnitsOverlap() {
        let offsets: [UInt64] = [9_000, 100, 5_000]
        let ranges: [(UInt64, UInt64, UInt32)] = [(0x100, 0x200, 0), (0x180, 0x300, 1), (0x280, 0x400, 2), (0x500, 0x600, 0)]
        let r = DWARFIndexBuilder.unitSegments(ranges, fileOffsets: offsets)
        XCTAssertTrue(r.overlapping)
        XCTAssertEqual(r.segments.map { "\(String($0.0, radix: 16))-\(String($0.1, radix: 16)):\($0.2)" }, ["100-180:0", "180-300:1", "300-400:2", "500-600:0"])
    }

    func testDisjointUnitsAreOnlySorted() {
        let r = DWARFIndexBuilder.unitSegments([(0x300, 0x400, 1), (0x100, 0x200, 0), (0x250, 0x250, 2)], fileOffsets: [0, 10, 20])
        XCTAssertFalse(r.overlapping)
        XCTAssertEqual(r.segments.map { $0.2 }, [0, 1])
    }
}
