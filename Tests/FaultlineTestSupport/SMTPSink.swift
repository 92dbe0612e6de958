// A real SMTP server for tests: aiosmtpd (Tests/SMTP/smtp_sink.py) on 127.0.0.1, on a port the
// kernel chose and the script reports; each message it accepts lands in a directory we read.
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

public final class SMTPSink {
    public let port: UInt16
    public let directory: String
    private let process = Process()

    public init() throws {
        directory = TestSupport.makeTemporaryDirectory("smtp-sink")
        let out = directory + ".out"
        FileManager.default.createFile(atPath: out, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", TestSupport.repositoryRoot().path + "/Tests/SMTP/smtp_sink.py", directory + "/mail"]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = process.standardOutput
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        var found: UInt16?
        while found == nil && Date() < deadline && process.isRunning {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }) {
                found = UInt16(line.dropFirst("listening ".count))
            } else {
                usleep(20_000)
            }
        }
        guard let found else {
            let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            if process.isRunning { process.terminate() }
            struct NotStarted: Error, CustomStringConvertible { let description: String }
            throw NotStarted(description: "the SMTP sink did not start (is aiosmtpd installed? tools/setup installs it): \(text)")
        }
        port = found
    }

    /// The messages received so far, oldest first (envelope in X-Envelope-From/To headers).
    public var messages: [String] {
        let dir = directory + "/mail"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
            .compactMap { try? String(contentsOfFile: dir + "/" + $0, encoding: .utf8) }
    }

    public func stop() {
        process.end()
        try? FileManager.default.removeItem(atPath: directory)
        try? FileManager.default.removeItem(atPath: directory + ".out")
    }

    deinit { stop() }
}
