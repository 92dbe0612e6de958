import XCTest
final class CrashCapturePlaceholderTests: XCTestCase { func testBuilds() {} }
