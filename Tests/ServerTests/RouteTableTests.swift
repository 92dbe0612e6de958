// The route table's rules: patterns match as documented, and what a route needs is in its row.
@testable import FaultlineServer
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
}
