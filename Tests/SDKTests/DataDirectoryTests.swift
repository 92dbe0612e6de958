// The install id start reads on the app's thread (every launch but the first) and the event ids
// it makes there: read and written by hand, so their rules are checked here.
@testable import Faultline
import FaultlineTestSupport
import Foundation
import XCTest

final class DataDirectoryTests: XCTestCase {
    func testTheStoredInstallIDIsReadTrimmedAndOnlyWhenItIsThirtyTwoHexDigits() throws {
        let data = DataDirectory(root: TestSupport.makeTemporaryDirectory())
        try data.createRoot()
        XCTAssertNil(data.storedInstallID(), "no file yet")
        let id = newEventID()
        for (text, expected) in [
            (id, id), (" \t\(id)\n", id), ("\(id)\r\n\n", id), ("0123456789ABCDEFabcdef0123456789", "0123456789ABCDEFabcdef0123456789"),
            (String(id.dropLast()), nil), (id + "0", nil), (String(id.dropLast()) + "g", nil), ("", nil), ("\n \n", nil)
        ] as [(String, String?)] {
            try text.write(toFile: data.installIDFile, atomically: true, encoding: .utf8)
            XCTAssertEqual(data.storedInstallID(), expected, "file: \(text.debugDescription)")
        }
        // What start persists is what the next start reads.
        try FileManager.default.removeItem(atPath: data.installIDFile)
        let fresh = data.installID()
        XCTAssertTrue(fresh.isNew)
        data.persistInstallID(fresh.id)
        XCTAssertEqual(data.installID().id, fresh.id)
        XCTAssertFalse(data.installID().isNew)
    }

    func testStartChecksTheRootWithoutMakingItAndTheBackgroundMakesItPrivate() throws {
        let base = TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let data = DataDirectory(root: base + "/two/levels")
        XCTAssertFalse(try data.rootExists(), "missing below a writable directory: made later")
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/two"), "the check makes nothing")
        try data.createRoot()
        XCTAssertTrue(try data.rootExists())
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: data.root)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o700)

        // Unusable: below a file, or below a directory this user cannot write to.
        try Data("x".utf8).write(to: URL(fileURLWithPath: base + "/file"))
        XCTAssertThrowsError(try DataDirectory(root: base + "/file/faultline").rootExists())
        XCTAssertThrowsError(try DataDirectory(root: base + "/file").rootExists(), "a file is not a directory")
        if geteuid() != 0 {  // root may write anywhere
            try FileManager.default.createDirectory(atPath: base + "/locked", withIntermediateDirectories: false, attributes: [.posixPermissions: 0o500])
            XCTAssertThrowsError(try DataDirectory(root: base + "/locked/faultline").rootExists())
        }
    }

    func testEventIDsAreVersionFourUUIDsInLowercaseHex() {
        var seen = Set<String>()
        for _ in 0..<2000 {
            let id = Array(newEventID().utf8)
            XCTAssertEqual(id.count, 32)
            XCTAssertTrue(id.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }, String(decoding: id, as: UTF8.self))
            XCTAssertEqual(id[12], UInt8(ascii: "4"), "version nibble")
            XCTAssertTrue("89ab".utf8.contains(id[16]), "variant nibble")
            seen.insert(String(decoding: id, as: UTF8.self))
        }
        XCTAssertEqual(seen.count, 2000)
        // Every other nibble varies (the bytes are all written, in order).
        let ids = seen.map { Array($0.utf8) }
        for position in 0..<32 where position != 12 {
            XCTAssertGreaterThan(Set(ids.map { $0[position] }).count, 3, "position \(position)")
        }
    }
}
