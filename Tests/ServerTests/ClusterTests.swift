// Cluster behaviour with real `faultline serve` processes on one PostgreSQL and one shared
// debug-file directory: a backfill survives the kill -9 of the node running it (another running
// node takes the job over when its lease runs out and finishes it, once); three nodes take the
// chunks of one upload on different nodes and assemble it on a third; a node killed mid-burst
// loses no acknowledged event, and the survivors group what it left ungrouped.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport
import FaultlineHashing
import Synchronization

final class ClusterTests: XCTestCase {
    override class func tearDown() { PostgresCluster.stop(for: self); super.tearDown() }

    typealias Node = CrashSafetyTests.ServeProcess

    /// Nodes started one after another (the first creates the project), with what tests need of them.
    struct Cluster: @unchecked Sendable {
        var nodes: [Node] = []
        var ports: [UInt16] = []
        var dsn: DSN
        var token: String
        let shared: String

        init(count: Int, url: String, work: String, extra: [String] = []) throws {
            shared = work + "/debug-files"
            var banners: [String] = []
            for i in 0..<count {
                let n = try Node(dataDir: work + "/node\(i)", extra: ["--database", url, "--debug-files", shared] + extra)
                nodes.append(n)
                banners.append(try n.banner())
                ports.append(try XCTUnwrap(n.port(banners[i])))
            }
            dsn = try DSN(parsing: String(try XCTUnwrap(banners[0].split(separator: "\n").first { $0.hasPrefix("DSN: ") }).dropFirst(5)))
            token = String(try XCTUnwrap(banners[0].split(separator: "\n").first { $0.contains("server token") }).split(separator: " ").last!)
        }

        func stop() {
            for n in nodes { n.process.end() }
        }

        func send(_ event: JSONValue, to port: UInt16) -> RawHTTP.Response {
            RawHTTP.send(
                port: port, method: "POST", path: "/api/\(dsn.projectID)/envelope/",
                headers: [
                    "Content-Type": "application/x-sentry-envelope",
                    "X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=\(dsn.publicKey.value)"
                ],
                body: TestEvents.envelope(event))
        }
    }

    /// Waits until every stored occurrence of the project is grouped.
    func waitGrouped(_ store: PostgresStore, project: Int64, atLeast: Int, timeout: TimeInterval = 90) throws -> (
        occurrences: Int64, processed: Int64, issues: Int64
    ) {
        let deadline = Date().addingTimeInterval(timeout)
        var c = try store.counts(projectID: project)
        while Date() < deadline, c.processed < c.occurrences || c.occurrences < Int64(atLeast) {
            usleep(50_000); c = try store.counts(projectID: project)
        }
        return c
    }

    func testKill9OfTheNodeRunningABackfillAnotherNodeFinishesItOnce() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-cluster-backfill")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        // One stack per transaction, so the backfill of a few hundred stacks is long enough to be
        // caught between two saved resume points.
        let cluster = try Cluster(count: 2, url: url, work: work, extra: ["--backfill-batch", "1"])
        defer { cluster.stop() }
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let project = try XCTUnwrap(try store.project(idOrSlug: cluster.dsn.projectID)).id

