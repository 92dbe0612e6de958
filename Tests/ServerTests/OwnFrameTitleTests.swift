// A Faultline function inlined into the app's (an SDK wrapper the optimiser folded in) leaves
// the title and culprit to the app's function, and every renderer gives each call its own role.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineSymbolication

final class OwnFrameTitleTests: XCTestCase {
    static let app = BuildID(hex: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1")!

    struct InlinedWrapper: FrameSymbolicating {
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            .resolved([
                SymbolicatedFrame(
                    function: "Faultline.capture(_:)", mangledFunction: "$s9Faultline7captureyys5Error_pF",
                    file: "/src/Faultline/Capture.swift", line: 20, isInlined: true),
                SymbolicatedFrame(function: "settleInvoice", file: "/src/shop/invoice.c", line: 12)
            ])
        }
        func invalidate(buildID: BuildID) {}
    }

    func testTheAppsFunctionNamesTheIssue() {
        let frame = StackFrame(buildID: Self.app, offset: 0x1200, isReturnAddress: false, inApp: true, module: "/srv/shop/bin/shop", clientFunction: nil)
        let fingerprint = Fingerprinter.fingerprint(StackSignature(exceptionType: "SIGSEGV", frames: [frame]), symbolicator: InlinedWrapper())
        XCTAssertEqual(fingerprint.culprit, "settleInvoice (invoice.c:12)")
        XCTAssertEqual(fingerprint.title, "SIGSEGV in settleInvoice (invoice.c:12)")
    }

