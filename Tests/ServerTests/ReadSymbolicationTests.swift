// Reads on a server that has not built a debug file's index yet: the lookups run off the HTTP
// threads, a read waits at most its budget, answers the rest as pending, and a later read is
// symbolicated. The server is restarted with its persisted indexes deleted, so the index really
// is built again from the uploaded debug file.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Synchronization

/// The real libdw symbolicator, held at a gate the test opens: the "slow index build" whose
/// length the test controls, and a count of the lookups that reached the symbolicator.
final class GatedSymbolicator: FrameSymbolicating, @unchecked Sendable {
    let inner: FrameSymbolicating
    let gate = DispatchSemaphore(value: 0)
    private let state = Mutex<(open: Bool, calls: [UInt64: Int])>((false, [:]))

    init(_ inner: FrameSymbolicating) { self.inner = inner }

    func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
        let open = state.withLock { s in
            s.calls[offset, default: 0] += 1
            return s.open
        }
        if !open { gate.wait(); gate.signal() }
        return inner.resolve(buildID: buildID, modulePath: modulePath, offset: offset, isReturnAddress: isReturnAddress, architecture: architecture)
    }
    func invalidate(buildID: BuildID) { inner.invalidate(buildID: buildID) }
    func prepare(buildID: BuildID) { inner.prepare(buildID: buildID) }

    func release() { state.withLock { $0.open = true }; gate.signal() }
    var lookups: [UInt64: Int] { state.withLock { $0.calls } }
}

final class ReadSymbolicationTests: XCTestCase {
    struct Stored {
        let dataDirectory: String; let eventID: String; let issueID: String; let program: Fixtures.Program; let work: String; let bootstrap: Bootstrap
    }

    /// A server that stored one crash of a real program and its debug file, stopped, with its
    /// persisted indexes removed.
    func storedCrash() throws -> Stored {
        let server = try TestServer()
        let work = TestSupport.makeTemporaryDirectory("faultline-read-symbols")
        let program = try Fixtures.buildProgram(in: work)
        XCTAssertEqual(try server.uploadDebugFile(program.path), "ok")
        let eventID = TestEvents.eventID()
        var event = Fixtures.crashEvent(program)
        event["event_id"] = .string(eventID)
        XCTAssertEqual(server.sendEnvelope(TestEvents.envelope(event)).status, 200)
        try server.waitUntilIdle()
        let issues = try server.getJSON("/api/0/projects/faultline/\(server.projectID)/issues/").arrayValue ?? []
        let issueID = try XCTUnwrap(issues.first?["id"]?.stringValue)
        server.stop(removeData: false)
        let indexDir = server.dataDirectory + "/index"
        let indexes = try FileManager.default.contentsOfDirectory(atPath: indexDir).filter { $0.hasSuffix(".fltidx") }
        XCTAssertFalse(indexes.isEmpty, "the upload built and persisted the file's index")
        for f in indexes { try FileManager.default.removeItem(atPath: indexDir + "/" + f) }
        return Stored(dataDirectory: server.dataDirectory, eventID: eventID, issueID: issueID, program: program, work: work, bootstrap: server.bootstrap)
    }

    func eventPath(_ s: TestServer, _ eventID: String) -> String { "/api/0/projects/faultline/\(s.projectID)/events/\(eventID)/" }

    func functions(_ response: JSONValue) -> [String] {
        (response["event"]?["symbolicated_stack"]?.arrayValue ?? []).compactMap { $0["function"]?.stringValue }
    }

    func testAReadWithinItsBudgetIsSymbolicatedAsBefore() throws {
        let stored = try storedCrash()
        defer { try? FileManager.default.removeItem(atPath: stored.work) }
        // A generous budget: the index is built on the pool and this read waits for it.
        let server = try TestServer(dataDirectory: stored.dataDirectory, restarting: stored.bootstrap) { $0.readSymbolicationBudget = 60 }
        defer { server.stop() }
        let e = try server.getJSON(eventPath(server, stored.eventID))
        XCTAssertEqual(e["symbolication"]?.stringValue, "complete", e.jsonString)
        XCTAssertTrue(functions(e).contains("faultline_fixture_leaf"), e.jsonString)
        XCTAssertTrue(functions(e).contains("faultline_fixture_middle"), e.jsonString)
        let issue = try server.getJSON("/api/0/issues/\(stored.issueID)/")
        XCTAssertEqual(issue["symbolication"]?.stringValue, "complete")
        XCTAssertEqual(issue["stack"]?.arrayValue?.first?["function"]?.stringValue, "faultline_fixture_leaf", issue.jsonString)
    }

