// `serve --debuginfod-upstream`: a build-id with frames and no debug file is fetched in the
// background from a real elfutils debuginfod (or another Faultline server), stored like an upload
// and backfilled; "not found" is remembered for the retry interval; a dead upstream delays no ingest.
import Foundation
import XCTest
import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class DebuginfodUpstreamTests: XCTestCase {
    private func issues(_ server: TestServer) -> [JSONValue] {
        let r = server.get("/api/0/projects/faultline/\(server.projectID)/issues/")
        return (try? JSONValue.parse(r.body))?.arrayValue ?? []
    }

    /// Waits until the one issue is symbolicated (the upstream fetch and its backfill are async).
    private func waitForSymbolicatedIssue(_ server: TestServer, timeout: TimeInterval = 60) throws -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let all = issues(server)
            if all.count == 1, all[0]["symbolicated"]?.boolValue == true { return all[0] }
            usleep(100_000)
        }
        return nil
    }

    private func waitIdle(_ fetcher: UpstreamFetcher, timeout: TimeInterval = 30) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline && !fetcher.isIdle { usleep(20_000) }
    }

    func testElfutilsDebuginfodUpstreamFillsAMissingDebugFileAndBackfills() throws {
        let work = TestSupport.makeTemporaryDirectory("faultline-upstream")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let served = work + "/served"
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        let program = try Fixtures.buildProgram(in: served)
        guard let upstream = try ElfutilsDebuginfod(serving: served) else {
            throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it")
        }
        defer { upstream.stop() }
        XCTAssertTrue(upstream.waitUntilServes(program.buildID), "debuginfod never served the fixture:\n\(upstream.log)")

        let server = try TestServer { $0.debuginfodUpstreams = [upstream.url] }
        defer { server.stop() }
        XCTAssertFalse(server.server.debugFiles.hasSymbols(for: program.buildID))
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        let issue = try XCTUnwrap(try waitForSymbolicatedIssue(server), "the fetched file was backfilled: \(issues(server))")
        XCTAssertTrue(issue["title"]?.stringValue?.contains("faultline_fixture_leaf") ?? false, issue.jsonString)
        // Stored like an upload: on disk in the build-id tree, recorded, and served to others.
        XCTAssertEqual(server.server.upstream?.state(of: program.buildID), .fetched)
        XCTAssertTrue(server.server.debugFiles.hasSymbols(for: program.buildID))
        let record = try XCTUnwrap(try server.server.stores.debugFiles.debugFile(buildID: program.buildID))
        XCTAssertTrue(record.hasDebugInfo)
        XCTAssertEqual(record.name, "debuginfod")
        XCTAssertEqual(server.get("/buildid/\(program.buildID.hex)/debuginfo").status, 200)
    }

    func testAFaultlineServerIsTheUpstreamOfAnother() throws {
        let work = TestSupport.makeTemporaryDirectory("faultline-upstream-chain")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let first = try TestServer()
        defer { first.stop() }
        XCTAssertEqual(try first.uploadDebugFile(program.path), "ok")
        let second = try TestServer { $0.debuginfodUpstreams = ["http://127.0.0.1:\(first.port)"] }
        defer { second.stop() }
        XCTAssertEqual(second.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        let issue = try XCTUnwrap(try waitForSymbolicatedIssue(second), "fetched from the first server: \(issues(second))")
        XCTAssertTrue(issue["title"]?.stringValue?.contains("faultline_fixture_leaf") ?? false, issue.jsonString)
        XCTAssertEqual(try second.server.stores.debugFiles.debugFile(buildID: program.buildID)?.name, "debuginfod")
    }

    func testNotFoundIsCachedForTheRetryIntervalThenAskedAgain() throws {
        let work = TestSupport.makeTemporaryDirectory("faultline-upstream-negative")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let served = work + "/served", later = work + "/later"
        for d in [served, later] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
        let program = try Fixtures.buildProgram(in: later)
        guard let upstream = try ElfutilsDebuginfod(serving: served, rescanSeconds: 1) else {
            throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it")
        }
        defer { upstream.stop() }
        XCTAssertTrue(upstream.waitUntilUp(), upstream.log)

        let retry: TimeInterval = 4
        let server = try TestServer {
            $0.debuginfodUpstreams = [upstream.url]; $0.debuginfodRetryInterval = retry
        }
        defer { server.stop() }
        let fetcher = try XCTUnwrap(server.server.upstream)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        try server.waitUntilIdle()
        waitIdle(fetcher)
        guard case .notFound? = fetcher.state(of: program.buildID) else {
            return XCTFail("not found upstream: \(String(describing: fetcher.state(of: program.buildID)))")
        }
        XCTAssertEqual(fetcher.queryCount, 1)
        let askedAt = Date()

        // The file appears upstream; within the retry interval nobody asks again.
        try FileManager.default.copyItem(atPath: program.path, toPath: served + "/fixture")
        XCTAssertTrue(upstream.waitUntilServes(program.buildID), upstream.log)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program, release: "again"))).status, 200)
        try server.waitUntilIdle()
        waitIdle(fetcher)
        if Date().timeIntervalSince(askedAt) < retry {
            XCTAssertEqual(fetcher.queryCount, 1, "a fresh negative answer is not asked again")
        }
        XCTAssertFalse(issues(server).contains { $0["symbolicated"]?.boolValue == true })

        // After the interval (the fetcher's own clock: from when its answer came), the next frame
        // asks again and the file arrives.
        if case .notFound(let retryAt)? = fetcher.state(of: program.buildID) {
            while Date() < retryAt.addingTimeInterval(0.2) { usleep(100_000) }
        }
        while Date().timeIntervalSince(askedAt) < retry + 0.5 { usleep(100_000) }
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program, release: "third"))).status, 200)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, fetcher.state(of: program.buildID) != .fetched { usleep(50_000) }
        XCTAssertEqual(fetcher.state(of: program.buildID), .fetched)
        XCTAssertEqual(fetcher.queryCount, 2)
        try server.waitUntilIdle()
        XCTAssertTrue(issues(server).allSatisfy { $0["symbolicated"]?.boolValue == true }, "\(issues(server))")
    }

    func testAnUpstreamThatNeverAnswersDelaysNoIngest() throws {
        // A listening socket nobody accepts on: connections hang until the client's timeout.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listen(fd, 64)
        let port = UInt16(bigEndian: addr.sin_port)

        let work = TestSupport.makeTemporaryDirectory("faultline-upstream-dead")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let programs = try (0..<3).map { try Fixtures.buildProgram(in: work, variant: $0) }
        let server = try TestServer {
            $0.debuginfodUpstreams = ["http://127.0.0.1:\(port)"]; $0.debuginfodTimeout = 3
        }
        let fetcher = try XCTUnwrap(server.server.upstream)
        let start = Date()
        for i in 0..<30 {
            XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(programs[i % 3]))).status, 200)
        }
        try server.waitUntilIdle()
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertLessThan(elapsed, 2.5, "ingest and grouping did not wait for the hanging upstream")
        XCTAssertFalse(fetcher.isIdle, "the worker is still waiting on the upstream")
        XCTAssertEqual(issues(server).count, 3)
        let stopStart = Date()
        server.stop()
        XCTAssertLessThan(Date().timeIntervalSince(stopStart), 2.5, "stop does not wait for the upstream")
        // Let the worker give up (timeout) before the next test uses libdebuginfod.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !fetcher.isIdle { usleep(50_000) }
        if case .failed? = fetcher.state(of: programs[0].buildID) {
        } else {
            XCTFail("a hanging upstream is a failure, retried later: \(String(describing: fetcher.state(of: programs[0].buildID)))")
        }
    }

    /// Issue 29 item 9: any client can name any build-id in a frame, so what the server asks its
    /// upstreams for is budgeted: past the queries per hour, wanted build-ids wait (queued) for
    /// the next window instead of each costing an upstream query and a download.
    func testUpstreamQueriesStayWithinTheHourlyBudgetWhateverEventsName() throws {
        let upstream = try TestServer()  // an upstream that has none of these files
        defer { upstream.stop() }
        let server = try TestServer {
            $0.debuginfodUpstreams = ["http://127.0.0.1:\(upstream.port)"]
            $0.debuginfodQueriesPerHour = 2
        }
        defer { server.stop() }
        let ids = (1...6).compactMap { BuildID(hex: String(repeating: "ab", count: 19) + String(format: "%02x", $0)) }
        XCTAssertEqual(ids.count, 6)
        for id in ids { XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(TestEvents.native(buildID: id.hex, offsets: [0x10]))).status, 200) }
        try server.waitUntilIdle()
        let fetcher = try XCTUnwrap(server.server.upstream)
        func answered() -> Int {
            ids.filter { id in
                switch fetcher.state(of: id) {
                case .notFound?, .failed?: return true
                default: return false
                }
            }.count
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && answered() < 2 { usleep(20_000) }
        XCTAssertEqual(answered(), 2)
        XCTAssertEqual(fetcher.queryCount, 2, "no query past the budget")
        XCTAssertEqual(ids.filter { fetcher.state(of: $0) == .queued }.count, 4, "the rest wait for the next window")
    }

    /// A file over the size cap is refused by libdebuginfod before it is downloaded.
    func testAnUpstreamFileOverTheSizeCapIsNotTaken() throws {
        let work = TestSupport.makeTemporaryDirectory("faultline-upstream-size")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let program = try Fixtures.buildProgram(in: work)
        let first = try TestServer()
        defer { first.stop() }
        XCTAssertEqual(try first.uploadDebugFile(program.path), "ok")
        let size = ((try FileManager.default.attributesOfItem(atPath: program.path)[.size]) as? NSNumber)?.int64Value ?? 0
        let second = try TestServer {
            $0.debuginfodUpstreams = ["http://127.0.0.1:\(first.port)"]
            $0.debuginfodMaxFileBytes = size / 2
        }
        defer { second.stop() }
        XCTAssertEqual(second.sendEnvelope(TestEvents.envelope(Fixtures.crashEvent(program))).status, 200)
        try second.waitUntilIdle()
        let fetcher = try XCTUnwrap(second.server.upstream)
        waitIdle(fetcher)
        guard case .failed(let errno, _)? = fetcher.state(of: program.buildID) else {
            return XCTFail("refused for its size: \(String(describing: fetcher.state(of: program.buildID)))")
        }
        XCTAssertEqual(errno, EFBIG)
        XCTAssertNil(try second.server.stores.debugFiles.debugFile(buildID: program.buildID))
    }
}
