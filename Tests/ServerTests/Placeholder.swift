import XCTest
final class ServerPlaceholderTests: XCTestCase { func testBuilds() {} }
