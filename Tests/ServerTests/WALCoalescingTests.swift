// The writer's WAL-coalescing VFS (CFaultlineSQLiteVFS): a commit's frames reach the WAL in one
// write call at its sync, and every other connection (SQLite's default VFS) sees each commit, and
// only whole commits, as soon as it returns.
import CFaultlineSQLiteVFS
import CSQLite
import Foundation
import XCTest

@testable import FaultlineServer

final class WALCoalescingTests: XCTestCase {
    var dir: String!
    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "faultline-wal-coalescing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func testEveryCommitIsReadByAnotherConnectionAndTheFramesAreGathered() throws {
        let path = dir + "/db.sqlite"
        let writer = try coalescingWriter(path)
        let reader = try SQLiteConnection(path: path)
        var asked0: Int64 = 0, made0: Int64 = 0
        faultline_wal_coalescing_counts(&asked0, &made0)
        var rng = SystemRandomNumberGenerator()
        var bodies: [Data] = []
        for i in 1...120 {
            // Several pages per commit (a 9 KB row spills to overflow pages), as an event's row does.
            let body = Data((0..<(9000 + i)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            bodies.append(body)
            try writer.transaction { try writer.run("INSERT INTO t(id, body) VALUES(?, ?)", .int(Int64(i)), .blob(body)) }
            var count: Int64 = -1
            try reader.query("SELECT count(*) FROM t") { count = $0.int(0) }
            XCTAssertEqual(count, Int64(i), "after commit \(i)")
        }
        for i in [1, 60, 120] {
            var read: Data?
            try reader.query("SELECT body FROM t WHERE id = ?", .int(Int64(i))) { read = $0.blob(0) }
            XCTAssertEqual(read, bodies[i - 1], "row \(i)")
        }
        var asked: Int64 = 0, made: Int64 = 0
        faultline_wal_coalescing_counts(&asked, &made)
        // Each commit asked for at least a header and a page per frame, three frames or more.
        XCTAssertGreaterThanOrEqual(asked - asked0, 120 * 6)
        XCTAssertLessThan(made - made0, (asked - asked0) / 2)
        // A checkpoint by a third connection copies every frame into the database file.
        let checkpointer = try SQLiteConnection(path: path)
        try checkpointer.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        let fresh = try SQLiteConnection(path: path)
        var total: Int64 = 0
        try fresh.query("SELECT sum(length(body)) FROM t") { total = $0.int(0) }
        XCTAssertEqual(total, Int64(bodies.reduce(0) { $0 + $1.count }))
        try fresh.query("PRAGMA integrity_check") { XCTAssertEqual($0.text(0), "ok") }
    }

    /// A transaction rolled back after its pages spilled to the WAL leaves nothing behind, and the
    /// next commit's frames (written over the same offsets) are read correctly. (Its 1 MB of
    /// spilled frames also passes the default VFS's 128 KiB limit per write call.)
    func testARolledBackSpillIsOverwrittenByTheNextCommit() throws {
        let path = dir + "/db.sqlite"
        // A tiny cache: a large transaction spills frames before it commits.
        let writer = try coalescingWriter(path, cachePages: 10)
        try writer.exec("BEGIN")
        for i in 1...200 { try writer.run("INSERT INTO t(id, body) VALUES(?, ?)", .int(Int64(i)), .blob(Data(repeating: 1, count: 5000))) }
        try writer.exec("ROLLBACK")
        try writer.transaction {
            for i in 1...50 { try writer.run("INSERT INTO t(id, body) VALUES(?, ?)", .int(Int64(i)), .blob(Data(repeating: 2, count: 5000))) }
        }
        let reader = try SQLiteConnection(path: path)
        var rows: Int64 = 0, twos: Int64 = 0
        try reader.query("SELECT count(*), sum(body = ?) FROM t", .blob(Data(repeating: 2, count: 5000))) {
            rows = $0.int(0)
            twos = $0.int(1)
        }
        XCTAssertEqual(rows, 50)
        XCTAssertEqual(twos, 50)
        try reader.query("PRAGMA integrity_check") { XCTAssertEqual($0.text(0), "ok") }
    }

    /// The store's own writer goes through the VFS under `.full`: its commits ask for many more
    /// writes than reach the file.
    func testTheStoreWritesThroughItUnderFullDurability() throws {
        let store = try SQLiteStore(path: dir + "/store.sqlite", durability: .full)
        defer { store.close() }
        var asked0: Int64 = 0, made0: Int64 = 0
        faultline_wal_coalescing_counts(&asked0, &made0)
        for i in 0..<20 {
            let item = IncomingItem(projectID: 1, type: "log", received: Double(i), payload: Data(repeating: UInt8(i), count: 9000))
            _ = try store.storeIngest(event: nil, items: [item])
        }
        var asked: Int64 = 0, made: Int64 = 0
        faultline_wal_coalescing_counts(&asked, &made)
        XCTAssertGreaterThanOrEqual(asked - asked0, 20 * 6)
        XCTAssertLessThan(made - made0, (asked - asked0) / 2)
    }

    /// Under `.normal` the writer keeps SQLite's default VFS (nothing syncs a commit's frames
    /// before other connections may read them).
    func testNormalDurabilityUsesTheDefaultVFS() {
        XCTAssertNil(SQLiteStore.writerVFS(.normal))
    }

    /// A writer connection as the store opens it under `.full`, with a table `t(id, body)`.
    private func coalescingWriter(_ path: String, cachePages: Int? = nil) throws -> SQLiteConnection {
        let writer = try SQLiteConnection(path: path, vfs: try XCTUnwrap(SQLiteStore.writerVFS(.full)))
        try writer.exec("PRAGMA journal_mode=WAL")
        try writer.exec("PRAGMA synchronous=FULL")
        if let cachePages { try writer.exec("PRAGMA cache_size=\(cachePages)") }
        try writer.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        return writer
    }
}
