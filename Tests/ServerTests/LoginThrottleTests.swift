// Password logins under guessing (issue 29 items 11, 13): a user name is locked after 10 failures
// in its window, a client address after 30 (any names) — even for the right password — and an unknown name gets the same answers, each
// costing the same hash; other users and server-token logins are not affected.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineTestSupport

final class LoginThrottleTests: XCTestCase {
    func testTenFailuresLockTheNameKnownOrNotAndLeaveOthersAlone() throws {
        let server = try TestServer()
        defer { server.stop() }
        try WebUsers.set(stores: server.server.stores, name: "alice", password: "correct horse battery")
        try WebUsers.set(stores: server.server.stores, name: "bob", password: "another long password")
        func attempt(_ user: String, _ password: String) -> RawHTTP.Response {
            let form = RawHTTP.send(port: server.port, method: "GET", path: "/ui/login")
            let nonce = String(form.headers["set-cookie"]!.split(separator: ";")[0].split(separator: "=")[1])
            return RawHTTP.send(
                port: server.port, method: "POST", path: "/ui/login", headers: ["Cookie": "fl_login=\(nonce)"],
                body: Data("_login=\(nonce)&user=\(user)&password=\(password.replacingOccurrences(of: " ", with: "+"))".utf8))
        }
        for n in 0..<10 {
            XCTAssertEqual(attempt("alice", "guess \(n)").status, 401)
            XCTAssertEqual(attempt("mallory", "guess \(n)").status, 401, "an unknown name answers as a known one")
        }
        let locked = attempt("alice", "correct horse battery")
        XCTAssertEqual(locked.status, 429, "locked even with the right password")
        XCTAssertTrue(locked.text.contains("Too many failed logins"), locked.text)
        XCTAssertEqual(attempt("mallory", "anything").status, 429, "an unknown name locks the same way")
        XCTAssertEqual(attempt("bob", "another long password").status, 303, "another user is not affected")
        XCTAssertNotNil(server.webLogin(), "server-token logins are not affected")
    }

    func testTheLockEndsWithItsWindowAndASuccessClearsTheCount() {
        let throttle = LoginThrottle(maxFailures: 3, window: 60)
        for _ in 0..<3 { throttle.recordFailure("carol", now: 1000) }
        XCTAssertEqual(throttle.lockedFor("carol", now: 1010), 50)
        XCTAssertNil(throttle.lockedFor("carol", now: 1060), "a new window")
        throttle.recordFailure("dave", now: 1000)
        throttle.recordFailure("dave", now: 1000)
        throttle.recordSuccess("dave")
        throttle.recordFailure("dave", now: 1001)
        XCTAssertNil(throttle.lockedFor("dave", now: 1002))
    }

    /// A guesser cycling through user names from one address is locked by its address; another
    /// address is not, and a login of the guesser's own does not reset its address.
    func testFailuresFromOneAddressLockItWhateverNamesItTries() {
        let throttle = LoginThrottle(maxFailures: 10, maxFailuresPerAddress: 30, window: 900)
        for n in 0..<30 { throttle.recordFailure("user\(n)", address: "192.0.2.7", now: 1000) }
        XCTAssertEqual(throttle.lockedFor("someone-new", address: "192.0.2.7", now: 1001), 899)
        XCTAssertNil(throttle.lockedFor("someone-new", address: "192.0.2.8", now: 1001), "another address")
        throttle.recordSuccess("user0")
        XCTAssertNotNil(throttle.lockedFor("someone-new", address: "192.0.2.7", now: 1001), "a success clears the name, not the address")
        XCTAssertNil(throttle.lockedFor("someone-new", address: "192.0.2.7", now: 1900), "a new window")
    }
}
