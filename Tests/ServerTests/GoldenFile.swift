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

    /// The changed lines, `-` golden and `+` actual, each after the line number it is at in the
    /// golden file (a longest-common-subsequence diff: golden files are a few hundred lines).
    static func diff(_ expected: String, _ actual: String) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false)
        // common[i][j]: the longest common subsequence of old[i...] and new[j...].
        var common = [[Int]](repeating: [Int](repeating: 0, count: new.count + 1), count: old.count + 1)
        for i in stride(from: old.count - 1, through: 0, by: -1) {
            for j in stride(from: new.count - 1, through: 0, by: -1) {
                common[i][j] = old[i] == new[j] ? common[i + 1][j + 1] + 1 : max(common[i + 1][j], common[i][j + 1])
            }
        }
        var out = ""
        var i = 0, j = 0
        while i < old.count || j < new.count {
            if i < old.count && j < new.count && old[i] == new[j] {
                i += 1; j += 1
            } else if j < new.count && (i == old.count || common[i][j + 1] >= common[i + 1][j]) {
                out += "\(i + 1) + \(new[j])\n"; j += 1
            } else {
                out += "\(i + 1) - \(old[i])\n"; i += 1
            }
        }
        return out
    }
}
