// The `BackfillJobs` and `RetentionStore` parts of the store contract, on SQLite and on a real
// PostgreSQL: a build-id is queued once; a job has one holder until its lease runs out; a holder
// that lost its job writes nothing more; retention deletes in bounded batches, oldest first,
// only until the stored bytes are within the cap, and leaves every issue's count equal to the
// occurrences it holds; the server's background retention does the same end to end.
// `InstallWindows`: the install cap's windows are counted atomically in the store, survive a
// restart, and (PostgreSQL) hold across nodes.
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest
import FaultlineHashing
import Synchronization

extension StoreConformance {
    static func backfillJobs(_ store: SQLStoreUnderTest) throws {
        let other = BuildID(hex: "ffeeddccbbaa99887766554433221100ffeeddcc")!
        let first = try store.enqueueBackfill(buildID: buildID)
        XCTAssertEqual(try store.enqueueBackfill(buildID: buildID), first, "a build-id already queued is not queued twice")
        let second = try store.enqueueBackfill(buildID: other)
        XCTAssertEqual(try store.openBackfills().map(\.record.id), [first, second])

        // Oldest first; one holder at a time.
        // Leases of 2 s: long enough for the calls below on a loaded machine, short enough to wait out.
        let a = try XCTUnwrap(try store.claimBackfill(holder: "a", lease: 2))
        XCTAssertEqual(a.record.id, first)
        XCTAssertEqual(a.holder, "a")
        XCTAssertNil(a.resumeAfter)
        let b = try XCTUnwrap(try store.claimBackfill(holder: "b", lease: 60))
        XCTAssertEqual(b.record.id, second, "b takes the other job, not a's")
        XCTAssertNil(try store.claimBackfill(holder: "c", lease: 60), "nothing left to take")
        // Taken: queueing the build-id again queues a new run (the one running may miss the new file).
        let third = try store.enqueueBackfill(buildID: buildID)
        XCTAssertNotEqual(third, first)

        // a saves progress, then its lease runs out and c takes the job over from a's resume point.
        var record = a.record
        record.occurrencesDone = 5
        record.occurrencesSymbolicated = 4
        record.merges = [IssueMergeRecord(issue: 3, into: 1)]
        XCTAssertTrue(try store.saveBackfill(record, resumeAfter: "k5", holder: "a"))
        XCTAssertTrue(try store.renewBackfill(id: first, holder: "a", lease: 2))
        Thread.sleep(forTimeInterval: 2.5)
        let c = try XCTUnwrap(try store.claimBackfill(holder: "c", lease: 60))
        XCTAssertEqual(c.record.id, first, "an expired running job goes before a queued one")
        XCTAssertEqual(c.resumeAfter, "k5")
        XCTAssertEqual(c.record.occurrencesDone, 5)
        XCTAssertEqual(c.record.occurrencesSymbolicated, 4)
        XCTAssertEqual(c.record.merges, record.merges)
        // The old holder is fenced off.
        XCTAssertFalse(try store.renewBackfill(id: first, holder: "a", lease: 60))
        record.occurrencesDone = 99
        XCTAssertFalse(try store.saveBackfill(record, resumeAfter: "k9", holder: "a"))
        XCTAssertEqual(try store.backfillJob(id: first)?.record.occurrencesDone, 5)

        var done = c.record
        done.state = "done"
        done.finished = 3
        done.occurrencesDone = 10
        XCTAssertTrue(try store.saveBackfill(done, resumeAfter: "k9", holder: "c"))
        XCTAssertEqual(try store.backfillJob(id: first)?.record.state, "done")
        XCTAssertFalse(try store.saveBackfill(done, resumeAfter: "k9", holder: "c"), "a finished job is nobody's")
        XCTAssertEqual(try store.openBackfills().map(\.record.id), [second, third])
        XCTAssertEqual(try store.latestBackfill(buildID: buildID)?.id, third)
    }

