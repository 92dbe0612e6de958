// `faultline upload PATH…`: sends debug files to a Faultline (or any sentry-cli compatible) server.
// Parses arguments and renders; finding, uploading and waiting live in FaultlineUpload.
import Foundation
import FaultlineCommandLine
import FaultlineUpload
import FaultlineProtocol

enum UploadCommand {
    static let usage = """
        usage: faultline upload [--url URL] [--token TOKEN] [--org ORG] [--project PROJECT]
                                [--wait] [--timeout SECONDS] [--json] [--dry-run]
                                [--include-sources] [--sources-max-bytes N] PATH…

        Walks files and directories (symbolic links followed, each directory once) for ELF files that
        have a GNU build-id and DWARF or a symbol table, keeps one file per build-id (the richest),
        asks the server which it already has, and uploads the rest in gzip'd chunks (sentry-cli's
        protocol). Files that are not ELF, have no build-id or are stripped are skipped and counted.
        A progress bar on a terminal, one line per file otherwise.

          --url URL          server (env FAULTLINE_URL; default http://127.0.0.1:8411)
          --token TOKEN      server token, flst_… (env FAULTLINE_TOKEN)
          --org ORG          organization slug (env FAULTLINE_ORG; default faultline)
          --project PROJECT  project id or slug (env FAULTLINE_PROJECT; default 'default')
          --wait             then wait until the server has installed every file and finished the
                             backfills the uploads started; print how many earlier occurrences became
                             symbolicated and which issues merged
          --timeout SECONDS  how long --wait waits (default 300)
          --include-sources  also send the source files each debug file's DWARF names (those present
                             on this machine), for debuginfod's /source endpoint (gdb shows the lines)
          --sources-max-bytes N  cap on the sources sent per debug file (default 16777216)
          --json             print one JSON summary on stdout (progress goes to stderr)
          --dry-run          list what would be sent; contact no server

        exit codes: 0 every file is on the server (with --wait: installed, backfills done),
                    1 server or network failure (nothing sure), 2 usage error,
                    3 a path is missing or nothing to upload, 4 some files failed,
                    (also when sources were asked for and could not be sent),
                    5 uploaded, but a backfill failed (--wait), 6 uploaded, but --wait timed out
        """

    static func run(_ args: [String]) -> Int32 {
        let env = ProcessInfo.processInfo.environment
        var url = env["FAULTLINE_URL"] ?? "http://127.0.0.1:8411"
        var token = env["FAULTLINE_TOKEN"]
        var org = env["FAULTLINE_ORG"] ?? "faultline"
        var project = env["FAULTLINE_PROJECT"] ?? "default"
        var dryRun = false, wait = false, json = false
        var timeout: TimeInterval = 300
        var includeSources = false
        var sourcesMax: Int64 = 16 * 1024 * 1024
        var paths: [String] = []
        var it = args.makeIterator()
        while let a = it.next() {
            switch a {
            case "-h", "--help": print(usage); return ExitCode.ok
            case "--url": guard let v = it.next() else { return usageError(a) }; url = v
            case "--token": guard let v = it.next() else { return usageError(a) }; token = v
            case "--org": guard let v = it.next() else { return usageError(a) }; org = v
            case "--project": guard let v = it.next() else { return usageError(a) }; project = v
            case "--timeout": guard let v = it.next(), let t = TimeInterval(v), t >= 0 else { return usageError(a) }; timeout = t
            case "--wait": wait = true
            case "--include-sources": includeSources = true
            case "--sources-max-bytes": guard let v = it.next(), let n = Int64(v), n >= 0 else { return usageError(a) }; sourcesMax = n
            case "--json": json = true
            case "--dry-run": dryRun = true
            default:
                if a.hasPrefix("-") && a != "-" { return usageError(a) }
                paths.append(a)
            }
        }
        guard !paths.isEmpty else { printError("upload: give at least one file or directory\n\(usage)"); return ExitCode.usage }
        let scan = DebugFileScanner.scan(paths)
        for m in scan.missing { printError("upload: no such file or directory: \(m)") }
        for p in scan.problems { printError("upload: skipping \(p.path): \(p.reason)") }
        if !scan.missing.isEmpty { return ExitCode.inputError }
        guard !scan.candidates.isEmpty else {
            let skipped = scan.skippedDescription.isEmpty ? "" : " (skipped \(scan.skippedDescription))"
            printError(
                "upload: no ELF files with a build-id and debug info or symbols under \(paths.map(DebugFileScanner.cleanPath).joined(separator: " "))\(skipped)"
            )
            return ExitCode.inputError
        }
        if dryRun {
            for c in scan.candidates {
                let kind = [c.summary.hasDebugInfo ? "debug" : nil, c.summary.hasSymbols ? "symtab" : nil, c.summary.isExecutable ? "code" : nil]
                    .compactMap { $0 }.joined(separator: ",")
                print("would upload \(c.summary.buildID.hex) \(kind) \(c.size) bytes \(c.path)")
            }
            if !scan.skippedDescription.isEmpty { print("skipped \(scan.skippedDescription)") }
            return ExitCode.ok
        }
        guard let token, !token.isEmpty else {
            printError("upload: a server token is required (--token or FAULTLINE_TOKEN)")
            return ExitCode.usage
        }
        let client = UploadClient(base: url, token: token, org: org, project: project)
        let progress = UploadProgress(total: scan.candidates.count, toStderr: json)
        var report = UploadReport(files: [], scan: scan)
        do {
            var uploader = Uploader(client: client) { o in
                switch o.state {
                case .present: progress.line("present \(o.candidate.summary.buildID.hex) \(o.candidate.path)")
                case .uploaded: progress.line("uploaded \(o.candidate.summary.buildID.hex) \(o.candidate.path) (\(o.candidate.size) bytes)")
                case .failed: progress.line("FAILED \(o.candidate.path): \(o.error ?? "")")
                }
                progress.advance()
            }
            if includeSources { uploader.sources = SourceBundler(client: client, maxBytes: sourcesMax) }
            report.files = try uploader.run(scan.candidates)
        } catch {
            printError("upload: \(error)")
            return ExitCode.failure
        }
        if wait && report.files.contains(where: { $0.state != .failed }) {
            progress.line("waiting for the server to install and backfill (timeout \(Int(timeout)) s)")
            let start = Date()
            do {
                report.wait = try UploadWaiter(client: client, timeout: timeout).wait(&report.files)
            } catch {
                printError("upload: files are on the server, but asking for their status failed: \(error)")
                report.wait = .timedOut
            }
            report.waitSeconds = Date().timeIntervalSince(start)
        }
        if json {
            progress.finish(nil)
            print(report.json.jsonString)
        } else {
            progress.finish(report.summaryLines.joined(separator: "\n"))
        }
        return report.exit.rawValue
    }

    static func usageError(_ a: String) -> Int32 {
        printError("upload: bad or incomplete option '\(a)'\n\(usage)")
        return ExitCode.usage
    }
}
