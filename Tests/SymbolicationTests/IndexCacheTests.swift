// Persisted indexes: written once, reused, and rebuilt (never trusted) when stale or corrupt.
import Foundation
import XCTest
import FaultlineProtocol
@testable import FaultlineSymbolication

final class IndexCacheTests: XCTestCase {
    var dir: String!
    override func setUp() { dir = Fixtures.temporaryDirectory("index-cache") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func lookup(_ module: String, _ address: UInt64, locator: DebugFileLocator = DebugFileLocator(searchSystem: false)) throws -> SymbolicationOutcome {
        let info = try ELFInfo.read(path: module)
        return Symbolicator(locator: locator, indexCacheDirectory: dir)
            .symbolicate(buildID: info.buildID, modulePath: module, relativeAddress: address - info.firstLoadAddress, isReturnAddress: false)
    }

    func testIndexIsPersistedAndReusedWithoutTheDebugFile() throws {
        let d = try Fixtures.directory()
        let addr = try XCTUnwrap(try Fixtures.markers("c-O2")["c_level4"])
        let fresh = try lookup("\(d)/c-O2.full", addr)
        let id = try XCTUnwrap(try ELFInfo.read(path: "\(d)/c-O2.full").buildID)
        let file = IndexCache(directory: dir).path(for: id)
        XCTAssertTrue(FileManager.default.fileExists(atPath: file))
        // Warm: the stripped binary has no debuglink target here, yet the stored index answers.
        let copy = Fixtures.temporaryDirectory("warm") + "/c-O2.bare"
        try FileManager.default.copyItem(atPath: "\(d)/c-O2.bare", toPath: copy)
        XCTAssertEqual(try lookup(copy, addr), fresh)
        if case .resolved(let f) = fresh { XCTAssertEqual(f.count, 5) } else { XCTFail("unresolved") }
    }

    func testCorruptTruncatedOrStaleIndexIsRebuilt() throws {
        let d = try Fixtures.directory()
        let module = "\(d)/c-O2.full"
        let addr = try XCTUnwrap(try Fixtures.markers("c-O2")["c_level4"])
        let reference = try lookup(module, addr)
        let id = try XCTUnwrap(try ELFInfo.read(path: module).buildID)
        let path = IndexCache(directory: dir).path(for: id)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))

        var flipped = good
        flipped[flipped.count - 9] ^= 0x5a                  // payload bit rot: checksum catches it
        var wrongVersion = good
        wrongVersion[8] = 0xfe                             // another format version
        var otherBuild = good
        otherBuild[40] ^= 0xff                             // index of another build-id
        let damaged: [(String, Data)] = [("flipped", flipped), ("truncated", good.prefix(good.count / 2)),
                                         ("empty", Data()), ("version", wrongVersion), ("build-id", otherBuild),
                                         ("garbage", Data(repeating: 0x41, count: 4096))]
        for (name, bytes) in damaged {
            try bytes.write(to: URL(fileURLWithPath: path))
            XCTAssertNil(IndexCache(directory: dir).load(id), "\(name) index was trusted")
            XCTAssertEqual(try lookup(module, addr), reference, name)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), good, "\(name): not rebuilt")
        }
    }

    func testSymbolsOnlyIndexIsReplacedWhenDWARFArrives() throws {
        let d = try Fixtures.directory()
        let addr = try XCTUnwrap(try Fixtures.markers("c-O2")["c_level4"])
        let stripped = "\(d)/c-O2.nodwarf"
        guard case .resolved(let before) = try lookup(stripped, addr) else { return XCTFail("unresolved") }
        XCTAssertEqual(before.first?.fromSymbolTable, true)
        // The debug file appears in a debug directory (server backfill): DWARF wins over the
        // stored symbols-only index.
        guard case .resolved(let after) = try lookup(stripped, addr, locator: DebugFileLocator(debugDirectories: ["\(d)/debugdir"], searchSystem: false)) else {
            return XCTFail("unresolved")
        }
        XCTAssertEqual(after.first?.function, "level4")
        XCTAssertEqual(after.count, 5)
    }

    func testInvalidatePicksUpANewDebugFile() throws {
        let d = try Fixtures.directory()
        let addr = try XCTUnwrap(try Fixtures.markers("c-O2")["c_level4"])
        let store = Fixtures.temporaryDirectory("store")
        let module = "\(d)/c-O2.bare"
        let info = try ELFInfo.read(path: module)
        let id = try XCTUnwrap(info.buildID)
        let s = Symbolicator(locator: DebugFileLocator(debugDirectories: [store + "/.build-id"], searchSystem: false), indexCacheDirectory: store)
        let rel = addr - info.firstLoadAddress
        guard case .resolved(let before) = s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false) else {
            // No module path and no debug file: nothing to read at all.
            let (x, y) = id.buildIDPathComponents
            try FileManager.default.createDirectory(atPath: "\(store)/.build-id/\(x)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(d)/c-O2.debug", toPath: "\(store)/.build-id/\(x)/\(y).debug")
            XCTAssertEqual(s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false), .unresolved(.missingDebugFile),
                           "the negative result is remembered until invalidated")
            s.invalidate(buildID: id)
            guard case .resolved(let after) = s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false) else {
                return XCTFail("not resolved after invalidate")
            }
            XCTAssertEqual(after.first?.function, "level4")
            return
        }
        XCTFail("resolved without a debug file: \(before)")
    }
}