    static func retention(_ store: SQLStoreUnderTest) throws {
        let p = try store.createProject(slug: "old", name: "Old")
        let traceID = "0123456789abcdef0123456789abcdef"
        let frame = StackFrame(buildID: buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        let frame2 = StackFrame(buildID: buildID, offset: 0x20, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        // 30 occurrences received at t = 1000…1029 in one issue over two stacks, and 10 items at t = 1000…1009.
        var outcomes: [GroupingOutcome] = []
        for i in 0..<30 {
            var e = event(p.id, "e\(i)", release: "r\(i / 10)")
            e.received = 1000 + Double(i)
            e.timestamp = 1000 + Double(i)
            let id = try XCTUnwrap(
                try store.storeIngest(
                    event: e, items: i < 10 ? [IncomingItem(projectID: p.id, type: "log", received: 1000 + Double(i), payload: Data(count: 100))] : []))
            var grouped = outcome(try XCTUnwrap(try store.occurrence(id: id)), hash: "one", frames: [i < 15 ? frame : frame2])
            grouped.environment = "env\(i % 2)"
            grouped.tags = [EventTag(key: "shard", value: "s\(i % 3)")]
            outcomes.append(grouped)
            try store.linkOccurrence(occurrenceID: id, projectID: p.id, eventID: "e\(i)", traceID: traceID, spanID: nil)
        }
        // One more, not grouped yet: retention leaves it to grouping.
        var ungrouped = event(p.id, "ungrouped")
        ungrouped.received = 1
        _ = try store.storeIngest(event: ungrouped, items: [])
        try store.recordGrouping(outcomes)
        let issue = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first)
        XCTAssertEqual(issue.count, 30)
        let bytes = try store.retainedBytes()
        XCTAssertEqual(bytes, Int64(31 * Deflate.compress(Data("{}".utf8)).count + 10 * 100))
        // Oldest first across kinds, an occurrence before an item of the same time; the ungrouped one is not listed.
        let oldest = try store.oldestRetained(limit: 100)
        XCTAssertEqual(oldest.count, 40)
        XCTAssertEqual(oldest.prefix(4).map(\.received), [1000, 1000, 1001, 1001])
        XCTAssertEqual(oldest.prefix(4).map(\.kind), [.occurrence, .item, .occurrence, .item])
        XCTAssertEqual(oldest.reduce(0) { $0 + $1.bytes }, bytes - Int64(Deflate.compress(Data("{}".utf8)).count))
        XCTAssertEqual(try store.oldestRetained(limit: 3).map(\.received), [1000, 1000, 1001])

        // Bounded batches, oldest first; the issue's count, first seen and releases follow.
        XCTAssertEqual(try store.deleteOccurrences(receivedBefore: 1020, limit: 8), 8)
        XCTAssertEqual(try store.issue(id: issue.id)?.count, 22)
        XCTAssertEqual(try store.issue(id: issue.id)?.firstSeen, 1008)
        XCTAssertEqual(try store.deleteOccurrences(receivedBefore: 1020, limit: 8), 8)
        XCTAssertEqual(try store.deleteOccurrences(receivedBefore: 1020, limit: 8), 4)
        XCTAssertEqual(try store.deleteOccurrences(receivedBefore: 1020, limit: 8), 0)
        XCTAssertEqual(try store.trace(projectID: p.id, traceID: traceID).occurrences.count, 10, "a deleted occurrence's trace link goes with it")
        let after = try XCTUnwrap(try store.issue(id: issue.id))
        XCTAssertEqual(after.count, 10)
        XCTAssertEqual(after.firstSeen, 1020)
        XCTAssertEqual(after.releases, ["r2"], "releases only of the occurrences still held")
        XCTAssertEqual(try store.occurrences(issueID: issue.id, limit: 100, offset: 0).count, 10)
        XCTAssertNotNil(try store.occurrence(projectID: p.id, eventID: "ungrouped"), "ungrouped rows wait for grouping")
        XCTAssertEqual(try store.deleteItems(receivedBefore: 1005, limit: 100), 5)
        XCTAssertEqual(try store.itemCounts(projectID: p.id).byType["log"], 5)

        // The first stack lost all its occurrences: it is an orphan now, the second is not. The
        // pages' rows of the first (its environments and tags) go with it.
        let stackKeys = [frame, frame2].map { StackSignature(exceptionType: "SIGSEGV", frames: [$0]).encodedWithKey.1 }
        func pageRows(_ key: String) throws -> [Int64] {
            let db = try XCTUnwrap(store as? any SQLDatabase)
            return try db.reading { s in
                try ["web_stack_envs", "web_stack_tags"].map { table in
                    try s.rows("SELECT count(*) FROM \(table) WHERE stack_key = ?", [.text(key)]) { $0.int(0) }.first ?? -1
                }
            }
        }
        XCTAssertEqual(try pageRows(stackKeys[0]), [2, 3])
        let buildIDs: @Sendable (Data) -> Set<BuildID> = { StackSignature.decode($0)?.buildIDs ?? [] }
        XCTAssertEqual(try store.deleteOrphanedStacks(limit: 10, buildIDs: buildIDs), 1)
        XCTAssertEqual(try store.deleteOrphanedStacks(limit: 10, buildIDs: buildIDs), 0)
        XCTAssertEqual(try store.stacks(referencing: buildID).map(\.occurrences), [10])
        XCTAssertEqual(try pageRows(stackKeys[0]), [0, 0], "the orphan's environments and tags went with it")
        XCTAssertEqual(try pageRows(stackKeys[1]), [2, 3], "the live stack keeps its own")

        // Everything older than the future goes: the issue is empty and no longer listed.
        XCTAssertEqual(try store.deleteOccurrences(receivedBefore: 1e12, limit: 100), 10)
        XCTAssertEqual(try store.trace(projectID: p.id, traceID: traceID).occurrences.count, 0)
        XCTAssertEqual(try store.issue(id: issue.id)?.count, 0)
        XCTAssertTrue(try store.issues(projectID: p.id, limit: 10, offset: 0).isEmpty)
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 0)
    }