        // 400 distinct stacks in the program (recursion depth × return address in main), sent to both nodes.
        let leaf = try XCTUnwrap(program.symbols["faultline_fixture_leaf"])
        let middle = try XCTUnwrap(program.symbols["faultline_fixture_middle"])
        let main = try XCTUnwrap(program.symbols["main"])
        let stacks = 400
        let group = DispatchGroup()
        let refused = Mutex(0)
        for worker in 0..<4 {
            DispatchQueue.global().async(group: group) {
                for i in stride(from: worker, to: stacks, by: 4) {
                    let offsets = [main + UInt64(i % 8) + 1] + Array(repeating: middle + 4, count: 1 + i / 8) + [leaf]
                    let event = TestEvents.native(
                        buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture", base: 0x5600_0000_0000,
                        offsets: offsets, release: "r1")
                    if cluster.send(event, to: cluster.ports[i % 2]).status != 200 { refused.withLock { $0 += 1 } }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(refused.withLock { $0 }, 0)
        let before = try waitGrouped(store, project: project, atLeast: stacks)
        XCTAssertEqual(before.occurrences, Int64(stacks))
        XCTAssertEqual(before.processed, before.occurrences)

        // Upload through node 0; whichever node takes the job, kill it -9 once it has saved progress.
        XCTAssertEqual(try TestServer.uploadDebugFile(program.path, port: cluster.ports[0], token: cluster.token), "ok")
        var taken: BackfillJob?
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let j = try store.openBackfills().first, j.record.state == "running", j.resumeAfter != nil, j.record.occurrencesDone > 0 { taken = j; break }
            usleep(10_000)
        }
        let job = try XCTUnwrap(taken, "the backfill was never seen between two saved resume points")
        XCTAssertLessThan(job.record.occurrencesDone, Int64(stacks), "killed mid-run")
        let holderPID = try XCTUnwrap(job.holder?.split(separator: ":").dropFirst().first.flatMap { Int32($0) })
        let victim = try XCTUnwrap(cluster.nodes.firstIndex { $0.process.processIdentifier == holderPID }, "holder \(job.holder ?? "") is a node")
        kill(holderPID, SIGKILL)
        XCTAssertEqual(cluster.nodes[victim].process.awaitEnd().signal, SIGKILL)
        let survivorPID = cluster.nodes[1 - victim].process.processIdentifier

        // The survivor takes the job over once the dead node's lease (6 s) runs out, and finishes it.
        var final: BackfillJob?
        let end = Date().addingTimeInterval(90)
        while Date() < end {
            final = try store.backfillJob(id: job.record.id)
            if final?.record.state == "done" || final?.record.state == "failed" { break }
            usleep(100_000)
        }
        let finished = try XCTUnwrap(final)
        XCTAssertEqual(finished.record.state, "done", "\(finished)")
        XCTAssertEqual(finished.holder?.split(separator: ":").dropFirst().first.flatMap { Int32($0) }, survivorPID, "the surviving node finished it")
        let runs = try store.backfills(limit: 100).filter { $0.buildID == program.buildID }
        XCTAssertEqual(runs.count, 1, "one backfill cluster-wide, resumed, not repeated: \(runs.map(\.state))")
        XCTAssertEqual(finished.record.occurrencesDone, Int64(stacks))
        XCTAssertEqual(finished.record.occurrencesSymbolicated, Int64(stacks), "every occurrence symbolicated once (no batch counted twice)")

        // Counts are honest: each live issue symbolicated, holding exactly the occurrences pointing at it.
        let issues = try store.issues(projectID: project, limit: 1000, offset: 0)
        XCTAssertFalse(issues.isEmpty)
        var total: Int64 = 0
        for issue in issues {
            XCTAssertTrue(issue.symbolicated, "\(issue.title)")
            let held = try store.occurrences(issueID: issue.id, limit: 10_000, offset: 0).count
            XCTAssertEqual(issue.count, Int64(held), "issue \(issue.id) count matches its occurrences")
            total += issue.count
        }
        XCTAssertEqual(total, Int64(stacks), "every occurrence in exactly one live issue")
    }

    func testThreeNodesAssembleChunksSentToDifferentNodesAndLoseNoAcknowledgedEventToAKill9() throws {
        let url = try PostgresCluster.shared(for: Self.self).createDatabase()
        let work = TestSupport.makeTemporaryDirectory("faultline-cluster-three")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let cluster = try Cluster(count: 3, url: url, work: work)
        defer { cluster.stop() }
        let store = try PostgresStore(url: url, connections: 2)
        defer { store.close() }
        let project = try XCTUnwrap(try store.project(idOrSlug: cluster.dsn.projectID)).id

        // sentry-cli's protocol with one chunk per node, assembled by asking the third node.
        let file = try Data(contentsOf: URL(fileURLWithPath: program.path))
        let third = (file.count + 2) / 3
        let chunks = stride(from: 0, to: file.count, by: third).map { file.subdata(in: $0..<min($0 + third, file.count)) }
        XCTAssertEqual(chunks.count, 3)
        for (i, chunk) in chunks.enumerated() {
            let sha = SHA1Hash.hex(chunk)
            let boundary = "b-\(UUID().uuidString)"
            var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file_gzip\"; filename=\"\(sha)\"\r\n\r\n".utf8)
            body.append(Deflate.gzip(chunk)!)
            body.append(Data("\r\n--\(boundary)--\r\n".utf8))
            let r = RawHTTP.send(
                port: cluster.ports[i], method: "POST", path: "/api/0/organizations/faultline/chunk-upload/",
                headers: ["Authorization": "Bearer \(cluster.token)", "Content-Type": "multipart/form-data; boundary=\(boundary)"], body: body)
            XCTAssertEqual(r.status, 200, r.text)
        }
        let checksum = SHA1Hash.hex(file)
        let spec: JSONValue = [checksum: ["name": "fixture", "chunks": .array(chunks.map { .string(SHA1Hash.hex($0)) })]]
        var state: String?
        let deadline = Date().addingTimeInterval(60)
        repeat {  // polled as sentry-cli polls: "created"/"assembling" until "ok" or "error"
            let r = RawHTTP.send(
                port: cluster.ports[2], method: "POST", path: "/api/0/projects/faultline/default/files/difs/assemble/",
                headers: ["Authorization": "Bearer \(cluster.token)"], body: spec.serialized())
            state = r.json?[checksum]?["state"]?.stringValue
            if state == "ok" || state == "error" || state == "not_found" { break }
            usleep(100_000)
        } while Date() < deadline
        XCTAssertEqual(state, "ok", "chunks on three nodes assemble into one file")
        let (dir, name) = program.buildID.buildIDPathComponents
        XCTAssertTrue(FileManager.default.fileExists(atPath: "\(cluster.shared)/.build-id/\(dir)/\(name).debug"))
        XCTAssertEqual(try store.debugFile(buildID: program.buildID)?.hasDebugInfo, true)

        // A burst spread over the three nodes; node 1 is killed -9 in the middle of it.
        let tally = Mutex<(acked: [String], failed: Int)>(([], 0))
        let stopAt = Date().addingTimeInterval(2.5)
        let group = DispatchGroup()
        for worker in 0..<6 {
            DispatchQueue.global().async(group: group) {
                var n = 0
                while Date() < stopAt {
                    let id = TestEvents.eventID()
                    let event = TestEvents.native(
                        eventID: id, buildID: program.buildID.hex, modulePath: "/opt/fixture/bin/fixture",
                        base: 0x5600_0000_0000, offsets: [UInt64(0x40 + (worker * 7 + n) % 13)])
                    let r = cluster.send(event, to: cluster.ports[(worker + n) % 3])
                    tally.withLock { if r.status == 200 { $0.acked.append(id) } else { $0.failed += 1 } }
                    n += 1
                }
            }
        }
        Thread.sleep(forTimeInterval: 1.0)
        kill(cluster.nodes[1].process.processIdentifier, SIGKILL)
        XCTAssertEqual(cluster.nodes[1].process.awaitEnd().signal, SIGKILL)
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success)
        let (acked, failed) = tally.withLock { $0 }
        XCTAssertGreaterThan(acked.count, 30, "the burst was acknowledged in part before the kill")
        XCTAssertGreaterThan(failed, 0, "some requests went to the killed node")

        // Every acknowledged event is readable through a surviving node, and the survivors group
        // what the dead node had stored but not grouped.
        for id in acked {
            let r = RawHTTP.send(
                port: cluster.ports[0], method: "GET", path: "/api/0/projects/faultline/\(cluster.dsn.projectID)/events/\(id)/",
                headers: ["Authorization": "Bearer \(cluster.token)"])
            XCTAssertEqual(r.status, 200, "acknowledged event \(id) is missing after the kill -9 of a node")
        }
        let counts = try waitGrouped(store, project: project, atLeast: acked.count)
        XCTAssertGreaterThanOrEqual(counts.occurrences, Int64(acked.count))
        XCTAssertEqual(counts.processed, counts.occurrences, "the surviving nodes grouped every stored occurrence")
        let issueTotal = try store.issues(projectID: project, limit: 1000, offset: 0).reduce(Int64(0)) { $0 + $1.count }
        XCTAssertEqual(issueTotal, counts.occurrences, "each occurrence counted once")
    }
}