    /// Standard-library code inlined into the app's (Rust's `core::ptr::write_volatile`, a C++
    /// container's accessor) leaves the culprit to the app's function that called it; with no app
    /// function in the stack it is still named.
    struct InlinedStandardLibrary: FrameSymbolicating {
        let appFunction: Bool
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            var frames = [
                SymbolicatedFrame(function: "core::ptr::write_volatile<i32>", file: "/rustc/library/core/src/ptr/mod.rs", line: 1525, isInlined: true),
                SymbolicatedFrame(
                    function: "void std::vector<int>::push_back(int const&)", file: "/usr/include/c++/12/bits/stl_vector.h", line: 1280, isInlined: true)
            ]
            if appFunction { frames.append(SymbolicatedFrame(function: "rcrash::deref_it", file: "/src/rcrash/src/main.rs", line: 3)) }
            return .resolved(frames)
        }
        func invalidate(buildID: BuildID) {}
    }

    func testTheAppsCallerNamesTheIssueRatherThanInlinedStandardLibraryCode() {
        let frame = StackFrame(buildID: Self.app, offset: 0x1200, isReturnAddress: false, inApp: true, module: "/srv/rcrash", clientFunction: nil)
        let signature = StackSignature(exceptionType: "SIGSEGV", frames: [frame])
        XCTAssertEqual(Fingerprinter.fingerprint(signature, symbolicator: InlinedStandardLibrary(appFunction: true)).culprit, "rcrash::deref_it (main.rs:3)")
        XCTAssertEqual(
            Fingerprinter.fingerprint(signature, symbolicator: InlinedStandardLibrary(appFunction: false)).culprit,
            "core::ptr::write_volatile<i32> (mod.rs:1525)", "only library code: it is named")
        XCTAssertTrue(Fingerprinter.isStandardLibrary("void std::vector<int>::push_back(int const&)"))
        XCTAssertFalse(Fingerprinter.isStandardLibrary("parse(std::string const&)"), "an app function taking a std type")
    }

    /// A C++ function names the issue without its signature; the hash keeps the full name.
    struct CxxMethod: FrameSymbolicating {
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            let mangled = "_ZN2ns5CacheIiE3getERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
            return .resolved([
                SymbolicatedFrame(
                    function: "ns::Cache<int>::get(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
                    mangledFunction: mangled, file: "/src/cache.cpp", line: 41)
            ])
        }
        func invalidate(buildID: BuildID) {}
    }

    func testACxxFunctionNamesTheIssueWithoutItsSignature() {
        let frame = StackFrame(buildID: Self.app, offset: 0x1200, isReturnAddress: false, inApp: true, module: "/srv/cache", clientFunction: nil)
        let fingerprint = Fingerprinter.fingerprint(StackSignature(exceptionType: "SIGSEGV", frames: [frame]), symbolicator: CxxMethod())
        XCTAssertEqual(fingerprint.title, "SIGSEGV in ns::Cache<int>::get (cache.cpp:41)")
    }

    /// A Rust function in two releases: legacy mangling gives it another `h<hash>` each time.
    struct RustFunction: FrameSymbolicating {
        let hash: String
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            .resolved([
                SymbolicatedFrame(
                    function: "rcrash::deref_it::h\(hash)", mangledFunction: "_ZN6rcrash8deref_it17h\(hash)E", file: "/src/rcrash/src/main.rs", line: 3)
            ])
        }
        func invalidate(buildID: BuildID) {}
    }

    /// Under grouping rules 3 the hash is left out, so a new release keeps its Rust issues; under
    /// earlier rules nothing changes (an upgrade regroups no one's issues).
    func testRustHashesLeaveGroupingOnlyUnderRulesThree() {
        let frame = StackFrame(buildID: Self.app, offset: 0x1200, isReturnAddress: false, inApp: true, module: "/srv/rcrash", clientFunction: nil)
        var signature = StackSignature(exceptionType: "SIGSEGV", frames: [frame])
        let (v010, v012) = (RustFunction(hash: "e34476c044b31629"), RustFunction(hash: "c3679e3662a62b88"))
        XCTAssertNotEqual(Fingerprinter.fingerprint(signature, symbolicator: v010).hash, Fingerprinter.fingerprint(signature, symbolicator: v012).hash)
        signature.dropsRustHashes = true
        let a = Fingerprinter.fingerprint(signature, symbolicator: v010)
        XCTAssertEqual(a.hash, Fingerprinter.fingerprint(signature, symbolicator: v012).hash)
        XCTAssertEqual(a.title, "SIGSEGV in rcrash::deref_it (main.rs:3)")
        XCTAssertEqual(StackSignature.decode(signature.encoded)?.dropsRustHashes, true, "kept with the stored stack, for regrouping")
    }

    /// A long message shortens before the culprit does: the list still says where it crashed.
    func testAShortenedTitleKeepsItsCulprit() {
        let culprit = "Shop.Ledger.reconcile(entries:) (Ledger.swift:88)"
        let title = "Fatal error: " + String(repeating: "the ledger did not balance ", count: 5) + "in " + culprit
        let shown = HTML.clipTitle(title, culprit: culprit, 100)
        XCTAssertEqual(shown.count, 100)
        XCTAssertTrue(shown.hasSuffix("… in " + culprit), shown)
        XCTAssertEqual(HTML.clipTitle("SIGSEGV in main", culprit: "main", 100), "SIGSEGV in main", "short titles stay whole")
        XCTAssertEqual(HTML.clipTitle(title, culprit: "elsewhere", 20).count, 20, "a title not ending in its culprit is cut at the end")
    }

    func testEachInlinedCallHasItsOwnRole() {
        let frame = StackFrame(buildID: Self.app, offset: 0x1200, isReturnAddress: false, inApp: true, module: "/srv/shop/bin/shop", clientFunction: nil)
        let stack = ReadTimeStack.build([(frame, [:])], symbolicator: InlinedWrapper(), pending: [])
        XCTAssertEqual(stack.frames.map(\.role), [.faultline, .inApp])
        XCTAssertEqual(stack.physicalFrames.count, 1)
        let api = EventRenderer.json(stack, faultlineFrames: false)
        XCTAssertEqual(api.compactMap { $0["function"]?.stringValue }, ["settleInvoice"], "the API leaves the wrapper out")
        XCTAssertTrue(StackView.render(stack).contains("<div class=\"frame inapp crashed\">"), "the address is the app's on the page")
    }
}
