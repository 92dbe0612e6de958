// `faultline serve` raises glibc's heap trim threshold before it starts (Process/HeapTrimThreshold):
// on this platform the setting must be found and accepted, or the server would silently trim its
// heaps at every commit again.
import XCTest

@testable import FaultlineServer

final class HeapTrimThresholdTests: XCTestCase {
    func testTheThresholdIsAcceptedByTheCLibrary() {
        #if canImport(Glibc)
            XCTAssertTrue(HeapTrimThreshold.apply(), "mallopt(M_TRIM_THRESHOLD) was not found or refused")
        #endif
    }
}
