// Relay's rule for release names, read byte by byte for ASCII names and by Unicode scalars otherwise.
import XCTest

@testable import FaultlineServer

final class ReleaseNameTests: XCTestCase {
    func testReleaseNamesAreRefusedAsRelayRefusesThem() {
        for valid in ["1.0", "myapp@1.4+build.7", "café@2", "v1 beta", String(repeating: "a", count: 200), "..."] {
            XCTAssertTrue(ReleaseName.isValid(valid), valid)
        }
        for invalid in [
            "", ".", "..", "latest", "a/b", "a\nb", "a\tb", "a\u{7F}b", "a\u{85}b", "é\u{0}", "ü/", String(repeating: "a", count: 201),
            String(repeating: "é", count: 101)
        ] {
            XCTAssertFalse(ReleaseName.isValid(invalid), invalid.debugDescription)
        }
    }
}
