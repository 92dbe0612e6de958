import XCTest
final class SDKPlaceholderTests: XCTestCase { func testBuilds() {} }
