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

    /// llvm-symbolizer's spelling of the forms libstdc++ prints otherwise (address mode only).
    func testLLVMPrinter() {
        func llvm(_ n: String) -> String? { Demangler.demangle(n, cxx: .llvm) }
        XCTAssertEqual(Demangler.demangle("_ZL4failPKc.constprop.0"), "fail(char const*) [clone .constprop.0]")
        XCTAssertEqual(llvm("_ZL4failPKc.constprop.0"), "fail(char const*) (.constprop.0)")
        XCTAssertEqual(llvm("_ZL7sum_big3Big.isra.0.cold"), "sum_big(Big) (.isra.0.cold)")
        XCTAssertEqual(
            llvm("_Z1fSt6vectorIS_IiSaIiEESaIS1_EE"),
            "f(std::vector<std::vector<int, std::allocator<int>>, std::allocator<std::vector<int, std::allocator<int>>>>)")
        XCTAssertEqual(llvm("_ZZ4mainENKUliE0_clEi"), "main::'lambda0'(int)::operator()(int) const")
        XCTAssertEqual(llvm("_ZZ4mainENKUlvE_clEv"), "main::'lambda'()::operator()() const")
        XCTAssertEqual(llvm("_Z1fN6HolderUt_E"), "f(Holder::'unnamed')")
        XCTAssertEqual(llvm("_Z10takes_nullDni"), "takes_null(std::nullptr_t, int)")
        XCTAssertEqual(llvm("_ZltIiEb3BoxIT_ES2_"), "bool operator<<int>(Box<int>, Box<int>)")
        // The enclosing function template's return type, which GNU leaves out of a local name.
        XCTAssertEqual(
            llvm("_ZZ9run_twiceIZ4mainEUliE_EiT_iENKUliE_clEi"),
            "int run_twice<main::'lambda'(int)>(main::'lambda'(int), int)::'lambda'(int)::operator()(int) const")
        // A Rust legacy name: dots inside a length-prefixed identifier are not a suffix.
        XCTAssertEqual(
            llvm("_ZN4core3ptr25drop_in_place$LT$a..b$GT$17h0123456789abcdefE.llvm.42"), "core::ptr::drop_in_place$LT$a..b$GT$::h0123456789abcdef (.llvm.42)")
        // An identifier holding `srSt` is not an unresolved name.
        XCTAssertEqual(llvm("_Z13readLsrStatusv"), "readLsrStatus()")
        // Text that only looks like a discriminator, with more digits than an Int holds: no trap.
        for name in ["_Z31{lambda()#99999999999999999999}v", "_Z35{unnamed type#99999999999999999999}v"] {
            XCTAssertFalse(llvm(name)?.contains("'lambda") ?? false)
            XCTAssertFalse(llvm(name)?.contains("'unnamed") ?? false)
        }
        // Refused by LLVM's parser: printed mangled, as llvm-symbolizer does.
        XCTAssertNil(llvm("_ZSt14__relocate_a_1IiiENSt9enable_ifIXsrSt24__is_bitwise_relocatableIT_vE5valueEPS2_E4typeES4_S4_S4_RSaIT0_E"))
    }

    /// Rust's legacy mangling: the `h<16 hex>` hash (of the crate's metadata: it changes with the
    /// version) is kept in printed names, as c++filt and llvm-symbolizer print them, and left out
    /// where grouping asks (`withoutRustHash`).
    func testRustLegacyHashIsKeptInNamesAndLeftOutForGrouping() {
        let name = "_ZN4core3ptr14write_volatile17he34476c044b31629E"
        let printed = Demangler.demangle(name)
        XCTAssertEqual(printed, "core::ptr::write_volatile::he34476c044b31629")
        XCTAssertEqual(Demangler.demangle(name, cxx: .llvm), printed)
        XCTAssertEqual(Demangler.withoutRustHash(printed ?? "", mangled: name), "core::ptr::write_volatile")
        let local = "_ZN6rcrash8deref_it17h0123456789abcdefE"
        XCTAssertEqual(Demangler.withoutRustHash(Demangler.demangle(local) ?? "", mangled: local), "rcrash::deref_it")
        // Not a hash: C++ names whose last component merely starts with h.
        for cxx in ["_ZN3app17hxxxxxxxxxxxxxxxxEv", "_ZN3app5hello3runEv"] {
            let d = Demangler.demangle(cxx) ?? ""
            XCTAssertEqual(Demangler.withoutRustHash(d, mangled: cxx), d, cxx)
        }
    }

    func testNotMangled() {
        XCTAssertNil(Demangler.demangle("main"))
        XCTAssertNil(Demangler.demangle("_PyEval_EvalFrameDefault"))
        XCTAssertNil(Demangler.demangle("_Znot_really"))
        XCTAssertNil(Demangler.demangle("$sgarbage!!"))
    }

    func testRustV0() {
        XCTAssertEqual(Demangler.demangle("_RNvXC1aNtB2_1SNtB2_1T1f"), "<a::S as a::T>::f")
        XCTAssertEqual(Demangler.demangle("_RNvMC1aNtB2_1S3new"), "<a::S>::new")
        XCTAssertEqual(Demangler.demangle("_RNCNCNgCs6DXkGYLi8lr_2cc5spawn00B5_"), "cc::spawn::{closure#0}::{closure#0}")
        XCTAssertEqual(Demangler.demangle("_RINvC1a1fKanc_E"), "a::f::<-12>")
        XCTAssertEqual(Demangler.demangle("_RINvC1a1fFG_KCRL0_hEuE"), "a::f::<for<'a> extern \"C\" fn(&'a u8)>")
        XCTAssertEqual(Demangler.demangle("_RNvCs_5krateu7caf_dma"), "krate::café")
        XCTAssertEqual(Demangler.demangle("_RNvC1a1f.llvm.1234"), "a::f (.llvm.1234)")
        XCTAssertEqual(Demangler.demangle("_RNvC1a1f", style: .short), "a::f")
        XCTAssertTrue(Demangler.isMangled("_RNvC1a1f"))
    }

    /// Malformed and hostile v0 names: nil (printed as they are), quickly. A backreference must
    /// point before itself; nesting and output are bounded.
    func testRustV0RejectsMalformedNames() {
        for name in ["_R", "_RNvC1a", "_RNvC1a1_", "_RINvC1a1fBs_E", "_RNvC1au3r_1f", "_RC99abc", "_RB_", "_RNvC1a1f\u{0}"] {
            XCTAssertNil(RustDemangler.demangle(name), name)
        }
        // 10,000 nested generic-argument lists: past the depth limit.
        let deep = "_R" + String(repeating: "INvC1a1f", count: 10_000) + "C1a" + String(repeating: "E", count: 10_000)
        XCTAssertNil(RustDemangler.demangle(deep))
        // Each tuple type holds the one before it twice (two backreferences): the text doubles
        // per level, 2^40 times over; the output bound stops it.
        func base62(_ n: Int) -> String {
            if n == 0 { return "_" }
            let digits = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
            var v = n - 1, out = ""
            repeat {
                out = String(digits[v % 62]) + out
                v /= 62
            } while v > 0
            return out + "_"
        }
        var body = "INvC1a1f"
        var previous = body.utf8.count
        body += "h"
        for _ in 0..<40 {
            let here = body.utf8.count
            body += "TB" + base62(previous) + "B" + base62(previous) + "E"
            previous = here
        }
        XCTAssertNil(RustDemangler.demangle("_R" + body + "E"))
        // The same at three levels is a name llvm-symbolizer prints: it must print.
        var small = "INvC1a1f"
        previous = small.utf8.count
        small += "h"
        for _ in 0..<3 {
            let here = small.utf8.count
            small += "TB" + base62(previous) + "B" + base62(previous) + "E"
            previous = here
        }
        XCTAssertEqual(RustDemangler.demangle("_R" + small + "E"), "a::f::<u8, (u8, u8), ((u8, u8), (u8, u8)), (((u8, u8), (u8, u8)), ((u8, u8), (u8, u8)))>")
    }

    /// The printing loop's byte test must admit every name the demangler would change, or a
    /// mangled name prints raw; C names it turns away skip the demangler altogether.
    func testMayBeMangledAdmitsEveryMangledPrefix() {
        func admits(_ name: String) -> Bool {
            let b = Array(name.utf8)
            return Demangler.mayBeMangled(b.first ?? 0, b.count > 1 ? b[1] : 0)
        }
        for name in [
            "$s10SubscriptO7element_2atSiSaySiG_SitF", "$S4main3fooyyF", "_$s4main3fooyyF", "_$S4main3fooyyF", "_T04main3fooyyF",
            "$e4main3fooyyF", "_$e4main3fooyyF", "_ZNK3geo3BoxIiE6scaledEi", "_ZL4failPKc.constprop.0"
        ] {
            XCTAssertTrue(Demangler.isMangled(name), name)
            XCTAssertTrue(admits(name), name)
        }
        for name in ["_PyEval_EvalFrameDefault", "main", "_start", "_", "", "__libc_start_main", "PyObject_Call"] {
            XCTAssertFalse(admits(name), name)
            XCTAssertFalse(Demangler.isMangled(name), name)
        }
    }
}
