import XCTest
final class SymbolicationPlaceholderTests: XCTestCase { func testBuilds() {} }
