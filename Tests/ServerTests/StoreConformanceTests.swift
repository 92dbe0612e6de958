// The `Store` contract, as behaviour every implementation must show. `StoreConformance` holds the
// checks over the core store (with project administration and issue reads); each implementation
// runs them from its own test class: SQLite, and PostgreSQL against a real server that the class
// starts (tools/pg-local) and stops.
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import Foundation
import XCTest
import Synchronization

enum StoreConformance {
    static let buildID = BuildID(hex: "00112233445566778899aabbccddeeff00112233")!

    static func projectsKeysAndTokens(_ store: CoreStoreUnderTest) throws {
        let p = try store.createProject(slug: "app", name: "App")
        XCTAssertEqual(try store.project(idOrSlug: "app"), p)
        XCTAssertEqual(try store.project(idOrSlug: String(p.id)), p)
        XCTAssertNil(try store.project(idOrSlug: "missing"))
        XCTAssertTrue(try store.projects().contains(p))
        let key = try store.createPublicKey(projectID: p.id, allowedAppIDs: ["com.example"])
        XCTAssertEqual(try store.publicKey(key.key.value), key)
        XCTAssertEqual(try store.publicKeys(projectID: p.id), [key])
        XCTAssertNil(try store.publicKey(String(repeating: "0", count: 32)))
        let token = try store.createServerToken(name: "ci")
        XCTAssertTrue(try store.isServerToken(token))
        XCTAssertFalse(try store.isServerToken(token + "x"))
    }

    static func event(_ projectID: Int64, _ eventID: String, release: String = "r1") -> IncomingEvent {
        IncomingEvent(
            projectID: projectID, eventID: eventID, received: 100, timestamp: 90, release: release, installID: "i",
            compressedEvent: Deflate.compress(Data("{}".utf8)))
    }

    static func outcome(_ o: StoredOccurrence, hash: String, frames: [StackFrame]) -> GroupingOutcome {
        let stack = StackSignature(exceptionType: "SIGSEGV", frames: frames)
        let (data, key) = stack.encodedWithKey
        return GroupingOutcome(
            occurrenceID: o.id, projectID: o.projectID, stack: stack, stackEncoded: data, stackKey: key,
            fingerprint: Fingerprint(hash: hash, title: "SIGSEGV in \(hash)", culprit: hash, symbolicated: false),
            timestamp: o.timestamp, release: o.release)
    }

