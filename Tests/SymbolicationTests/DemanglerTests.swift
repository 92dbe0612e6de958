// Demangling through the runtimes' own demanglers, full and short forms.
import XCTest
@testable import FaultlineSymbolication

final class DemanglerTests: XCTestCase {
    func testSwift() {
        XCTAssertEqual(
            Demangler.demangle("$s10SubscriptO7element_2atSiSaySiG_SitF"),
            "SubscriptO.element(_: Swift.Array<Swift.Int>, at: Swift.Int) -> Swift.Int")
        XCTAssertEqual(Demangler.demangle("$s10SubscriptO7element_2atSiSaySiG_SitF", style: .short), "SubscriptO.element(_:at:)")
        XCTAssertEqual(Demangler.demangle("$sSayxSicigSi_Tg5", style: .short), "Swift.Array.subscript.getter")
    }

    func testCxx() {
        XCTAssertEqual(Demangler.demangle("_ZNK3geo3BoxIiE6scaledEi"), "geo::Box<int>::scaled(int) const")
        XCTAssertEqual(Demangler.demangle("_ZNK3geo3BoxIiE6scaledEi", style: .short), "geo::Box<int>::scaled")
        XCTAssertEqual(Demangler.demangle("_ZN12_GLOBAL__N_13fooEv", style: .short), "(anonymous namespace)::foo")
    }

    func testNotMangled() {
        XCTAssertNil(Demangler.demangle("main"))
        XCTAssertNil(Demangler.demangle("_PyEval_EvalFrameDefault"))
        XCTAssertNil(Demangler.demangle("_Znot_really"))
        XCTAssertNil(Demangler.demangle("$sgarbage!!"))
    }
}
