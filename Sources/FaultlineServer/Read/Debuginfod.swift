// debuginfod's read endpoints over the build-id store, so gdb and debuginfod-find can use us:
// /buildid/<hex>/debuginfo, /executable, and /source/<path> for sources bundled with
// `upload --include-sources`. /section is not served (404).
import Foundation
import FaultlineProtocol

public struct Debuginfod: Sendable {
    let files: DebugFileStore
    let sources: SourceFiles?

    public init(files: DebugFileStore, sources: SourceFiles? = nil) {
        self.files = files
        self.sources = sources
    }

    public func handle(_ p: [String]) -> HTTPResponse {
        guard p.count >= 3, p[0] == "buildid" else { return .detail(404, "not found") }
        guard let id = BuildID(hex: p[1]), id.bytes.count >= 4, id.bytes.count <= 64 else { return .detail(404, "not a build-id") }
        if p[2] == "source" {
            // gdb asks for the absolute path its DWARF names: /buildid/<id>/source/usr/src/app/main.c
            let wanted = "/" + p.dropFirst(3).joined(separator: "/")
            guard p.count > 3, let found = sources?.lookup(id, path: wanted) else { return .detail(404, "no source \(wanted) for build-id \(id.hex)") }
            return HTTPResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/octet-stream"),
                    ("X-DEBUGINFOD-SIZE", String(found.size)),
                    ("X-DEBUGINFOD-FILE", "/buildid/\(id.hex)/source\(wanted)")
                ], body: .file(path: found.file, size: found.size))
        }
        guard p.count == 3 else { return .detail(404, "not found") }
        let path: String
        switch p[2] {
        case "debuginfo": path = files.debugInfoPath(id)
        case "executable": path = files.executablePath(id)
        default: return .detail(404, "only debuginfo, executable and source are served")
        }
        guard let attrs = try? FileManager.default.attributesOfItem(atPath: path), let size = attrs[.size] as? Int else {
            return .detail(404, "no \(p[2]) for build-id \(id.hex)")
        }
        return HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", "application/octet-stream"),
                ("X-DEBUGINFOD-SIZE", String(size)),
                ("X-DEBUGINFOD-FILE", "/buildid/\(id.hex)/\(p[2])")
            ], body: .file(path: path, size: Int64(size)))
    }
}
