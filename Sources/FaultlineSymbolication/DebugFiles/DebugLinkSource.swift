// The module's `.gnu_debuglink`: the named file beside the module, in `.debug/` beside it, in each
// debug directory and under the system debug root's copy of the module's directory. Every
// candidate carries the link's CRC-32.
import FaultlineProtocol

public struct DebugLinkSource: DebugFileSource {
    public var directories: [String]
    /// nil: the system tree is not searched.
    public var systemDebugRoot: String?
    public init(directories: [String], systemDebugRoot: String?) { self.directories = directories; self.systemDebugRoot = systemDebugRoot }

    public func candidates(for request: DebugFileRequest) -> [DebugFileCandidate] {
        guard let modulePath = request.modulePath, DebugFileLocator.isRegularFile(modulePath),
            let info = try? ELFInfo.read(path: modulePath), request.buildID == nil || info.buildID == request.buildID,
            let link = info.debugLink
        else { return [] }
        let dir = modulePath.contains("/") ? String(modulePath[..<modulePath.lastIndex(of: "/")!]) : "."
        var paths = ["\(dir)/\(link.name)", "\(dir)/.debug/\(link.name)"]
        paths += directories.map { "\($0)/\(link.name)" }
        if let systemDebugRoot { paths.append("\(systemDebugRoot)\(dir.hasPrefix("/") ? dir : "/" + dir)/\(link.name)") }
        return paths.filter { $0 != modulePath }.map { DebugFileCandidate(path: $0, strategy: "debuglink", crc: link.crc) }
    }
}
