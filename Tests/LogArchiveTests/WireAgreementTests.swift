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
}
