// Where the SDK writes and the server reads (or the other way round), both sides go through one
// FaultlineProtocol type; these tests put the real writer against the real reader.
@testable import Faultline
@testable import FaultlineCrashPickup
import FaultlineProtocol
@testable import FaultlineServer
import Foundation
import XCTest

final class WireAgreementTests: XCTestCase {
    func testTheServersRateLimitIsWhatTheSDKObeys() throws {
        let response = IngestError.rateLimited(retryAfter: 30, categories: ["error", "default"]).response
        let value = try XCTUnwrap(response.headers.first { $0.0 == HeaderName.sentryRateLimits }?.1)
        XCTAssertEqual(value, "30:error;default:key")  // the bytes the server always sent
        var limits = RateLimits()
        limits.apply(RateLimits.parse(header: value), now: 1000)
        XCTAssertFalse(limits.allows(itemTypes: ["event"], now: 1029))
        XCTAssertTrue(limits.allows(itemTypes: ["transaction"], now: 1029), "a transaction is its own category, not error or default")
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

    func scope() -> ScopeContext {
        ScopeContext(
            options: Options(release: "app@1.2", environment: "staging", service: "checkout", appID: "com.example.app"), sessionID: "s-1",
            installID: "install-1")
    }

    /// The bytes the SDK hands the crash handler: what the hand-written writer gave (the keys
    /// sorted as JSONValue serialises them, the same values), and what CrashContext reads back.
    func testTheCrashContextTheSDKWritesIsTheOneThePickupReads() throws {
        let scope = scope()
        let bytes = scope.crashContextJSON()
        let parsed = try JSONValue.parse(Data(bytes))
        XCTAssertEqual(Data(bytes), parsed.serialized(), String(decoding: bytes, as: UTF8.self))
        var u = utsname()
        uname(&u)
        let kernel = withUnsafeBytes(of: u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let before: JSONValue = [
            "app_id": "com.example.app",
            "contexts": [
                "device": ["arch": "x86_64", "type": "device"],
                "os": ["kernel_version": .string(kernel), "name": "Linux", "type": "os", "version": .string(kernel)]
            ],
            "environment": "staging", "install_id": "install-1", "release": "app@1.2", "server_name": .string(scope.serverName),
            "service": "checkout",
            "trace": ["span_id": parsed["trace"]?["span_id"] ?? .null, "trace_id": .string(scope.traceID), "type": "trace"]
        ]
        XCTAssertEqual(parsed, before)

        let context = CrashContext(json: parsed)
        XCTAssertEqual(context.jsonBytes, bytes)
        XCTAssertEqual(context.installID, "install-1")
        XCTAssertNil(context.sessionID, "the crash core keeps the session (report field `session`), so a forked child can forget it")
        XCTAssertEqual(context.architecture, DebugImage.hostArchitecture)
        XCTAssertEqual(context.trace?.traceID, scope.traceID)
    }

    /// What the pickup knows at the next launch reads in the event builders as the SDK's own
    /// context does, and was the JSON object it always was.
    func testThePickupContextIsTheOldObject() {
        let c = pickupContext(Options(release: "app@1.2", environment: "staging", service: "checkout", appID: "a"), installID: "i")
        XCTAssertEqual(c.json, ["install_id": "i", "release": "app@1.2", "environment": "staging", "service": "checkout", "app_id": "a"])
        XCTAssertEqual(CrashContext(json: c.json), c)
    }

    /// The SDK's session updates and the pickup's crashed update are one payload type; the server
    /// reads the install from either.
    func testBothSessionWritersNameTheInstallTheServerCounts() throws {
        let scope = scope()
        let start = SessionTracker.payload(context: scope, started: scope.sessionStarted, status: .ok, initial: true, errors: 0).json
        XCTAssertEqual(start["did"], "install-1")
        XCTAssertEqual(start["attrs"], ["release": "app@1.2", "environment": "staging"])
        XCTAssertEqual(Set(start.objectValue?.keys.map { $0 } ?? []), ["sid", "did", "init", "started", "timestamp", "status", "errors", "attrs"])

        let report = try CrashReport(json: [
            "format": .string(CrashReport.formatName), "version": 2, "end": true, "event_id": "e", "timestamp": ["sec": 1_796_106_870, "nsec": 0],
            "signal": ["number": 11], "frames": [], "context": try JSONValue.parse(Data(scope.crashContextJSON())),
            "session": ["id": "s-1", "started": .string(SessionTracker.iso(scope.sessionStarted)), "start_queued": true]
        ])
        let session = try XCTUnwrap(report.session)
        let crashed = SessionUpdate.crashed(session, report: report, initial: false).json
        XCTAssertEqual(
            crashed,
            [
                "sid": "s-1", "did": "install-1", "init": false, "started": .string(SessionTracker.iso(scope.sessionStarted)),
                "timestamp": "2026-12-01T06:34:30.000Z", "status": "crashed", "errors": 1,
                "attrs": ["release": "app@1.2", "environment": "staging"]
            ])
        for payload in [start, crashed] {
            XCTAssertEqual(EventFields.installID(items: [Envelope.Item(type: "session", payload: payload.serialized())]), "install-1")
            XCTAssertEqual(SessionPayload(json: payload)?.json, payload)
        }

        // The crash event built from that report carries the context as before.
        let event = CrashEvent.make(from: report)
        XCTAssertEqual(event["user"], ["id": "install-1"])
        XCTAssertEqual(event["release"], "app@1.2")
        XCTAssertEqual(event["tags"]?["session_id"], "s-1")
        XCTAssertEqual(event["tags"]?["service"], "checkout")
        XCTAssertEqual(event["contexts"]?["app"]?["app_identifier"], "com.example.app")
        XCTAssertEqual(event["contexts"]?["trace"]?["trace_id"], .string(scope.traceID))
        XCTAssertEqual(event["contexts"]?["device"]?["arch"], .string(DebugImage.hostArchitecture))
    }
}
