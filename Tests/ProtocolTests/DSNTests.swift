// DSN parsing: plain DSNs are split by hand (the SDK parses its DSN on the app's thread at
// start); the split must agree with URLComponents, which still parses everything else.
@testable import FaultlineProtocol
import Foundation
import XCTest

final class DSNTests: XCTestCase {
    func testPlainDSNsSplitByHandAgreeWithURLComponents() throws {
        let plain = [
            "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1", "https://key@sentry.example.com/42",
            "http://key:secret@host/7", "https://k@h:443/a/b/c/9", "http://k@h/prefix/", "http://k@h:09/3",
            "http://k@h", "http://k.e-y_~@host-name.example/p.a_t~h/12", "https://K@H/1"
        ]
        for s in plain {
            let parts = try XCTUnwrap(DSN.plainParts(s), s)
            let c = try XCTUnwrap(URLComponents(string: s), s)
            XCTAssertEqual(parts, DSN.URLParts(scheme: c.scheme!, user: c.user, host: c.host!, port: c.port, path: c.path), s)
        }
    }

    func testAnythingElseIsLeftToURLComponents() {
        for s in [
            "http://k%41@h/1", "http://k@[::1]:9/1", "http://k@h/1?x=1", "http://k@h/1#f", "HTTP://k@h/1", "http://h/1",
            "http://a@b@h/1", "http://k@h:/1", "http://k@h:x/1", "http://k@/1", "definitely not a dsn", "http://k@h/ü"
        ] {
            XCTAssertNil(DSN.plainParts(s), s)
        }
    }

    func testParsedDSNsAndTheirErrors() throws {
        let d = try DSN(parsing: "  https://key@sentry.example.com:8443/base/42\n")
        XCTAssertEqual([d.scheme, d.publicKey.value, d.host, d.pathPrefix, d.projectID], ["https", "key", "sentry.example.com", "/base", "42"])
        XCTAssertEqual(d.port, 8443)
        XCTAssertEqual(try DSN(parsing: "http://k%41@h/1").publicKey.value, "kA", "percent-escapes still decoded (URLComponents)")
        XCTAssertThrowsError(try DSN(parsing: " \t")) { XCTAssertEqual($0 as? DSN.ParseError, .empty) }
        XCTAssertThrowsError(try DSN(parsing: "ftp://k@h/1")) { XCTAssertEqual($0 as? DSN.ParseError, .unsupportedScheme("ftp")) }
        XCTAssertThrowsError(try DSN(parsing: "http://h/1")) { XCTAssertEqual($0 as? DSN.ParseError, .missingPublicKey) }
        XCTAssertThrowsError(try DSN(parsing: "http://k@h")) { XCTAssertEqual($0 as? DSN.ParseError, .missingProjectID) }
        XCTAssertThrowsError(try DSN(parsing: "http://flst_0011@h/1")) { XCTAssertEqual($0 as? DSN.ParseError, .serverTokenInDSN) }
        XCTAssertThrowsError(try DSN(parsing: "definitely not a dsn")) { XCTAssertEqual($0 as? DSN.ParseError, .notAURL("definitely not a dsn")) }
        XCTAssertThrowsError(try DSN(parsing: "http://k@h:99999/1")) { XCTAssertEqual($0 as? DSN.ParseError, .badPort("99999")) }
        XCTAssertThrowsError(try DSN(parsing: "http://k@h:0/1")) { XCTAssertEqual($0 as? DSN.ParseError, .badPort("0")) }
        // Too many digits for an Int: URLComponents reports no port at all; still refused.
        let huge = "99999999999999999999999"
        XCTAssertThrowsError(try DSN(parsing: "http://k@h:\(huge)/1")) { XCTAssertEqual($0 as? DSN.ParseError, .badPort(huge)) }
        XCTAssertThrowsError(try DSN(parsing: "https://k@[::1]:\(huge)/1")) { XCTAssertEqual($0 as? DSN.ParseError, .badPort(huge)) }
        XCTAssertEqual(try DSN(parsing: "https://k@[::1]:8443/1").port, 8443)
        XCTAssertEqual(try DSN(parsing: "http://k@h:65535/1").port, 65535)
    }

    func testTheWrittenDSNIsTheOneTheSDKParses() throws {
        let key = PublicKey("0123abcd")
        let cases = [
            ("http://127.0.0.1:8000", "http://0123abcd@127.0.0.1:8000/7"),
            ("https://errors.example.com/", "https://0123abcd@errors.example.com/7"),
            ("https://errors.example.com/faultline/", "https://0123abcd@errors.example.com/faultline/7"),
            ("https://old@errors.example.com?x=1", "https://0123abcd@errors.example.com/7")
        ]
        for (url, expected) in cases {
            let text = DSN.text(serverURL: url, publicKey: key, projectID: "7")
            XCTAssertEqual(text, expected, url)
            let parsed = try DSN(parsing: text)
            XCTAssertEqual(parsed.description, text, url)
            XCTAssertEqual(parsed.publicKey, key)
            XCTAssertEqual(parsed.projectID, "7")
        }
    }
}
