// X-Sentry-Auth parsing: the byte-level split of ASCII headers gives what the Character rule gives.
import Foundation
import XCTest
@testable import FaultlineServer

final class SentryAuthTests: XCTestCase {
    func testASCIIHeadersSplitAsTheCharacterRuleSays() {
        var cases = [
            "Sentry sentry_key=abc, sentry_version=7, sentry_client=x/1.0", "sentry sentry_key=abc", "  SENTRY  sentry_key = abc ,",
            "sentry_key=abc", "Sentry ", "Sentryx sentry_key=1", "a=b=c, =d, e=, f", "\tk\t=\tv\t", "k=v,k=w", ""
        ]
        let alphabet = Array("Sentrysk_y= ,\t=ab7")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            cases.append(String((0..<Int.random(in: 0...30, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }))
        }
        for s in cases {
            XCTAssertEqual(SentryAuth.asciiFields(ofHeader: s), SentryAuth.characterFields(ofHeader: s), s.debugDescription)
        }
        XCTAssertNil(SentryAuth.asciiFields(ofHeader: "sentry_key=é"), "not ASCII: the Character rule decides")
        XCTAssertEqual(SentryAuth.fields(ofHeader: "Sentry sentry_key=é"), ["sentry_key": "é"])
    }
}
