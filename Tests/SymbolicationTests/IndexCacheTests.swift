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
            .symbolicate(
                buildID: info.buildID, modulePath: module, relativeAddress: address - info.firstLoadAddress, isReturnAddress: false, architecture: .x86_64)
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
        flipped[flipped.count - 9] ^= 0x5a  // payload bit rot: checksum catches it
        var wrongVersion = good
        wrongVersion[8] = 0xfe  // another format version
        var otherBuild = good
        otherBuild[40] ^= 0xff  // index of another build-id
        let damaged: [(String, Data)] = [
            ("flipped", flipped), ("truncated", good.prefix(good.count / 2)),
            ("empty", Data()), ("version", wrongVersion), ("build-id", otherBuild),
            ("garbage", Data(repeating: 0x41, count: 4096))
        ]
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
        guard case .resolved(let before) = s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false, architecture: .x86_64)
        else {
            // No module path and no debug file: nothing to read at all.
            let (x, y) = id.buildIDPathComponents
            try FileManager.default.createDirectory(atPath: "\(store)/.build-id/\(x)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: "\(d)/c-O2.debug", toPath: "\(store)/.build-id/\(x)/\(y).debug")
            XCTAssertEqual(
                s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false, architecture: .x86_64),
                .unresolved(.missingDebugFile),
                "the negative result is remembered until invalidated")
            s.invalidate(buildID: id)
            guard case .resolved(let after) = s.symbolicate(buildID: id, modulePath: nil, relativeAddress: rel, isReturnAddress: false, architecture: .x86_64)
            else {
                return XCTFail("not resolved after invalidate")
            }
            XCTAssertEqual(after.first?.function, "level4")
            return
        }
        XCTFail("resolved without a debug file: \(before)")
    }
    /// The writer streams the tables and sums the checksum piece by piece (`IndexChecksum`):
    /// pieces of every length, cut anywhere, must give the sum of the whole as the format
    /// defines it (the reference below: two lanes of 8-byte words, trailing bytes into the first).
    func testChecksumSummedInPiecesEqualsTheFormatsDefinition() {
        func reference(_ bytes: [UInt8]) -> UInt64 {
            var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count), h2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
            let words = bytes.count / 8
            func word(_ i: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[i * 8 + $1]) << (8 * UInt64($1)) } }
            for i in 0..<words {
                if i % 2 == 0 { h = (h ^ word(i)) &* 0x0000_0100_0000_01B3 } else { h2 = (h2 ^ word(i)) &* 0x9E37_79B9_7F4A_7C15 }
            }
            for j in (words * 8)..<bytes.count { h = (h ^ UInt64(bytes[j])) &* 0x0000_0100_0000_01B3 }
            return h ^ (h2 &* 31) ^ (h >> 29)
        }
        // Pinned: values of the checksum every stored index so far carries (format version 5), so
        // that the definition above cannot drift together with the code.
        for (length, pinned) in [(100, 0x38ED_B015_BC8E_F5C0 as UInt64), (4099, 0xB2BD_0A69_0EE0_ED11)] {
            let bytes = (0..<length).map { UInt8(($0 * 37) % 251) }
            XCTAssertEqual(reference(bytes), pinned)
            bytes.withUnsafeBytes { XCTAssertEqual(IndexFormat.checksum($0), pinned) }
        }
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 31, 64, 1000, 4099] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = reference(bytes)
            bytes.withUnsafeBytes { XCTAssertEqual(IndexFormat.checksum($0), expected, "whole, \(length) bytes") }
            for _ in 0..<20 {
                var sum = IndexChecksum(payloadBytes: length)
                var at = 0
                bytes.withUnsafeBytes { all in
                    while at < length {
                        let piece = Int.random(in: 1...max(1, min(length - at, 40)), using: &generator)
                        sum.add(UnsafeRawBufferPointer(rebasing: all[at..<(at + piece)]))
                        at += piece
                    }
                }
                XCTAssertEqual(sum.finish(), expected, "in pieces, \(length) bytes")
            }
        }
    }

    /// An index built in this run is written from its tables, not from a copy in the file layout:
    /// the stored file must load (checksum verified) and answer as the in-memory one does.
    func testStoredIndexLoadsWithItsChecksumAndAnswersAsBuilt() throws {
        let d = try Fixtures.directory()
        let handle = try ELFHandle(path: "\(d)/c-O2.full")
        let id = try XCTUnwrap(try ELFInfo.read(path: "\(d)/c-O2.full").buildID)
        let built = try XCTUnwrap(DWARFIndex.inMemory(DWARFIndexBuilder.build(debugFile: handle, symbolSources: [handle]), buildID: id))
        let cache = IndexCache(directory: dir)
        XCTAssertTrue(cache.store(built, for: id))
        let attributes = try FileManager.default.attributesOfItem(atPath: cache.path(for: id))
        XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, built.byteCount)
        let loaded = try XCTUnwrap(cache.load(id), "the stored index did not pass its own checks")
        // The few-lookups load drops the pages its checksum read; it answers the same.
        let fewLookups = try XCTUnwrap(cache.load(id, fewLookups: true))
        XCTAssertEqual(Array(fewLookups.rowAddress), Array(built.rowAddress))
        XCTAssertEqual(Array(loaded.rowAddress), Array(built.rowAddress))
        XCTAssertGreaterThan(built.rowAddress.count, 0)
        var a: [IndexedFrame] = [], b: [IndexedFrame] = []
        for address in built.rowAddress where address != 0 {
            built.lookup(address, into: &a)
            loaded.lookup(address, into: &b)
            XCTAssertEqual(a.map(\.name).map(built.string), b.map(\.name).map(loaded.string))
            XCTAssertEqual(a.map(\.line), b.map(\.line))
            fewLookups.lookup(address, into: &b)
            XCTAssertEqual(a.map(\.line), b.map(\.line))
        }
    }
}
