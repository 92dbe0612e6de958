// A stack of thousands of frames (runaway recursion) must not make a page of megabytes: the
// issue page shows the innermost and outermost frames of each stack and says how many it left
// out, as it already does for threads.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class DeepStackPageTests: XCTestCase {
    func testADeepStackShowsItsEndsAndCountsTheRest() throws {
        let server = try TestServer()
        defer { server.stop() }
        let depth = 10_000
        // Sentry's order: outermost first, so the crashing frame is the last one.
        let names = (0..<depth).map { $0 == 0 ? "outermost_main" : $0 == depth - 1 ? "innermost_crash" : "recurse_\($0)" }
        server.ingest(TestEvents.native(offsets: (0..<depth).map { 0x1000 + UInt64($0) * 16 }, functions: names))
        try server.waitUntilIdle()
        let login = try XCTUnwrap(server.webLogin())
        let id = try XCTUnwrap(try server.server.stores.issueReads.issues(projectID: server.projectID, limit: 1, offset: 0).first?.id)
        let page = server.page("/ui/issues/\(id)", login)
        XCTAssertEqual(page.status, 200)
        let stack = try XCTUnwrap(page.text.components(separatedBy: "<h2>Stack").dropFirst().first)
        XCTAssertTrue(stack.contains("innermost_crash"), "the crashing frame is shown")
        XCTAssertTrue(stack.contains("outermost_main"), "the outermost frame is shown")
        XCTAssertTrue(stack.contains("\(depth - 250) frames not shown"), String(stack.prefix(2000)))
        XCTAssertTrue(stack.contains("recurse_\(depth - 200)"), "the innermost 200 frames")
        XCTAssertFalse(stack.contains("recurse_\(depth - 202)<"), "frames past the innermost 200 are left out")
        XCTAssertTrue(stack.contains("recurse_49<"), "the outermost 50 frames")
        XCTAssertFalse(stack.contains("recurse_50<"))
        XCTAssertLessThan(page.body.count, 400_000, "a 10,000-frame event made a page of \(page.body.count) bytes")
    }
}