    func testAReadPastItsBudgetAnswersPendingAndALaterReadIsSymbolicated() throws {
        let stored = try storedCrash()
        defer { try? FileManager.default.removeItem(atPath: stored.work) }
        let gated = LockedBox<GatedSymbolicator?>(nil)
        let server = try TestServer(dataDirectory: stored.dataDirectory, restarting: stored.bootstrap) { config in
            config.readSymbolicationBudget = 0.2
            config.makeSymbolicator = { root, index in
                let g = GatedSymbolicator(DefaultSymbolicator.make(debugRoot: root, indexDirectory: index))
                gated.value = g
                return g
            }
        }
        defer { server.stop() }
        let gate = try XCTUnwrap(gated.value)
        // Runs before the stop: a read that wrongly waits at the gate fails the test, not hangs it.
        defer { gate.release() }

        // Three reads at once while the lookups are held: each answers within its budget, pending.
        let path = eventPath(server, stored.eventID)
        let answers = LockedBox<[RawHTTP.Response]>([])
        let port = server.port, token = server.token
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let r = RawHTTP.send(port: port, method: "GET", path: path, headers: ["Authorization": "Bearer \(token)"])
            answers.withValue { $0.append(r) }
        }
        for r in answers.value {
            XCTAssertEqual(r.status, 200, r.text)
            let e = try JSONValue.parse(r.body)
            XCTAssertEqual(e["symbolication"]?.stringValue, "pending", e.jsonString)
            let stack = e["event"]?["symbolicated_stack"]?.arrayValue ?? []
            XCTAssertEqual(stack.count, 3, e.jsonString)
            XCTAssertTrue(stack.allSatisfy { $0["symbolicator_status"]?.stringValue == "pending" && $0["symbolicated"]?.boolValue == false }, e.jsonString)
            XCTAssertFalse(functions(e).contains("faultline_fixture_leaf"))
        }
        // The issue page says so too.
        let login = try XCTUnwrap(server.webLogin())
        // (The issue title names the function already: grouping symbolicated it before the restart.)
        let leafFrame = "<span class=\"fn\">faultline_fixture_leaf</span>"
        let page = server.page("/ui/issues/\(stored.issueID)", login).text
        XCTAssertTrue(page.contains("Symbolicating…"), page)
        XCTAssertTrue(page.contains("(symbolicating…)"), page)
        XCTAssertFalse(page.contains(leafFrame), page)

        gate.release()
        var last = JSONValue.null
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            last = try server.getJSON(path)
            if last["symbolication"]?.stringValue == "complete" { break }
            usleep(50_000)
        }
        XCTAssertEqual(last["symbolication"]?.stringValue, "complete", last.jsonString)
        XCTAssertTrue(functions(last).contains("faultline_fixture_leaf"), last.jsonString)
        let later = server.page("/ui/issues/\(stored.issueID)", login).text
        XCTAssertTrue(later.contains(leafFrame), later)
        XCTAssertFalse(later.contains("Symbolicating…"), later)
        // Concurrent reads of the same frames shared the lookups: each address reached the symbolicator once.
        let counts = gate.lookups
        XCTAssertEqual(counts.count, 3, "\(counts)")
        XCTAssertTrue(counts.values.allSatisfy { $0 == 1 }, "\(counts)")
    }
}

/// A value shared with closures that run on other threads.
final class LockedBox<T: Sendable>: Sendable {
    private let stored: Mutex<T>
    init(_ v: T) { stored = Mutex(v) }
    var value: T {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
    func withValue<R: Sendable>(_ body: (inout T) -> R) -> R { stored.withLock { body(&$0) } }
}