    static func ingestGroupingAndRegrouping(_ store: SQLStoreUnderTest) throws {
        let p = try store.createProject(slug: "ingest", name: "Ingest")
        let a = try XCTUnwrap(try store.storeIngest(event: event(p.id, "a"), items: []))
        XCTAssertNil(try store.storeIngest(event: event(p.id, "a"), items: []), "an event id is stored once per project")
        _ = try store.storeIngest(
            event: event(p.id, "b", release: "r2"),
            items: [
                IncomingItem(projectID: p.id, type: "session", received: 100, payload: Data("{}".utf8), sessionsStarted: 2, sessionsCrashed: 1)
            ])
        XCTAssertEqual(try store.occurrence(id: a)?.eventID, "a")
        XCTAssertEqual(try store.occurrence(projectID: p.id, eventID: "b")?.release, "r2")
        let counts = try store.itemCounts(projectID: p.id)
        XCTAssertEqual(counts.byType["session"], 1)
        XCTAssertEqual(counts.sessionsTotal, 2)
        XCTAssertEqual(counts.sessionsCrashed, 1)

        let pending = try store.unprocessedOccurrences(limit: 10).filter { $0.projectID == p.id }
        XCTAssertEqual(pending.map(\.eventID).sorted(), ["a", "b"])
        let frameA = StackFrame(buildID: buildID, offset: 0x10, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        let frameB = StackFrame(buildID: buildID, offset: 0x20, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        try store.recordGrouping([outcome(pending[0], hash: "h1", frames: [frameA]), outcome(pending[1], hash: "h2", frames: [frameB])])
        XCTAssertTrue(try store.unprocessedOccurrences(limit: 10).filter { $0.projectID == p.id }.isEmpty)
        XCTAssertEqual(try store.counts(projectID: p.id).processed, 2)
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 2)
        let issues = try store.issues(projectID: p.id, limit: 10, offset: 0)
        XCTAssertEqual(Set(issues.map(\.fingerprint)), ["h1", "h2"])
        XCTAssertEqual(try store.occurrences(issueID: issues[0].id, limit: 10, offset: 0).count, 1)

        // Both stacks reference the build-id; moving both to one fingerprint merges the issues.
        let stacks = try store.stacks(referencing: buildID).filter { $0.projectID == p.id }.compactMap { StackSignature.decode($0.signature) }
        XCTAssertEqual(stacks.count, 2)
        let merged = Fingerprint(hash: "h1", title: "merged", culprit: "f", symbolicated: true)
        let summary = try IssueMerger.apply(stacks.map { Regrouping(stackKey: $0.key, projectID: p.id, fingerprint: merged) }, in: store)
        XCTAssertEqual(summary.issuesMerged, 1)
        XCTAssertEqual(summary.occurrencesMoved, 1)
        let after = try store.issues(projectID: p.id, limit: 10, offset: 0)
        XCTAssertEqual(after.count, 1)
        XCTAssertEqual(after.first?.count, 2)
        XCTAssertEqual(Set(after.first?.releases ?? []), ["r1", "r2"])
        let gone = try XCTUnwrap(summary.merges.first)
        XCTAssertEqual(try store.issue(id: gone.issue)?.id, gone.into, "a merged issue's id resolves to the one it went into")

        // Both stacks to a fingerprint no issue has: one live issue ends up holding both.
        let renamed = Fingerprint(hash: "h3", title: "renamed", culprit: "g", symbolicated: true)
        let rename = try IssueMerger.apply(stacks.map { Regrouping(stackKey: $0.key, projectID: p.id, fingerprint: renamed) }, in: store)
        XCTAssertEqual(rename.issuesRenamed + rename.issuesMerged, 1)
        XCTAssertEqual(try store.issues(projectID: p.id, limit: 10, offset: 0).map(\.fingerprint), ["h3"])
        XCTAssertEqual(try store.issues(projectID: p.id, limit: 10, offset: 0).first?.count, 2)
    }

    /// Every read of an issue (count, releases, occurrence lists newest first, an occurrence's
    /// issue, the web page's installs and first release) agrees with the rows it holds.
    static func assertHolds(
        _ store: CoreStoreUnderTest, _ issueID: Int64, _ eventIDs: Set<String>, releases: Set<String>? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let issue = try XCTUnwrap(try store.issue(id: issueID), file: file, line: line)
        XCTAssertEqual(issue.id, issueID, "live", file: file, line: line)
        XCTAssertEqual(issue.count, Int64(eventIDs.count), "recorded count", file: file, line: line)
        let rows = try store.occurrences(issueID: issueID, limit: 100, offset: 0)
        XCTAssertEqual(Set(rows.map(\.eventID)), eventIDs, file: file, line: line)
        XCTAssertEqual(rows.map(\.id), rows.map(\.id).sorted(by: >), "newest first", file: file, line: line)
        XCTAssertEqual(rows.map(\.issueID), rows.map { _ in issueID }, "each row reads as the live issue", file: file, line: line)
        if rows.count > 1 {
            XCTAssertEqual(try store.occurrences(issueID: issueID, limit: 1, offset: 1).map(\.id), [rows[1].id], "paged", file: file, line: line)
        }
        if let releases { XCTAssertEqual(Set(issue.releases), releases, file: file, line: line) }
        if let db = store as? any SQLDatabase {
            let web = WebQueries(store: store, database: db)
            XCTAssertEqual(Set(try web.occurrences(issueID: issueID, before: nil, limit: 50).map(\.eventID)), eventIDs, file: file, line: line)
            XCTAssertEqual(try web.installs(issueID: issueID), eventIDs.isEmpty ? 0 : 1, file: file, line: line)
        }
    }

    /// A merge re-points the merged issue, not its rows (IssueGroups): those rows read as the live
    /// issue's everywhere; a stack leaving an issue that holds other stacks moves row by row (a
    /// split); merges chain; a hand merge and retention keep counts equal to rows.
    static func mergedIssuesKeepTheirRows(_ store: SQLStoreUnderTest) throws {
        let p = try store.createProject(slug: "groups", name: "Groups")
        func frame(_ offset: UInt64) -> StackFrame {
            StackFrame(buildID: buildID, offset: offset, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        }
        // a, b: issue X over two stacks; c, d: issue Y over a third; e: issue W over a fourth.
        let plan: [(String, String, UInt64, String)] = [("a", "X", 1, "r1"), ("b", "X", 2, "r1"), ("c", "Y", 3, "r2"), ("d", "Y", 3, "r3"), ("e", "W", 4, "r4")]
        for (id, _, _, rel) in plan { _ = try store.storeIngest(event: event(p.id, id, release: rel), items: []) }
        let pending = try store.unprocessedOccurrences(limit: 10).filter { $0.projectID == p.id }
        try store.recordGrouping(
            pending.map { o in
                let (_, hash, off, _) = plan.first { $0.0 == o.eventID }!
                return outcome(o, hash: hash, frames: [frame(off)])
            })
        let byHash = Dictionary(uniqueKeysWithValues: try store.issues(projectID: p.id, limit: 10, offset: 0).map { ($0.fingerprint, $0.id) })
        let (x, y, w) = (byHash["X"]!, byHash["Y"]!, byHash["W"]!)
        let key = { (off: UInt64) in StackSignature(exceptionType: "SIGSEGV", frames: [frame(off)]).key }
        func regroup(_ off: UInt64, to hash: String) throws -> RegroupSummary {
            try IssueMerger.apply(
                [Regrouping(stackKey: key(off), projectID: p.id, fingerprint: Fingerprint(hash: hash, title: hash, culprit: hash, symbolicated: true))],
                in: store)
        }

        // Y's only stack goes to X: Y is merged, its rows stay and read as X's.
        XCTAssertEqual(try regroup(3, to: "X").merges, [IssueMergeRecord(issue: y, into: x)])
        try assertHolds(store, x, ["a", "b", "c", "d"], releases: ["r1", "r2", "r3"])
        XCTAssertEqual(try store.issue(id: y)?.id, x)
        XCTAssertEqual(try store.occurrences(issueID: y, limit: 10, offset: 0).count, 0, "a merged id lists nothing of its own")
        XCTAssertEqual(try store.occurrence(projectID: p.id, eventID: "c")?.issueID, x)
        if let db = store as? any SQLDatabase {
            let stored = try db.reading { c in try c.rows("SELECT issue_id FROM occurrences WHERE event_id IN ('c', 'd')", []) { $0.int(0) } }
            XCTAssertEqual(stored, [y, y], "the merge wrote no occurrence row")
        }

        // Stack 1 leaves X, which holds other stacks: a split, rows move to a new issue Z.
        let split = try regroup(1, to: "Z")
        XCTAssertEqual(split.issuesMerged, 0)
        XCTAssertEqual(split.occurrencesMoved, 1)
        let z = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first { $0.fingerprint == "Z" }?.id)
        try assertHolds(store, z, ["a"], releases: ["r1"])
        try assertHolds(store, x, ["b", "c", "d"], releases: ["r1", "r2", "r3"])
        _ = try regroup(2, to: "Z")
        try assertHolds(store, z, ["a", "b"], releases: ["r1"])
        try assertHolds(store, x, ["c", "d"], releases: ["r2", "r3"])

        // Stack 3 (rows still naming Y) is now all X holds: X merges into Z, and Y with it.
        XCTAssertEqual(try regroup(3, to: "Z").merges, [IssueMergeRecord(issue: x, into: z)])
        try assertHolds(store, z, ["a", "b", "c", "d"], releases: ["r1", "r2", "r3"])
        XCTAssertEqual(try store.issue(id: y)?.id, z, "merges chain to the live issue")
        XCTAssertEqual(try store.issue(id: x)?.id, z)

        // Stack 3 back out to a fingerprint of its own: its rows leave Z (a split of a merged group).
        _ = try regroup(3, to: "V")
        let v = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first { $0.fingerprint == "V" }?.id)
        try assertHolds(store, v, ["c", "d"], releases: ["r2", "r3"])
        try assertHolds(store, z, ["a", "b"], releases: ["r1"])

        // By hand: W into Z, no row moves.
        try IssueMerger.merge(w, into: z, in: store)
        try assertHolds(store, z, ["a", "b", "e"], releases: ["r1", "r4"])
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 2)

