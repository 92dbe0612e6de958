// Timestamps from clients: every RFC 3339 form Sentry SDKs send is read; anything else is nil
// and never reaches the formatter (a 100-digit fraction made ICU divide by zero).
@testable import FaultlineProtocol
import XCTest

final class SentryTimestampTests: XCTestCase {
    func testTheFormsSDKsSendAreRead() {
        let base = 1_796_126_400.0  // 2026-12-01T12:00:00Z
        XCTAssertEqual(SentryTimestamp.seconds(rfc3339: "2026-12-01T12:00:00Z"), base)
        XCTAssertEqual(SentryTimestamp.seconds(rfc3339: "2026-12-01T12:00:00"), base, "no zone: UTC")
        XCTAssertEqual(SentryTimestamp.seconds(rfc3339: "2026-12-01T13:00:00+01:00"), base)
        XCTAssertEqual(SentryTimestamp.seconds(rfc3339: "2026-12-01T12:00:00.250Z")!, base + 0.25, accuracy: 1e-6)
        XCTAssertEqual(SentryTimestamp.seconds(rfc3339: "2026-12-01T12:00:00.123456789Z")!, base + 0.123, accuracy: 1e-6, "cut to ms")
        XCTAssertEqual(SentryTimestamp.seconds(.double(base)), base)
    }

    func testMalformedAndHostileStringsAreNilWithoutReachingTheFormatter() {
        let hostile = [
            "2026-11-30T12:00:00." + String(repeating: "6", count: 100) + "5+01:00",
            "2026-11-30T12:00:00.Z", "2026-11-30T12:00:00.1234567890Z", "２０２６-11-30T12:00:00Z",
            "2026-11-30 12:00:00Z", "2026-11-30T12:00:00+0100", "2026-11-30T12:00:00Zjunk", "", "2026"
        ]
        for s in hostile { XCTAssertNil(SentryTimestamp.seconds(rfc3339: s), s) }
    }

    func testWrittenTimestampsAgreeWithFoundationsFormatter() {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var g = SystemRandomNumberGenerator()
        let fixed: [Double] = [0, 1_796_126_400, 1_796_126_400.123, 1_796_126_400.9999, 951_782_400.5, 4_102_444_799.999, 1e-3, 86_399.001]
        for s in fixed + (0..<2000).map({ _ in Double.random(in: 0..<4_102_444_800, using: &g) }) {
            XCTAssertEqual(SentryTimestamp.rfc3339(s), f.string(from: Date(timeIntervalSince1970: s)), "\(s)")
        }
    }

    /// Read by hand since `faultline` links FoundationEssentials only; the same instants as the
    /// ISO8601DateFormatter that read them before, to the last bit, for every field value from
    /// valid to out of range (month 13, day 32, hour 24, minute 60), with and without
    /// milliseconds, in UTC and at an offset.
    func testReadTimestampsAgreeWithFoundationsFormatter() {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var g = SystemRandomNumberGenerator()
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func r(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &g) }
        var checked = 0
        for _ in 0..<5000 {
            var s = "\(r(1600...9999))-\(two(r(0...13)))-\(two(r(0...32)))T\(two(r(0...24))):\(two(r(0...60))):\(two(r(0...60)))"
            // Forms the formatter was given after the hand check: milliseconds or none, a zone.
            let hasFraction = Bool.random(using: &g)
            if hasFraction { s += "." + String(r(0...999) + 1000).dropFirst() }
            s += Bool.random(using: &g) ? "Z" : (Bool.random(using: &g) ? "+" : "-") + two(r(0...23)) + ":" + two(r(0...59))
            let foundation = (hasFraction ? fractional : plain).date(from: s)?.timeIntervalSince1970
            XCTAssertEqual(SentryTimestamp.seconds(rfc3339: s)?.bitPattern, foundation?.bitPattern, s)
            if foundation != nil { checked += 1 }
        }
        XCTAssertGreaterThan(checked, 1000, "most strings are valid instants")
    }

    /// The Swift backtracer's JSON log stamps its crash `2026-12-01T06:34:30.554110Z`; a crash
    /// file is input too, so the fraction is digits only (no exponent, no sign, no zone inside).
    func testSwiftBacktraceLogTimestampFractionIsDigitsOnly() {
        let base = 1_796_106_870.0  // 2026-12-01T06:34:30Z
        XCTAssertEqual(SentryTimestamp.preciseSeconds(rfc3339: "2026-12-01T06:34:30Z"), base)
        XCTAssertEqual(SentryTimestamp.preciseSeconds(rfc3339: "2026-12-01T06:34:30.554110Z")!, base + 0.55411, accuracy: 1e-6)
        for bad in [
            "2026-12-01T06:34:30.5e300Z", "2026-12-01T06:34:30.5e400Z", "2026-12-01T06:34:30.5+01:00Z",
            "2026-12-01T06:34:30.Z", "2026-12-01T06:34:30.1234567890Z", "2026-12-01T06:34:30.-5Z"
        ] {
            XCTAssertNil(SentryTimestamp.preciseSeconds(rfc3339: bad), bad)
        }
    }

    func testTheWritersRoundOrCutAndTheReaderTakesBackWhatTheyWrite() {
        let t = 1_796_106_870.5559  // 2026-12-01T06:34:30.5559Z
        XCTAssertEqual(SentryTimestamp.rfc3339(t), "2026-12-01T06:34:30.556Z")
        XCTAssertEqual(SentryTimestamp.rfc3339(t, milliseconds: .truncated), "2026-12-01T06:34:30.555Z")
        XCTAssertEqual(SentryTimestamp.rfc3339(1e300), "9999-12-31T23:59:59.999Z")
        XCTAssertEqual(SentryTimestamp.rfc3339(SentryTimestamp.latest, milliseconds: .truncated), "9999-12-31T23:59:59.000Z")
        for t in [0, 1.25, 1_796_106_870.554, SentryTimestamp.latest] {
            XCTAssertEqual(SentryTimestamp.seconds(rfc3339: SentryTimestamp.rfc3339(t)), t)
            XCTAssertEqual(SentryTimestamp.preciseSeconds(rfc3339: SentryTimestamp.rfc3339(t)), t)
        }
    }
}
