// The string helpers that replace NSString's in the FoundationEssentials-only modules give
// NSString's results (checked against Foundation, which the tests may link).
import FaultlineProtocol
import Foundation
import XCTest

final class TextTests: XCTestCase {
    func testTrimmingRemovesWhatFoundationsCharacterSetsName() {
        // Every scalar up to U+3100 (all of Zs, Zl, Zp, the C0/C1 controls) and the last planes' edges.
        for v in Array(0...0x3100) + [0xFEFF, 0xFFFD, 0x1F600, 0xE0020, 0x10FFFD] {
            guard let u = Unicode.Scalar(v) else { continue }
            let t = String(u) + "a" + String(u) + "b" + String(u)
            XCTAssertEqual(t.trimmingWhitespaceAndNewlines(), t.trimmingCharacters(in: .whitespacesAndNewlines), "U+\(String(v, radix: 16))")
            XCTAssertEqual(t.trimmingBlanks(), t.trimmingCharacters(in: .whitespaces), "U+\(String(v, radix: 16))")
        }
        XCTAssertEqual(" \t\r\n".trimmingWhitespaceAndNewlines(), "")
    }

    func testCaseInsensitiveSearchFindsWhatLoweringAndFoundationFind() {
        let parts = ["token", "api_key", "private key-----", "://", "bearer "]
        let texts = [
            "", "t", "token", "TOKEN", "x-Auth-Token", "my_API_KEY_2", "tokeN!", "toke", "tok en", "ttoken", "api-key",
            "-----BEGIN RSA PRIVATE KEY-----", "http://a", ":/", "Authorization: Bearer abc", "bearer", "TO\u{212A}EN",
            "ÄtokenÖ", "tökén", "[token]", "ﬁ token"
        ]
        for text in texts {
            for part in parts {
                XCTAssertEqual(text.containsASCIICaseInsensitive(part), text.lowercased().contains(part), "\(text) / \(part)")
            }
        }
        XCTAssertTrue("TO\u{212A}EN".containsASCIICaseInsensitive("token"), "the Kelvin sign lowers to k")
        XCTAssertTrue("anything".containsASCIICaseInsensitive(""))
        // Bytes, not characters: a combining mark after the word does not hide it (for secret
        // filtering, the safe way round).
        XCTAssertTrue("MY_SECRET\u{301}".containsASCIICaseInsensitive("secret"))
    }

    func testPathNamesSplitAsNSStringDoes() {
        // ("//" differs: NSString gives "" for both; we give "/", and no caller passes it.)
        for p in [
            "/", "/a", "/a/", "/a/b", "/a/b/", "/a//b", "/a//b//", "///a", "/tmp/x.envelope", "/a/b/c.d", "./x", "a/b",
            "/usr/lib/x86_64-linux-gnu/libc.so.6", "/ö/ü", "/ö/ü/", "/a/ü", "/é/"
        ] {
            XCTAssertEqual(PathName.last(p), (p as NSString).lastPathComponent, p)
            XCTAssertEqual(PathName.directory(p), (p as NSString).deletingLastPathComponent, p)
        }
        // No slash at all: NSString's deletingLastPathComponent traps on these in this toolchain.
        XCTAssertEqual(PathName.last("a"), "a")
        XCTAssertEqual(PathName.directory("a"), "")
        XCTAssertEqual(PathName.last(""), "")
        XCTAssertEqual(PathName.last("a/"), "a")
        XCTAssertEqual(PathName.last("ü/"), "ü")
        XCTAssertEqual(PathName.last("///"), "/")
    }

    func testPaddingAsNSStringAndPrintfDid() {
        for s in ["", "#1", "#12", "#1234", "#12345", "CRITICAL", "INFO", "symbolicate", "a-much-longer-command"] {
            for n in [4, 8, 13] { XCTAssertEqual(s.paddedOrCut(toLength: n), s.padding(toLength: n, withPad: " ", startingAt: 0), "\(s) \(n)") }
        }
        for v: UInt64 in [0, 1, 0xdead_beef, 0x7fff_ffff_ffff, UInt64.max] {
            XCTAssertEqual("0x" + String(v, radix: 16).zeroPadded(toLength: 16), String(format: "0x%016llx", v))
            XCTAssertEqual(String(v).zeroPadded(toLength: 20), String(format: "%020llu", v))
        }
    }
}