        // Retention deletes rows naming merged issues: the live issue is recounted.
        let left = try store.deleteOccurrences(receivedBefore: 1e12, limit: 3)
        XCTAssertEqual(left, 3)
        let remaining = Set(
            try store.occurrences(issueID: z, limit: 10, offset: 0).map(\.eventID) + store.occurrences(issueID: v, limit: 10, offset: 0).map(\.eventID))
        XCTAssertEqual(remaining.count, 2)
        let total = try [z, v].map { try store.issue(id: $0)?.count ?? -1 }.reduce(0, +)
        XCTAssertEqual(total, 2, "counts equal the rows left")
        try assertHolds(store, z, remaining.intersection(["a", "b", "e"]))
        try assertHolds(store, v, remaining.intersection(["c", "d"]))

        // Merges decided on a stale view (two people, two pages): "Z into W" after "W into Z" is
        // already done (no cycle), "V into W" merges V into W's live issue (no chain).
        try IssueMerger.merge(z, into: w, in: store)
        XCTAssertEqual(try store.issue(id: w)?.id, z)
        try assertHolds(store, z, remaining.intersection(["a", "b", "e"]))
        try IssueMerger.merge(v, into: w, in: store)
        XCTAssertEqual(try store.issue(id: v)?.id, z)
        try assertHolds(store, z, remaining)
        XCTAssertEqual(try store.issue(id: z)?.count, 2, "counts equal the rows")
        // A page deep past every row, from a request's offset: empty, not an overflow.
        XCTAssertEqual(try store.occurrences(issueID: z, limit: 1000, offset: 1 << 40).count, 0)
    }

    /// A merge sticks: the merged issue's fingerprint keeps grouping into the issue it was merged
    /// into (by hand or by a backfill), through later merges too, and opens no new issue.
    static func aMergeSticks(_ store: CoreStoreUnderTest) throws {
        let p = try store.createProject(slug: "sticky", name: "Sticky merges")
        func frame(_ offset: UInt64) -> StackFrame {
            StackFrame(buildID: buildID, offset: offset, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        }
        let offsets: [String: UInt64] = ["A": 1, "B": 2, "C": 3, "D": 4]
        var next = 0
        /// Stores and groups one event with `hash`; returns its event id.
        func occur(_ hash: String, release: String, at timestamp: Double) throws -> String {
            next += 1
            let id = "sticky-\(next)"
            var e = event(p.id, id, release: release)
            e.timestamp = timestamp
            _ = try store.storeIngest(event: e, items: [])
            let o = try XCTUnwrap(try store.unprocessedOccurrences(limit: 100).first { $0.eventID == id })
            try store.recordGrouping([outcome(o, hash: hash, frames: [frame(offsets[hash]!)])])
            return id
        }
        let a1 = try occur("A", release: "r1", at: 50), b1 = try occur("B", release: "r2", at: 60), c1 = try occur("C", release: "r3", at: 70)
        let byHash = Dictionary(uniqueKeysWithValues: try store.issues(projectID: p.id, limit: 10, offset: 0).map { ($0.fingerprint, $0.id) })
        let (a, b, c) = (byHash["A"]!, byHash["B"]!, byHash["C"]!)

        try IssueMerger.merge(a, into: b, in: store)
        let a2 = try occur("A", release: "r4", at: 40)
        try assertHolds(store, b, [a1, b1, a2], releases: ["r1", "r2", "r4"])
        let merged = try XCTUnwrap(try store.issue(id: b))
        XCTAssertEqual(merged.firstSeen, 40, "first seen widened by the merged fingerprint's new occurrence")
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 2, "no new issue for A")
        XCTAssertEqual(try store.occurrence(projectID: p.id, eventID: a2)?.issueID, b)

        // The target merged on: A's fingerprint follows to the last live issue.
        try IssueMerger.merge(b, into: c, in: store)
        let a3 = try occur("A", release: "r1", at: 80)
        let b2 = try occur("B", release: "r1", at: 81)
        try assertHolds(store, c, [a1, b1, a2, c1, a3, b2], releases: ["r1", "r2", "r3", "r4"])
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 1)

        // A backfill folding stack D's issue into C's fingerprint: D's later occurrences follow too.
        let d1 = try occur("D", release: "r5", at: 90)
        let dIssue = try XCTUnwrap(try store.issues(projectID: p.id, limit: 10, offset: 0).first { $0.fingerprint == "D" }?.id)
        let summary = try IssueMerger.apply(
            [
                Regrouping(
                    stackKey: StackSignature(exceptionType: "SIGSEGV", frames: [frame(offsets["D"]!)]).key, projectID: p.id,
                    fingerprint: Fingerprint(hash: "C", title: "C", culprit: "C", symbolicated: true))
            ],
            in: store)
        XCTAssertEqual(summary.merges, [IssueMergeRecord(issue: dIssue, into: c)])
        let d2 = try occur("D", release: "r5", at: 91)
        try assertHolds(store, c, [a1, b1, a2, c1, a3, b2, d1, d2], releases: ["r1", "r2", "r3", "r4", "r5"])
        XCTAssertEqual(try store.counts(projectID: p.id).issues, 1)
    }

    /// One issue that absorbed 520 others (one crash from as many addresses, folded by a backfill
    /// or by hand) still reads: SQLite caps a compound SELECT at 500 terms.
    static func largeMergedGroupReads(_ store: CoreStoreUnderTest) throws {
        let p = try store.createProject(slug: "large-group", name: "Large group")
        let n = 521
        for i in 0..<n { _ = try store.storeIngest(event: event(p.id, "e\(i)"), items: []) }
        let pending = try store.unprocessedOccurrences(limit: n + 10).filter { $0.projectID == p.id }
        XCTAssertEqual(pending.count, n)
        try store.recordGrouping(
            pending.map { o in
                let frame = StackFrame(
                    buildID: buildID, offset: UInt64(o.eventID.dropFirst())! + 1, isReturnAddress: false, inApp: true,
                    module: "/app", clientFunction: nil)
                return outcome(o, hash: "H" + o.eventID, frames: [frame])
            })
        let ids = try store.issues(projectID: p.id, limit: n + 10, offset: 0).map(\.id).sorted()
        XCTAssertEqual(ids.count, n)
        for id in ids.dropFirst() { try IssueMerger.merge(id, into: ids[0], in: store) }
        XCTAssertEqual(try store.issue(id: ids[0])?.count, Int64(n))
        let page = try store.occurrences(issueID: ids[0], limit: 100, offset: 0)
        XCTAssertEqual(page.count, 100)
        XCTAssertEqual(page.map(\.id), page.map(\.id).sorted(by: >), "newest first")
        XCTAssertEqual(try store.occurrences(issueID: ids[0], limit: 100, offset: n - 1).count, 1)
    }

    /// A claim has one holder at a time, is extended by its holder, and frees on release or expiry.
    static func claims(_ store: CoreStoreUnderTest) throws {
        XCTAssertTrue(try store.acquireClaim("c", holder: "a", duration: 60))
        XCTAssertFalse(try store.acquireClaim("c", holder: "b", duration: 60), "exclusive while held")
        XCTAssertTrue(try store.acquireClaim("c", holder: "a", duration: 60), "the holder may take it again")
        XCTAssertTrue(try store.acquireClaim("other", holder: "b", duration: 60), "claims are per name")
        XCTAssertTrue(try store.renewClaim("c", holder: "a", duration: 60))
        XCTAssertFalse(try store.renewClaim("c", holder: "b", duration: 60), "only the holder renews")
        try store.releaseClaim("c", holder: "b")
        XCTAssertFalse(try store.acquireClaim("c", holder: "b", duration: 60), "release by a non-holder does nothing")
        try store.releaseClaim("c", holder: "a")
        XCTAssertTrue(try store.acquireClaim("c", holder: "b", duration: 0.2), "free after release")
        XCTAssertFalse(try store.acquireClaim("c", holder: "a", duration: 60))
        Thread.sleep(forTimeInterval: 0.4)
        XCTAssertTrue(try store.acquireClaim("c", holder: "a", duration: 60), "free after expiry")
        XCTAssertFalse(try store.renewClaim("c", holder: "b", duration: 60), "an expired holder whose claim was taken cannot renew")
        try store.releaseClaim("c", holder: "a")
        try store.releaseClaim("other", holder: "b")

        // StoreClaim: a second claimant waits until the first releases.
        let first = StoreClaim(store: store, name: "w", role: "first")
        let second = StoreClaim(store: store, name: "w", role: "second")
        try first.acquire()
        let acquired = DispatchSemaphore(value: 0)
        Thread {
            try? second.acquire(); acquired.signal()
        }.start()
        XCTAssertEqual(acquired.wait(timeout: .now() + 0.3), .timedOut, "the second claimant waits while the first holds")
        first.release()
        XCTAssertEqual(acquired.wait(timeout: .now() + 10), .success)
        XCTAssertThrowsError(try first.check(), "the first claimant gave it up")
        XCTAssertNoThrow(try second.check())
        second.release()

        // A hold outlives its lease while the heartbeat renews it.
        let long = StoreClaim(store: store, name: "h", role: "long", lease: 0.3)
        try long.acquire()
        Thread.sleep(forTimeInterval: 0.7)
        XCTAssertFalse(try store.acquireClaim("h", holder: "other", duration: 1), "renewed by the heartbeat")
        XCTAssertNoThrow(try long.check())
        long.release()
        XCTAssertTrue(try store.acquireClaim("h", holder: "other", duration: 1))
    }

    static func debugFilesAndBackfills(_ store: SQLStoreUnderTest) throws {
        let d = DebugFileRecord(buildID: buildID, hasDebugInfo: true, hasSymbols: true, isExecutable: true, size: 10, name: "app", uploaded: 1)
        try store.recordDebugFile(d)
        XCTAssertEqual(try store.debugFile(buildID: buildID)?.name, "app")
        XCTAssertEqual(try store.debugFiles().map(\.buildID), [buildID])
        try store.recordUpload(checksum: "c1", buildID: buildID)
        XCTAssertEqual(try store.uploadedBuildID(checksum: "c1"), buildID)
        XCTAssertNil(try store.uploadedBuildID(checksum: "c2"))
        try store.recordSourceFiles(buildID: buildID, [SourceFileRecord(path: "/src/a.c", sha1: "s", size: 3)])
        XCTAssertEqual(try store.sourceFile(buildID: buildID, path: "/src/a.c"), SourceFileRecord(path: "/src/a.c", sha1: "s", size: 3))
        let id = try store.createBackfill(buildID: buildID)
        var record = try XCTUnwrap(try store.latestBackfill(buildID: buildID))
        XCTAssertEqual(record.id, id)
        record.state = "done"
        record.finished = 2
        record.merges = [IssueMergeRecord(issue: 2, into: 1)]
        try store.updateBackfill(record)
        XCTAssertEqual(try store.latestBackfill(buildID: buildID)?.state, "done")
        XCTAssertEqual(try store.latestBackfill(buildID: buildID)?.merges, record.merges)
        XCTAssertEqual(try store.backfills(limit: 10).count, 1)
    }
}

