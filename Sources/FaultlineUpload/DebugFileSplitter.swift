// `faultline debug-files split`: the release step teams run before shipping — move DWARF and the
// symbol table of each binary into a separate debug file under a `.build-id/xx/rest.debug` tree
// (what `faultline upload`, `faultline symbolicate --debug-dir`, gdb and debuginfod read), strip
// the binary and link it to its debug file with `.gnu_debuglink`.
//
// The ELF rewriting is elfutils' `eu-strip -f`, not ours: one command writes the debug file,
// strips, and adds the debuglink with the debug file's CRC, and elfutils is already a dependency
// (libdw). A hand-written rewriter would be a second, less tested ELF writer.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

public struct SplitOutcome: Sendable {
    public enum State: String, Sendable {
        /// Debug file written, binary stripped and linked to it.
        case split
        /// Nothing to move: already stripped (has a debuglink and no DWARF) or itself a debug file.
        case alreadySplit = "already_split"
        case failed
    }
    public var binary: String
    public var buildID: BuildID?
    public var debugFile: String?
    public var state: State
    public var detail: String?
    /// Bytes of the binary before and after (what shipping saves).
    public var sizeBefore: Int64 = 0
    public var sizeAfter: Int64 = 0

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "binary": .string(binary), "state": .string(state.rawValue),
            "size_before": .int(sizeBefore), "size_after": .int(sizeAfter)
        ]
        o["build_id"] = buildID.map { .string($0.hex) } ?? .null
        o["debug_file"] = debugFile.map { .string($0) } ?? .null
        o["detail"] = detail.map { .string($0) } ?? .null
        return .object(o)
    }
}

public enum DebugFileSplitterError: Error, CustomStringConvertible {
    case toolMissing(String)
    public var description: String {
        switch self {
        case .toolMissing(let t): return "\(t) was not found on PATH; install elfutils (apt-get install elfutils)"
        }
    }
}

public struct DebugFileSplitter {
    /// The root of the `.build-id` tree the debug files go to.
    public let outputDirectory: String
    let euStrip: String

    public init(outputDirectory: String) throws(DebugFileSplitterError) {
        self.outputDirectory = DebugFileScanner.cleanPath(outputDirectory)
        guard let tool = Self.findOnPath("eu-strip") else { throw .toolMissing("eu-strip") }
        euStrip = tool
    }

    /// Splits one ELF file in place (the binary is rewritten; its debug file is created).
    public func split(_ path: String) -> SplitOutcome {
        var o = SplitOutcome(binary: path, state: .failed)
        let info: ELFInfo
        do { info = try ELFInfo.read(path: path) } catch { o.detail = error.description; return o }
        o.buildID = info.buildID
        o.sizeBefore = Int64(info.fileSize)
        o.sizeAfter = o.sizeBefore
        guard let id = info.buildID else { o.detail = "no GNU build-id note (link with -Wl,--build-id)"; return o }
        if info.kind == .debugOnly || info.kind == .relocatable || (info.debugLink != nil && !info.hasDebugInfo) {
            o.state = .alreadySplit
            return o
        }
        let (dir, rest) = id.buildIDPathComponents
        let target = "\(outputDirectory)/.build-id/\(dir)/\(rest).debug"
        let staged = target + ".tmp-\(getpid())"
        do {
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch { o.detail = "cannot create \((target as NSString).deletingLastPathComponent): \(error.localizedDescription)"; return o }
        // The debuglink names "<binary>.debug", the convention gdb and objcopy users expect; the
        // file itself is found by build-id, which does not depend on that name.
        let linkName = (path as NSString).lastPathComponent + ".debug"
        let run = Self.run(euStrip, ["--remove-comment", "-f", staged, "-F", linkName, path])
        guard run.status == 0 else {
            try? FileManager.default.removeItem(atPath: staged)
            o.detail = "eu-strip failed (exit \(run.status)): \(run.output.trimmingCharacters(in: .whitespacesAndNewlines))"
            return o
        }
        // Trust, but check: the debug file must carry the same build-id before it takes its place.
        guard let debug = try? ELFInfo.read(path: staged), debug.buildID == id else {
            try? FileManager.default.removeItem(atPath: staged)
            o.detail = "eu-strip wrote a debug file without the binary's build-id"
            return o
        }
        guard rename(staged, target) == 0 else {
            try? FileManager.default.removeItem(atPath: staged)
            o.detail = "cannot move the debug file to \(target): \(String(cString: strerror(errno)))"
            return o
        }
        o.state = .split
        o.debugFile = target
        o.sizeAfter = Int64((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        return o
    }

    static func findOnPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        return nil
    }

    static func run(_ exe: String, _ args: [String]) -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        do { try p.run() } catch { return (127, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
