// The lines around a native frame's line, from the sources uploaded with its debug file
// (`faultline upload --include-sources`, Sources/FaultlineServer/DebugFiles/SourceFiles.swift):
// what the issue page shows under a symbolicated frame. One per page view: each file is read once
// however many frames point into it.
import Foundation
import FaultlineProtocol

final class SourceLines {
    let files: SourceFiles
    /// Lines of each file read so far (nil: not stored here, or too big to show).
    private var read: [String: [Substring]?] = [:]
    /// Files larger than this are not read for a page (they are still served over debuginfod).
    static let maxFileBytes: Int64 = 4 << 20
    /// Lines shown on each side of the frame's.
    static let radius = 5

    init(files: SourceFiles) { self.files = files }

    /// The frame's line and up to `radius` lines on each side: the number of the first, and the
    /// lines; nil when no source was uploaded for this build-id and path, or the line is past its end.
    func around(buildID: BuildID, path: String, line: Int) -> (first: Int, lines: [String])? {
        guard line > 0 else { return nil }
        let key = buildID.hex + "\0" + path
        let lines: [Substring]?
        if let known = read[key] {
            lines = known
        } else {
            var loaded: [Substring]?
            if let found = files.lookup(buildID, path: path), found.size <= Self.maxFileBytes,
                let data = FileManager.default.contents(atPath: found.file)
            {
                loaded = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            }
            read[key] = loaded
            lines = loaded
        }
        guard let lines, line <= lines.count else { return nil }
        let first = max(1, line - Self.radius)
        let last = min(lines.count, line + Self.radius)
        return (first, lines[(first - 1)..<last].map(String.init))
    }
}
