// `faultline upload PATH…`: sends debug files to a Faultline (or any sentry-cli compatible) server.
import Foundation
import FaultlineServer
import FaultlineProtocol

enum UploadCommand {
    static let usage = """
    usage: faultline upload [--url URL] [--token TOKEN] [--org ORG] [--project PROJECT] [--dry-run] PATH…

    Walks files and directories for ELF files that have a GNU build-id and DWARF or a symbol
    table, asks the server which it already has, and uploads the rest in gzip'd chunks
    (sentry-cli's protocol). A progress bar on a terminal, one line per file otherwise.

      --url URL          server (env FAULTLINE_URL; default http://127.0.0.1:8411)
      --token TOKEN      server token, flst_… (env FAULTLINE_TOKEN)
      --org ORG          organization slug (env FAULTLINE_ORG; default faultline)
      --project PROJECT  project id or slug (env FAULTLINE_PROJECT; default 'default')
      --dry-run          list what would be sent; contact no server

    exit codes: 0 every file is on the server, 1 server or network failure (nothing sure),
                2 usage error, 3 a path is missing or nothing to upload, 4 some files failed
    """

    static func run(_ args: [String]) -> Int32 {
        let env = ProcessInfo.processInfo.environment
        var url = env["FAULTLINE_URL"] ?? "http://127.0.0.1:8411"
        var token = env["FAULTLINE_TOKEN"]
        var org = env["FAULTLINE_ORG"] ?? "faultline"
        var project = env["FAULTLINE_PROJECT"] ?? "default"
        var dryRun = false
        var paths: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--url": guard let v = it.next() else { return usageError(a) }; url = v
            case "--token": guard let v = it.next() else { return usageError(a) }; token = v
            case "--org": guard let v = it.next() else { return usageError(a) }; org = v
            case "--project": guard let v = it.next() else { return usageError(a) }; project = v
            case "--dry-run": dryRun = true
            default:
                if a.hasPrefix("-") && a != "-" { return usageError(a) }
                paths.append(a)
            }
        }
        guard !paths.isEmpty else { printError("upload: give at least one file or directory\n\(usage)"); return ExitCode.usage }
        let scan = UploadScanner.scan(paths)
        for m in scan.missing { printError("upload: no such file or directory: \(m)") }
        for s in scan.skipped { print("skip \(s.path): \(s.reason)") }
        if !scan.missing.isEmpty { return ExitCode.inputError }
        guard !scan.candidates.isEmpty else {
            printError("upload: no ELF files with a build-id and debug info or symbols under \(paths.joined(separator: " "))")
            return ExitCode.inputError
        }
        if dryRun {
            for c in scan.candidates {
                let kind = [c.summary.hasDebugInfo ? "debug" : nil, c.summary.hasSymbols ? "symtab" : nil, c.summary.isExecutable ? "code" : nil]
                    .compactMap { $0 }.joined(separator: ",")
                print("would upload \(c.summary.buildID.hex) \(kind) \(c.size) bytes \(c.path)")
            }
            return ExitCode.ok
        }
        guard let token, !token.isEmpty else {
            printError("upload: a server token is required (--token or FAULTLINE_TOKEN)")
            return ExitCode.usage
        }
        guard ServerToken.looksLikeServerToken(token) || !token.isEmpty else { return ExitCode.usage }
        let client = UploadClient(base: url, token: token, org: org, project: project)
        return Uploader(client: client, progress: UploadProgress(total: scan.candidates.count)).run(scan.candidates)
    }

    static func usageError(_ a: String) -> Int32 {
        printError("upload: bad or incomplete option '\(a)'\n\(usage)")
        return ExitCode.usage
    }
}

/// The per-file flow: chunk and hash, probe with assemble, send missing chunks, assemble, poll.
struct Uploader {
    let client: UploadClient
    let progress: UploadProgress

    func run(_ files: [UploadCandidate]) -> Int32 {
        let options: UploadClient.Options
        do { options = try client.options() } catch {
            printError("upload: \(error)")
            return ExitCode.failure
        }
        var failed = 0, sent = 0, present = 0
        for f in files {
            do {
                switch try upload(f, options) {
                case .present: present += 1; progress.line("present \(f.summary.buildID.hex) \(f.path)")
                case .uploaded: sent += 1; progress.line("uploaded \(f.summary.buildID.hex) \(f.path) (\(f.size) bytes)")
                }
            } catch {
                failed += 1
                progress.line("FAILED \(f.path): \(error)")
            }
            progress.advance()
        }
        progress.finish("\(sent) uploaded, \(present) already on the server, \(failed) failed")
        if failed == 0 { return ExitCode.ok }
        return failed == files.count ? ExitCode.failure : ExitCode.partial
    }

    enum Outcome { case present, uploaded }

    func upload(_ f: UploadCandidate, _ o: UploadClient.Options) throws -> Outcome {
        guard let fh = FileHandle(forReadingAtPath: f.path) else { throw UploadClientError(description: "cannot read") }
        defer { try? fh.close() }
        var chunks: [(sha1: String, data: Data)] = []
        let whole = SHA1Hash.Hasher()
        while let data = try fh.read(upToCount: o.chunkSize), !data.isEmpty {
            whole.update(data)
            chunks.append((SHA1Hash.hex(data), data))
        }
        let checksum = whole.finalizeHex()
        let spec: JSONValue = ["name": .string((f.path as NSString).lastPathComponent),
                               "debug_id": .string(f.summary.buildID.debugID.description),
                               "chunks": .array(chunks.map { .string($0.sha1) })]
        var didUpload = false
        for attempt in 0..<60 {
            let reply = try client.assemble([checksum: spec])[checksum] ?? .null
            let state = reply["state"]?.stringValue ?? "?"
            switch state {
            case "ok": return didUpload ? .uploaded : .present
            case "error": throw UploadClientError(description: reply["detail"]?.stringValue ?? "server refused the file")
            case "not_found":
                let missing = Set((reply["missingChunks"]?.arrayValue ?? []).compactMap(\.stringValue))
                guard !missing.isEmpty, !didUpload || attempt < 2 else { throw UploadClientError(description: "server still misses chunks after upload") }
                try client.upload(chunks: chunks.filter { missing.contains($0.sha1) }, options: o)
                didUpload = true
            default:
                Thread.sleep(forTimeInterval: 0.5)  // created / assembling: poll
            }
        }
        throw UploadClientError(description: "server did not finish assembling in time")
    }
}

/// A progress bar on a terminal, plain lines otherwise (CI logs).
final class UploadProgress {
    let total: Int
    var done = 0
    let tty = isatty(STDOUT_FILENO) != 0

    init(total: Int) { self.total = total }

    func line(_ s: String) {
        if tty { print("\r\u{1B}[K" + s) } else { print(s) }
        fflush(nil)
    }
    func advance() {
        done += 1
        guard tty else { return }
        let width = 30
        let filled = total == 0 ? width : width * done / total
        print("\r[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(done)/\(total)", terminator: "")
        fflush(nil)
    }
    func finish(_ summary: String) {
        if tty { print("\r\u{1B}[K", terminator: "") }
        print(summary)
        fflush(nil)
    }
}
