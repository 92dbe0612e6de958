// What a captured error sends: a LocalizedError's own description, an NSError's domain and code,
// and the errors an NSError wraps as a chain (innermost first, linked), as Sentry's SDKs send them
// (an NSError arrived as one `Foundation.NSError` with its whole description, its cause lost).
import Foundation
import FaultlineProtocol
import XCTest

@testable import Faultline

final class CapturedErrorChainTests: XCTestCase {
    struct CardDeclined: LocalizedError {
        var errorDescription: String? { "the card was declined" }
    }
    enum Plain: Error { case timedOut(seconds: Int) }

    func testALocalizedErrorSaysItsOwnDescription() {
        let links = CapturedErrorChain.links(of: CardDeclined())
        XCTAssertEqual(links.map(\.value), ["the card was declined"])
        XCTAssertTrue(links[0].type.hasSuffix("CardDeclined"))
    }

    func testAPlainSwiftErrorKeepsItsTypeAndDescription() {
        let links = CapturedErrorChain.links(of: Plain.timedOut(seconds: 3))
        XCTAssertEqual(links.count, 1, "a Swift error bridges to NSError but wraps nothing")
        XCTAssertTrue(links[0].type.hasSuffix("Plain"))
        XCTAssertEqual(links[0].value, "timedOut(seconds: 3)")
        XCTAssertNil(links[0].nsError)
    }

    func testAnNSErrorChainIsSentInnermostFirstWithDomainAndCode() throws {
        let root = NSError(domain: NSPOSIXErrorDomain, code: 13, userInfo: [NSLocalizedDescriptionKey: "permission denied"])
        let outer = NSError(
            domain: "com.example.sync", code: 7, userInfo: [NSLocalizedDescriptionKey: "sync failed", NSUnderlyingErrorKey: root])
        let stack: JSONValue = ["frames": []]
        let values = CapturedErrorChain.exceptionValues(of: outer, stacktrace: stack)
        XCTAssertEqual(values.map { $0["type"]?.stringValue }, [NSPOSIXErrorDomain, "com.example.sync"], "innermost first")
        XCTAssertEqual(values.last?["value"]?.stringValue, "sync failed (Code: 7)")
        XCTAssertEqual(values.last?["mechanism"]?["meta"]?["ns_error"]?["code"]?.int64Value, 7)
        XCTAssertEqual(values.last?["mechanism"]?["type"]?.stringValue, "faultline.capture")
        XCTAssertNotNil(values.last?["stacktrace"], "the captured error carries the stack")
        XCTAssertNil(values.first?["stacktrace"])
        XCTAssertEqual(values.first?["mechanism"]?["parent_id"]?.int64Value, 0)
        XCTAssertEqual(values.first?["mechanism"]?["exception_id"]?.int64Value, 1)
    }

    func testAChainThatLoopsEnds() {
        final class Looping: NSError, @unchecked Sendable {
            override var userInfo: [String: Any] { [NSUnderlyingErrorKey: self] }
        }
        let e = Looping(domain: "loop", code: 1)
        XCTAssertEqual(CapturedErrorChain.links(of: e).count, CapturedErrorChain.maxDepth)
    }
}
