// Where the SDK writes and the server reads (or the other way round), both sides go through one
// FaultlineProtocol type; these tests put the real writer against the real reader.
@testable import Faultline
import FaultlineProtocol
@testable import FaultlineServer
import Foundation
import XCTest

final class WireAgreementTests: XCTestCase {
    func testTheServersRateLimitIsWhatTheSDKObeys() throws {
        let response = IngestError.rateLimited(retryAfter: 30).response
        let value = try XCTUnwrap(response.headers.first { $0.0 == HeaderName.sentryRateLimits }?.1)
        XCTAssertEqual(value, "30:error;default:key")  // the bytes the server always sent
        var limits = RateLimits()
        limits.apply(RateLimits.parse(header: value), now: 1000)
        XCTAssertFalse(limits.allows(itemTypes: ["event"], now: 1029))
        XCTAssertFalse(limits.allows(itemTypes: ["transaction"], now: 1029))
        XCTAssertTrue(limits.allows(itemTypes: ["session"], now: 1029))
        XCTAssertTrue(limits.allows(itemTypes: ["event"], now: 1031))
    }

    func testRateLimitHeaderRoundTrips() {
        let limits: [RateLimitHeader.Limit] = [
            .init(seconds: 60, categories: ["error", "default"], scope: "key"), .init(seconds: 2.5, categories: [])
        ]
        XCTAssertEqual(RateLimitHeader.value(limits), "60:error;default:key, 2.5:")
        XCTAssertEqual(RateLimitHeader.parse(RateLimitHeader.value(limits)), limits)
        XCTAssertEqual(RateLimitHeader.parse(" 10:log_item:organization:quota ,x:error"), [.init(seconds: 10, categories: ["log_item"], scope: "organization")])
    }

    func testTheLogUploadSwitchTheServerSendsIsTheOneTheSDKReads() {
        let (name, value) = LogArchiveReceiver.switchHeader(false)
        XCTAssertEqual(name, "X-Faultline-Log-Upload")
        XCTAssertTrue(HTTPAnswer.keptHeaders.contains(name.lowercased()))
        XCTAssertEqual(UploadSwitch.parse(value), .off)
    }

    func testTheLevelsTheSDKsFileLogWritesAreTheOnesLogsTopRanks() {
        for level in LogLevel.allCases {
            XCTAssertEqual(LogLineTop.levelRank("\(LogLineFormat.levelNames[level.rawValue])"), level.rawValue)
        }
        // `logs top --level` takes the aliases the other readers take.
        XCTAssertEqual(LogLineTop.levelRank("warn"), LogLevel.warning.rawValue)
        XCTAssertEqual(LogLineTop.levelRank("fatal"), LogLevel.critical.rawValue)
    }

    /// `logs top --since` compares its bound with the file log's timestamps as text: the bound
    /// must be written as the SDK writes a line (milliseconds cut), byte for byte as before.
    func testLogsTopBoundIsWrittenAsTheFileLogWritesItsLines() {
        func before(_ seconds: Double) -> String {
            let t = seconds.isFinite ? min(max(seconds, 0), 253_402_300_799) : 0
            var time = time_t(t.rounded(.down))
            var tm = tm()
            gmtime_r(&time, &tm)
            let ms = Int((t - t.rounded(.down)) * 1000)
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), ms)
        }
        for t in [0, 1.001, 1_796_106_870.5559, 1_796_106_870.9999, -5, 1e300, .infinity, .nan] {
            XCTAssertEqual(LogLineTop.iso(t), before(t), "\(t)")
        }
        let event = LogEvent(level: .info, message: "m", timestamp: LogTimestamp(seconds: 1_796_106_870, nanoseconds: 555_900_000), threadID: 1)
        let line = LogLineFormat.withLine(event, pid: 1, maxBytes: 4096) { String(decoding: $0, as: UTF8.self) }
        XCTAssertTrue(line.hasPrefix(LogLineTop.iso(1_796_106_870.5559) + "\t"), line)
    }

    /// `--since` and the log API's `since` read as the ISO8601DateFormatter they replace did.
    func testSinceReadsAsTheFormatterDid() {
        let formatter = ISO8601DateFormatter(), fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for s in ["2026-12-01T10:00:00Z", "2026-12-01T10:00:00.250Z", "2026-12-01T10:00:00+02:00", "2026-02-30T10:00:00Z"] {
            let expected = (formatter.date(from: s) ?? fractional.date(from: s))?.timeIntervalSince1970
            XCTAssertEqual(LogArchives.parseTime(s), expected, s)
        }
        XCTAssertEqual(LogArchives.parseTime("2h", now: 10_000), 2_800)
        XCTAssertNil(LogArchives.parseTime("yesterday"))
    }
}