extension StoreConformance {
    /// Two writers (two nodes on PostgreSQL: two stores on one database) group the same new crash
    /// at once, and both also pick up the same occurrences (a restart scan racing the ingest queue):
    /// one issue, each occurrence counted once.
    static func concurrentGroupingOfOneNewCrash(_ a: CoreStoreUnderTest, _ b: CoreStoreUnderTest) throws {
        let p = try a.createProject(slug: "race", name: "Race")
        var stored: [StoredOccurrence] = []
        for i in 0..<40 {
            let id = try XCTUnwrap(try a.storeIngest(event: event(p.id, "race-\(i)"), items: []))
            stored.append(try XCTUnwrap(try b.occurrence(id: id)))
        }
        let frame = StackFrame(buildID: buildID, offset: 0x30, isReturnAddress: false, inApp: true, module: "/app", clientFunction: nil)
        let outcomes = stored.map { outcome($0, hash: "same-crash", frames: [frame]) }
        let group = DispatchGroup()
        let failures = Mutex<[Error]>([])
        for (store, slice) in [(a, outcomes), (b, Array(outcomes.reversed())), (a, Array(outcomes.shuffled())), (b, Array(outcomes.shuffled()))] {
            DispatchQueue.global().async(group: group) {
                // Batches of 5, as the grouping worker commits them.
                for start in stride(from: 0, to: slice.count, by: 5) {
                    do { try store.recordGrouping(Array(slice[start..<min(start + 5, slice.count)])) } catch {
                        failures.withLock { $0.append(error) }
                    }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let failed = failures.withLock { $0 }
        XCTAssertTrue(failed.isEmpty, "\(failed)")
        let issues = try a.issues(projectID: p.id, limit: 10, offset: 0)
        XCTAssertEqual(issues.count, 1, "one new crash is one issue")
        XCTAssertEqual(issues.first?.count, 40, "each occurrence counted once")
        XCTAssertEqual(try b.counts(projectID: p.id).processed, 40)
        XCTAssertEqual(try b.occurrences(issueID: try XCTUnwrap(issues.first?.id), limit: 100, offset: 0).count, 40)
    }
}

final class SQLiteStoreConformanceTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = TestSupport.makeTemporaryDirectory("store") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func makeStore() throws -> SQLStoreUnderTest { try SQLiteStore(path: dir + "/faultline.sqlite") }

    func testProjectsKeysAndTokens() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.projectsKeysAndTokens(s) }
    func testIngestGroupingAndRegrouping() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.ingestGroupingAndRegrouping(s) }
    func testMergedIssuesKeepTheirRows() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.mergedIssuesKeepTheirRows(s) }
    func testLargeMergedGroupReads() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.largeMergedGroupReads(s) }
    func testAMergeSticks() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.aMergeSticks(s) }
    func testClaims() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.claims(s) }
    func testSharedClaims() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.sharedClaims(s) }
    func testDebugFilesAndBackfills() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.debugFilesAndBackfills(s) }

    func testConcurrentGroupingOfOneNewCrash() throws {
        let s = try makeStore(); defer { s.close() }; try StoreConformance.concurrentGroupingOfOneNewCrash(s, s)
    }

    func testANewerSchemaIsRefusedAndLeftAlone() throws {
        let path = dir + "/faultline.sqlite"
        try SQLiteStore(path: path).close()
        let c = try SQLiteConnection(path: path)
        try c.exec("PRAGMA user_version=\(SQLiteSchema.version + 1)")
        XCTAssertThrowsError(try SQLiteStore(path: path)) { error in
            XCTAssertEqual(error as? StoreError, .newerSchema(path: path, found: SQLiteSchema.version + 1, supported: SQLiteSchema.version))
            XCTAssertTrue("\(error)".contains("newer faultline"), "\(error)")
        }
        var version = 0
        try c.query("PRAGMA user_version") { version = Int($0.int(0)) }
        XCTAssertEqual(version, SQLiteSchema.version + 1, "the newer database is not re-stamped")
    }
}

