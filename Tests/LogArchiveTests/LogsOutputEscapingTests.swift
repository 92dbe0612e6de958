// `faultline logs` prints what anyone with a public key uploaded (issue 29, item 18): a log line
// that retitles the terminal (ESC ] 0 ; … BEL), clears it (ESC [ 2 J), uses the one-byte C1 CSI
// (U+009B) or reverses what follows (U+202E), and an archive name and release carrying C1 and
// bidi characters. Every output form shows them as visible escapes; --json keeps the values exact.
import FaultlineProtocol
import FaultlineServer
import FaultlineTestSupport
import Foundation
import XCTest

final class LogsOutputEscapingTests: XCTestCase {
    var server: ArchiveServer!
    override func tearDown() {
        server?.stop()
        if let d = server?.dataDirectory { try? FileManager.default.removeItem(atPath: d) }
    }

    static let hostileMessage = "title \u{1b}]0;owned\u{07} clear \u{1b}[2J csi \u{9b}31m bidi \u{202e}txt.exe"
    static let hostileName = "evil\u{9b}2J\u{202e}gz.log.gz"
    static let hostileRelease = "app\u{2066}@1\u{85}"  // the receiver refuses C0 and DEL here, not C1 or bidi

    /// The characters that must never reach a terminal raw.
    static func rawControls(_ s: String) -> [String] {
        s.unicodeScalars.filter { v in
            let c = v.value
            return (c < 0x20 && c != 0x0A && c != 0x09) || (c >= 0x7F && c <= 0x9F) || (0x202A...0x202E).contains(c) || (0x2066...0x2069).contains(c)
        }.map { String(format: "U+%04X", $0.value) }
    }

    func testLogsTopAndListShowControlAndBidiCharactersEscaped() throws {
        server = try ArchiveServer()
        let body = Corpus.gzip(Corpus.line("2026-12-01T10:00:00.000Z", "ERROR", Self.hostileMessage))
        let encode = { (s: String) in s.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let up = server.upload(body, name: encode(Self.hostileName), release: encode(Self.hostileRelease))
        XCTAssertEqual(up.status, 200, up.text)
        let db = try TestDatabase.serveArguments(dataDirectory: server.dataDirectory)
        func logs(_ args: [String]) throws -> String {
            let o = try TestSupport.run(TestSupport.product("faultline"), ["logs"] + args + ["--data-dir", server.dataDirectory] + db)
            XCTAssertEqual(o.exitCode, 0, o.description)
            XCTAssertEqual(Self.rawControls(o.stdout), [], "raw control or bidi characters on stdout of logs \(args)")
            return o.stdout
        }

        let top = try logs(["top"])
        XCTAssertTrue(top.contains("title \\u{1b}]<num>;owned\\u{7} clear \\u{1b}[<num>J csi \\u{9b}31m bidi \\u{202e}txt.exe"), top)
        XCTAssertTrue(top.contains("e.g. title \\u{1b}]0;owned\\u{7} clear \\u{1b}[2J csi \\u{9b}31m bidi \\u{202e}txt.exe"), top)

        let list = try logs(["list"])
        XCTAssertTrue(list.contains("\tapp\\u{2066}@1\\u{85}\t"), list)
        XCTAssertTrue(list.hasSuffix("\tevil\\u{9b}2J\\u{202e}gz.log.gz\n"), list)

        // JSON: escaped as JSON escapes, the same values once parsed.
        let topJSON = try JSONValue.parse(Data(try logs(["top", "--json"]).utf8))
        XCTAssertEqual(topJSON["patterns"]?[0]?["example"]?.stringValue, Self.hostileMessage)
        let listJSON = try JSONValue.parse(Data(try logs(["list", "--json"]).utf8))
        XCTAssertEqual(listJSON[0]?["name"]?.stringValue, Self.hostileName)
        XCTAssertEqual(listJSON[0]?["release"]?.stringValue, Self.hostileRelease)
    }
}
