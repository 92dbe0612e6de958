// The route table's rules: patterns match as documented, and what a route needs is in its row.
@testable import FaultlineServer
import Foundation
import Synchronization
import XCTest

final class RouteTableTests: XCTestCase {
    func testPatternsCaptureWildcardsAlternativesAndTheRest() {
        XCTAssertEqual(RoutePattern("/api/*/envelope|store").match(["api", "7", "store"]), ["7", "store"])
        XCTAssertNil(RoutePattern("/api/*/envelope|store").match(["api", "7", "other"]))
        XCTAssertEqual(RoutePattern("/api/0/**").match(["api", "0"]), [])
        XCTAssertEqual(RoutePattern("/buildid/**").match(["buildid", "ab", "debuginfo"]), ["ab", "debuginfo"])
        XCTAssertEqual(RoutePattern("/").match([]), [])
        XCTAssertNil(RoutePattern("/health").match(["health", "x"]))
    }

    func testEverythingBelowAPI0NeedsTheServerTokenAndIngestThePublicKey() {
        for path in [["api", "0"], ["api", "0", "projects"], ["api", "0", "nothing", "here"], ["api", "0", "envelope"]] {
            XCTAssertEqual(Router.route(for: path)?.route.credential, .serverToken, "\(path)")
        }
        XCTAssertEqual(Router.route(for: ["api", "3", "envelope"])?.route.credential, .publicKey)
        XCTAssertEqual(Router.route(for: ["buildid", "ab", "debuginfo"])?.route.credential, .anyone)
        XCTAssertNil(Router.route(for: ["api", "3", "other"]))
    }

    func testARequestPathFindsTheSameRouteAndCapturesFromTheCacheAsFromTheTable() {
        let paths = [
            "/api/3/envelope/", "/api/3/store", "/api/0/envelope", "/api/0/projects/o/p/issues/", "/buildid/ab/debuginfo", "/", "/health",
            "/ui/issues/5", "/api/3/other", "//api//3//minidump//", "/nothing"
        ]
        // Asked twice (the second from the cache), then again after more distinct paths than the
        // cache keeps have emptied it.
        for round in 0..<3 {
            if round == 2 { for i in 0...Router.recentRoutesKept { _ = Router.route(forPath: "/api/0/issues/\(i)") } }
            for path in paths {
                let split = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
                let expected = Router.route(for: split), found = Router.route(forPath: path)
                XCTAssertEqual(found?.route.pattern.description, expected?.route.pattern.description, "\(path), round \(round)")
                XCTAssertEqual(found?.captures, expected?.captures, "\(path), round \(round)")
            }
        }
        XCTAssertEqual(Router.route(forPath: "/api/0/issues/77")?.captures, ["77"])
        let long = "/api/0/issues/" + String(repeating: "7", count: Router.recentRoutePathBytes)
        XCTAssertEqual(Router.route(forPath: long)?.captures, [String(repeating: "7", count: Router.recentRoutePathBytes)], "a path too long to keep")
    }

    /// Each connection thread first asks its own last few paths, then the shared cache: threads
    /// asking at once, each for more paths than it keeps, get the table's answers.
    func testThreadsAskingAtOnceGetTheTablesAnswers() {
        let paths = (0..<(Router.ThreadRoutes.kept * 3)).map { i in i % 2 == 0 ? "/api/\(i)/envelope/" : "/api/0/issues/\(i)/events" }
        let mismatches = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<50 {
                let path = paths[(round * 7 + thread) % paths.count]
                let split = path.split(separator: "/").map(String.init)
                let expected = Router.route(for: split), found = Router.route(forPath: path)
                if found?.route.pattern.description != expected?.route.pattern.description || found?.captures != expected?.captures {
                    mismatches.withLock { $0.append("\(path) on thread \(thread), round \(round)") }
                }
            }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, [])
    }
}
