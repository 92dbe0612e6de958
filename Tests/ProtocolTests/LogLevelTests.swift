// The one table of log levels: every spelling a writer uses is one a reader takes back.
import FaultlineProtocol
import XCTest

final class LogLevelTests: XCTestCase {
    func testEveryWrittenNameReadsBackAsItsLevel() {
        for level in LogLevel.allCases {
            XCTAssertEqual(LogLevel(name: level.name), level)
            XCTAssertEqual(LogLevel(name: "\(level.fileLogName)"), level)
            XCTAssertEqual(LogLevel.sentryName(of: "\(level.sentryName)"), "\(level.sentryName)")
        }
        XCTAssertEqual(LogLevel.fileLogNames, ["TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL"])
        XCTAssertEqual(LogLevel.sentryNames, ["debug", "info", "warning", "error", "fatal"])
    }

    func testAliasesOtherSentryClientsSend() {
        XCTAssertEqual(LogLevel(name: "warn"), .warning)
        XCTAssertEqual(LogLevel(name: "WARN"), .warning)
        XCTAssertEqual(LogLevel(name: "fatal"), .critical)
        XCTAssertEqual(LogLevel.sentryName(of: "warn"), "warning")
        XCTAssertEqual(LogLevel.sentryName(of: "trace"), "debug")
        XCTAssertNil(LogLevel(name: "loud"))
    }
}