    /// The `Retention` policy over a store: age first, then the size cap, oldest first across kinds.
    static func retentionPolicy(_ store: SQLStoreUnderTest) throws {
        let p = try store.createProject(slug: "policy", name: "Policy")
        let frame = StackFrame(buildID: buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        let now = 10_000_000.0
        var outcomes: [GroupingOutcome] = []
        // Day-old events at now - 2 days … now - 2 days + 19 s, and 20 fresh ones, each ~1 KB; 20 fresh items of 1 KB.
        for i in 0..<40 {
            var e = event(p.id, "p\(i)")
            e.received = (i < 20 ? now - 2 * 86_400 : now - 100) + Double(i)
            e.compressedEvent = Data(repeating: UInt8(i), count: 1000)
            let items = i >= 20 ? [IncomingItem(projectID: p.id, type: "log", received: now - 100 + Double(i) + 0.5, payload: Data(count: 1000))] : []
            let id = try XCTUnwrap(try store.storeIngest(event: e, items: items))
            outcomes.append(outcome(try XCTUnwrap(try store.occurrence(id: id)), hash: "policy", frames: [frame]))
        }
        try store.recordGrouping(outcomes)
        var limits = RetentionLimits()
        limits.maxAgeDays = 1
        limits.batch = 7
        let sweep = try Retention(stores: Stores(testing: store), limits: limits).sweep(now: now)
        XCTAssertEqual(sweep.occurrences, 20, "the 20 two-day-old events go, in batches of 7")
        XCTAssertEqual(sweep.items, 0)
        XCTAssertEqual(try store.issues(projectID: p.id, limit: 10, offset: 0).first?.count, 20)

        limits.maxAgeDays = 0
        limits.maxTotalBytes = 25_000
        let capped = try Retention(stores: Stores(testing: store), limits: limits).sweep(now: now)
        // 40,000 bytes over a cap of 25,000: the 15 oldest rows of 1,000 bytes go (e20, i20, … e26, i26, e27), not a row more.
        XCTAssertEqual(try store.retainedBytes(), 25_000)
        XCTAssertEqual(capped.occurrences, 8)
        XCTAssertEqual(capped.items, 7)
        let issue = try XCTUnwrap(try store.issues(projectID: p.id, limit: 1, offset: 0).first)
        let left = try store.occurrences(issueID: issue.id, limit: 100, offset: 0)
        XCTAssertEqual(left.count, 12)
        XCTAssertEqual(Int64(left.count), issue.count, "the count is what the issue holds")
        XCTAssertEqual(left.map(\.received).min(), now - 100 + 28)
        XCTAssertEqual(try store.oldestRetained(limit: 1).first?.received, now - 100 + 27.5, "items and events went in one order")
    }

    /// The size cap deletes oldest first only until the stored bytes are within it (issue 29, item
    /// 10: a 1 MiB cap over 1.42 MiB deleted all 300 events, a batch of 500 per kind at a time).
    static func retentionStopsAtTheCap(_ store: SQLStoreUnderTest) throws {
        let p = try store.createProject(slug: "cap", name: "Cap")
        let frame = StackFrame(buildID: buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        var outcomes: [GroupingOutcome] = []
        // 30 events of 1,000 bytes, received at t = 5000…5029: 30,000 bytes.
        for i in 0..<30 {
            var e = event(p.id, "c\(i)")
            e.received = 5000 + Double(i)
            e.compressedEvent = Data(repeating: UInt8(i), count: 1000)
            let id = try XCTUnwrap(try store.storeIngest(event: e, items: []))
            outcomes.append(outcome(try XCTUnwrap(try store.occurrence(id: id)), hash: "cap", frames: [frame]))
        }
        try store.recordGrouping(outcomes)
        XCTAssertEqual(try store.retainedBytes(), 30_000)
        var limits = RetentionLimits()
        limits.maxTotalBytes = 20_500  // about 2/3: 9 deletions leave 21,000 (over), 10 leave 20,000 (under)
        let sweep = try Retention(stores: Stores(testing: store), limits: limits).sweep()
        XCTAssertEqual(sweep.occurrences, 10, "only the 10 oldest go")
        XCTAssertEqual(try store.retainedBytes(), 20_000)
        let issue = try XCTUnwrap(try store.issues(projectID: p.id, limit: 1, offset: 0).first)
        XCTAssertEqual(issue.count, 20)
        let left = try store.occurrences(issueID: issue.id, limit: 100, offset: 0)
        XCTAssertEqual(Set(left.map(\.received)), Set((10..<30).map { 5000 + Double($0) }), "the newest 20 stay")
        XCTAssertEqual(try Retention(stores: Stores(testing: store), limits: limits).sweep().occurrences, 0, "within the cap: nothing more goes")
    }
}

extension StoreConformance {
    static func installWindows(_ store: SQLStoreUnderTest) throws {
        XCTAssertNil(try store.admitInstall(projectID: 1, installID: "i", count: 2, limit: 3, windowSeconds: 2))
        XCTAssertNil(try store.admitInstall(projectID: 1, installID: "i", count: 1, limit: 3, windowSeconds: 2))
        XCTAssertNotNil(try store.admitInstall(projectID: 1, installID: "i", count: 1, limit: 3, windowSeconds: 2), "the fourth is over the cap")
        XCTAssertNil(try store.admitInstall(projectID: 1, installID: "other", count: 3, limit: 3, windowSeconds: 2), "windows are per install")
        XCTAssertNil(try store.admitInstall(projectID: 2, installID: "i", count: 3, limit: 3, windowSeconds: 2), "and per project")
        XCTAssertNotNil(try store.admitInstall(projectID: 1, installID: "new", count: 4, limit: 3, windowSeconds: 2), "more than the cap at once")
        XCTAssertEqual(try store.installWindow(projectID: 1, installID: "i")?.count, 3)
        Thread.sleep(forTimeInterval: 2.5)
        XCTAssertNil(try store.admitInstall(projectID: 1, installID: "i", count: 3, limit: 3, windowSeconds: 2), "a new window")
        XCTAssertEqual(try store.installWindow(projectID: 1, installID: "i")?.count, 3)
        store.saveInstallWindow(projectID: 9, installID: "saved", start: 5, count: 7)
        _ = try store.admitInstall(projectID: 9, installID: "flush", count: 1, limit: 9, windowSeconds: 60)  // after the write behind
        XCTAssertEqual(try store.installWindow(projectID: 9, installID: "saved")?.count, 7)
        XCTAssertEqual(try store.deleteInstallWindows(startedBefore: 6, limit: 10), 1, "only the window started at 5 is that old")
        XCTAssertNil(try store.installWindow(projectID: 9, installID: "saved"))
    }
}

final class SQLiteJobAndRetentionTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("store-jobs") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }
    func makeStore() throws -> SQLStoreUnderTest { try SQLiteStore(path: dir + "/faultline.sqlite") }