/// The same checks against a real PostgreSQL (a fresh database per test).
final class PostgresStoreConformanceTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    func makeURL() throws -> String { try PostgresCluster.shared(for: Self.self).createDatabase() }
    func makeStore() throws -> SQLStoreUnderTest { try PostgresStore(url: try makeURL(), connections: 4) }

    /// A NUL inside a text value (a client's "\u0000") cannot be stored in PostgreSQL text and
    /// used to cut the value there: it reads back as U+FFFD with everything after it.
    func testTextWithNULKeepsItsTail() throws {
        let c = try PGConnection(url: try makeURL())
        _ = try c.query("CREATE TABLE nul_text (t text)")
        _ = try c.query("INSERT INTO nul_text (t) VALUES ($1)", SQLValue.text("before\u{0}after"))
        var got: [String] = []
        _ = try c.query("SELECT t FROM nul_text") { got.append($0.text(0) ?? "") }
        XCTAssertEqual(got, ["before\u{FFFD}after"])
    }

    func testProjectsKeysAndTokens() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.projectsKeysAndTokens(s) }
    func testIngestGroupingAndRegrouping() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.ingestGroupingAndRegrouping(s) }
    func testMergedIssuesKeepTheirRows() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.mergedIssuesKeepTheirRows(s) }
    func testLargeMergedGroupReads() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.largeMergedGroupReads(s) }
    func testAMergeSticks() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.aMergeSticks(s) }
    func testDebugFilesAndBackfills() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.debugFilesAndBackfills(s) }
    func testClaims() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.claims(s) }
    func testSharedClaims() throws { let s = try makeStore(); defer { s.close() }; try StoreConformance.sharedClaims(s) }

    /// A claim taken through one node's store excludes the other node until released.
    func testAClaimHoldsAcrossNodes() throws {
        let url = try makeURL()
        let a = try PostgresStore(url: url, connections: 2), b = try PostgresStore(url: url, connections: 2)
        defer { a.close(); b.close() }
        XCTAssertTrue(try a.acquireClaim(StoreClaim.regrouping, holder: "node-a", duration: 60))
        XCTAssertFalse(try b.acquireClaim(StoreClaim.regrouping, holder: "node-b", duration: 60))
        try a.releaseClaim(StoreClaim.regrouping, holder: "node-a")
        XCTAssertTrue(try b.acquireClaim(StoreClaim.regrouping, holder: "node-b", duration: 60))
    }

    /// Two stores on one database stand for two nodes.
    func testConcurrentGroupingOfOneNewCrash() throws {
        let url = try makeURL()
        let a = try PostgresStore(url: url, connections: 4), b = try PostgresStore(url: url, connections: 4)
        defer { a.close(); b.close() }
        try StoreConformance.concurrentGroupingOfOneNewCrash(a, b)
    }

    /// Nodes starting together on an empty database: each migrates or waits for the other, none fails.
    func testNodesStartingAtOnceMigrateOnce() throws {
        let url = try makeURL()
        let group = DispatchGroup()
        let results = Mutex<[Result<PostgresStore, Error>]>([])
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                let r = Result { try PostgresStore(url: url, connections: 1) }
                results.withLock { $0.append(r) }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        for r in results.withLock({ $0 }) {
            switch r {
            case .success(let s): s.close()
            case .failure(let e): XCTFail("a node failed to start: \(e)")
            }
        }
        let c = try PGConnection(url: url)
        var versions: [Int64] = []
        try c.query("SELECT version FROM faultline_schema") { versions.append($0.int(0)) }
        XCTAssertEqual(versions, [Int64(PostgresSchema.version)])
    }

    func testANewerSchemaIsRefusedAndLeftAlone() throws {
        let url = try makeURL()
        try PostgresStore(url: url).close()
        let c = try PGConnection(url: url)
        try c.query("UPDATE faultline_schema SET version = $1", .int(Int64(PostgresSchema.version + 1)))
        XCTAssertThrowsError(try PostgresStore(url: url)) { error in
            XCTAssertEqual(
                error as? StoreError,
                .newerSchema(
                    path: PostgresURL.redacted(url), found: PostgresSchema.version + 1,
                    supported: PostgresSchema.version))
        }
        var version: Int64 = 0
        try c.query("SELECT version FROM faultline_schema") { version = $0.int(0) }
        XCTAssertEqual(version, Int64(PostgresSchema.version + 1), "the newer database is not re-stamped")
    }

    /// Values travel as parameters: quotes, backslashes and NUL-free binary survive unchanged.
    func testValuesAreParametersNotSQL() throws {
        let s = try makeStore(); defer { s.close() }
        let p = try s.createProject(slug: "q'; DROP TABLE projects; --", name: "O'Brien \\ \"x\"")
        XCTAssertEqual(try s.project(idOrSlug: p.slug), p)
        let payload = Data((0...255).map { UInt8($0) })
        var e = StoreConformance.event(p.id, "bin")
        e.compressedEvent = payload
        let id = try XCTUnwrap(try s.storeIngest(event: e, items: []))
        XCTAssertEqual(try s.occurrence(id: id)?.compressedEvent, payload)
    }

    /// An acknowledged ingest is committed: another connection (another node) sees it at once.
    func testAnAcknowledgedIngestIsVisibleToAnotherNode() throws {
        let url = try makeURL()
        let a = try PostgresStore(url: url, connections: 2), b = try PostgresStore(url: url, connections: 2)
        defer { a.close(); b.close() }
        let p = try a.createProject(slug: "p", name: "P")
        let id = try XCTUnwrap(try a.storeIngest(event: StoreConformance.event(p.id, "seen"), items: []))
        XCTAssertEqual(try b.occurrence(id: id)?.eventID, "seen")
        XCTAssertEqual(try b.publicKeys(projectID: nil), [])
    }
}
