// Compares a renderer's output with a checked-in golden file; FAULTLINE_RECORD_GOLDEN=1 rewrites
// the file instead, so an intended change is one re-run and a reviewed `git diff`.
import Foundation
import XCTest
import FaultlineTestSupport

enum GoldenFile {
    static var isRecording: Bool { ProcessInfo.processInfo.environment["FAULTLINE_RECORD_GOLDEN"] == "1" }

    /// `name` is a path under Fixtures/Golden.
    static func url(_ name: String) -> URL {
        TestSupport.repositoryRoot().appendingPathComponent("Fixtures/Golden").appendingPathComponent(name)
    }

    static func assertMatches(_ actual: String, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        let url = url(name)
        if isRecording {
            XCTAssertNoThrow(try Data(actual.utf8).write(to: url), "recording \(name)", file: file, line: line)
            return
        }
        guard let data = FileManager.default.contents(atPath: url.path), let expected = String(data: data, encoding: .utf8) else {
            XCTFail("\(name) is missing; run with FAULTLINE_RECORD_GOLDEN=1 to record it", file: file, line: line)
            return
        }
        guard expected != actual else { return }
        XCTFail("\(name) differs (FAULTLINE_RECORD_GOLDEN=1 records the new output):\n" + diff(expected, actual), file: file, line: line)
    }

    /// The changed lines with a line of context either side: `-` golden, `+` actual. Lines are
    /// matched by position after the common head and tail, enough to read a renderer's change.
    static func diff(_ expected: String, _ actual: String) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var head = 0
        while head < old.count && head < new.count && old[head] == new[head] { head += 1 }
        var tail = 0
        while tail < old.count - head && tail < new.count - head && old[old.count - 1 - tail] == new[new.count - 1 - tail] { tail += 1 }
        var out = "@@ line \(head + 1) @@\n"
        if head > 0 { out += "  " + old[head - 1] + "\n" }
        for l in old[head..<(old.count - tail)] { out += "- " + l + "\n" }
        for l in new[head..<(new.count - tail)] { out += "+ " + l + "\n" }
        if tail > 0 { out += "  " + old[old.count - tail] + "\n" }
        return out
    }
}