    func testBackfillJobs() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.backfillJobs(s) }
    func testRetention() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retention(s) }
    func testRetentionPolicy() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retentionPolicy(s) }
    func testRetentionStopsAtTheCap() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retentionStopsAtTheCap(s) }
    func testInstallWindows() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.installWindows(s) }

    /// The per-install cap survives a restart: an install that used its window is still refused.
    /// An install id is stored (events, cap windows) at most 128 bytes long: a longer one as its
    /// SHA-1, so it still counts against one cap and a client rotating huge ids cannot grow the store.
    func testAHugeInstallIDIsStoredHashedAndStillCapped() throws {
        var limits = IngestLimits()
        limits.eventsPerInstall = 2
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        let huge = String(repeating: "i", count: 200_000)
        for expected in [200, 200, 429] {
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: huge))).status, expected)
        }
        let hashed = "sha1:" + SHA1Hash.hex(huge)
        XCTAssertEqual(InstallID.bounded(huge), hashed)
        XCTAssertEqual(InstallID.bounded("short-id"), "short-id")
        XCTAssertEqual(try server.server.stores.installWindows.installWindow(projectID: server.projectID, installID: hashed)?.count, 2)
        XCTAssertNil(try server.server.stores.installWindows.installWindow(projectID: server.projectID, installID: huge))
    }

    func testTheInstallCapPersistsAcrossARestart() throws {
        var limits = IngestLimits()
        limits.eventsPerInstall = 3
        let first = try TestServer(limits: limits)
        for _ in 0..<3 {
            XCTAssertEqual(first.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "install-1"))).status, 200)
        }
        XCTAssertEqual(first.sendEnvelope(TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: "install-1"))).status, 429)
        let (dir, project, key) = (first.dataDirectory, first.projectID, first.publicKey)
        first.stop(removeData: false)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var config = ServerConfiguration(dataDirectory: dir)
        config.port = 0
        config.limits = limits
        let again = try Server(config: config)
        try again.start()
        defer { again.stop() }
        func send(_ install: String) -> Int {
            RawHTTP.send(
                port: again.port, method: "POST", path: "/api/\(project)/envelope/",
                headers: ["X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(key)"],
                body: TestEvents.envelope(TestEvents.native(offsets: [0x10], installID: install))
            ).status
        }
        XCTAssertEqual(send("install-1"), 429, "the window counted before the restart still holds")
        XCTAssertEqual(send("install-2"), 200)
    }

    /// The background sweep of a running server, configured as `--retention-days` configures it.
    func testTheServerPrunesOldEventsInTheBackground() throws {
        let server = try TestServer { c in
            c.retention.maxAgeDays = 1; c.retention.interval = 0.2
        }
        defer { server.stop() }
        let old = TestEvents.eventID(), fresh = TestEvents.eventID()
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(eventID: old, offsets: [0x10]))).status, 200)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(eventID: fresh, offsets: [0x10]))).status, 200)
        try server.waitUntilIdle()
        // Age the first one by two days, as if received then.
        let sqlite = try XCTUnwrap(server.server.store as? SQLiteStore)
        try sqlite.writer.sync { c in _ = try c.run("UPDATE occurrences SET received = received - 172800 WHERE event_id = ?", .text(old)) }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, server.get("/api/0/projects/faultline/\(server.projectID)/events/\(old)/").status != 404 { usleep(50_000) }
        XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/events/\(old)/").status, 404, "the old event was pruned")
        XCTAssertEqual(server.get("/api/0/projects/faultline/\(server.projectID)/events/\(fresh)/").status, 200)
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        XCTAssertEqual(issues.first?["count"]?.int64Value, 1, "the issue counts what is left")
    }
}

final class PostgresJobAndRetentionTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }
    func makeStore() throws -> SQLStoreUnderTest { try PostgresStore(url: try PostgresCluster.shared(for: Self.self).createDatabase(), connections: 4) }

    func testBackfillJobs() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.backfillJobs(s) }
    func testRetention() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retention(s) }
    func testRetentionPolicy() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retentionPolicy(s) }
    func testRetentionStopsAtTheCap() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.retentionStopsAtTheCap(s) }
    func testInstallWindows() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.installWindows(s) }

    /// Two nodes admitting one install at once: exactly the cap is admitted, cluster-wide.
    func testTheInstallCapHoldsAcrossNodes() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let a = try PostgresStore(url: url, connections: 4), b = try PostgresStore(url: url, connections: 4)
        defer { a.close(); b.close() }
        let limiters = [InstallVolumeLimiter(limit: 50, windowSeconds: 3600, store: a), InstallVolumeLimiter(limit: 50, windowSeconds: 3600, store: b)]
        let admitted = Mutex(0)
        let group = DispatchGroup()
        for n in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<40 where limiters[n % 2].admit(projectID: 1, installID: "busy") == nil {
                    admitted.withLock { $0 += 1 }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(admitted.withLock { $0 }, 50, "160 attempts on two nodes, a cap of 50: exactly 50 admitted")
    }

    /// Two nodes polling at once take different jobs (SKIP LOCKED), never the same one.
    func testNodesPollingAtOnceNeverTakeTheSameJob() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let a = try PostgresStore(url: url, connections: 4), b = try PostgresStore(url: url, connections: 4)
        defer { a.close(); b.close() }
        for i in 0..<40 { _ = try a.enqueueBackfill(buildID: BuildID(hex: String(format: "%040x", i + 1))!) }
        let tally = Mutex<(taken: [Int64], failures: [String])>(([], []))
        let group = DispatchGroup()
        for (n, store) in [a, b, a, b].enumerated() {
            DispatchQueue.global().async(group: group) {
                do {
                    while let job = try store.claimBackfill(holder: "node\(n)", lease: 60) {
                        tally.withLock { $0.taken.append(job.record.id) }
                    }
                } catch {
                    let failure = "\(error)"
                    tally.withLock { $0.failures.append(failure) }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let (taken, failures) = tally.withLock { $0 }
        XCTAssertEqual(failures, [], "a claim that fails must not pass as 'nothing left'")
        XCTAssertEqual(taken.count, 40)
        XCTAssertEqual(Set(taken).count, 40, "each job taken once")
    }
}
