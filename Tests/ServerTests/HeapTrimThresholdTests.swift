// `faultline serve` raises glibc's heap trim threshold before it starts (Process/HeapTrimThreshold):
// on this platform both settings must be found and accepted, or the server would silently trim its
// heaps at every commit again. (The settings then hold for the rest of this test process, as they
// do for the server's.)
import XCTest

@testable import FaultlineServer

final class HeapTrimThresholdTests: XCTestCase {
    func testTheThresholdIsAcceptedByTheCLibrary() {
        #if canImport(Glibc)
            XCTAssertTrue(HeapTrimThreshold.apply(), "mallopt(M_TRIM_THRESHOLD) was not found or refused")
        #endif
    }
}
