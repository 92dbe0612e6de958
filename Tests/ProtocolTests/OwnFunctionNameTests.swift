// Which symbolicated function names are Faultline's own: every form the rule names (mangled,
// demangled, a closure, specialisation or thunk of ours, the crash core's C names) is ours, and
// names that merely resemble ours (another module starting with "Faultline", the bytes elsewhere)
// are the app's. Grouping asks this of every frame, so the answer must stay the same however
// cheaply it is found.
import Foundation
import XCTest

@testable import FaultlineProtocol

final class OwnFunctionNameTests: XCTestCase {
    func testOurSymbolsInEveryFormAreOurs() {
        for name in [
            "$s9Faultline7captureyyF", "_$s9Faultline7captureyyF",
            "Faultline.capture(_:)", "static Faultline.start(dsn:)",
            "closure #1 in Faultline.capture(_:)", "closure #2 in static Faultline.start(dsn:)",
            "specialized generic specialization <Swift.Int> of Faultline.Trace.withSpan<A>(_:_:)",
            "reabstraction thunk helper for Faultline.Log.info(_:)",
            "(1) suspend resume partial function for Faultline.Trace.run()",
            "fl_handle_signal", "faultline::record_and_terminate()", "(anonymous namespace)::record_and_terminate"
        ] {
            XCTAssertTrue(FaultlineOwnFrames.isOwn(function: name, rawFunction: nil), name)
            XCTAssertTrue(FaultlineOwnFrames.isOwn(function: nil, rawFunction: name), name)
        }
    }

    func testLookAlikesAreTheApps() {
        for name in [
            "main", "crashdemo::EventLoop::exec", "$s12FaultlineApp3runyyF", "FaultlineApp.run()",
            "closure #1 in FaultlineApp.run()", "MyFaultline.capture()", "closure #1 in MyFaultline.capture()",
            "Faultline", "x in Faultline", "fl_handle_signal_wrapper", "", "é in Faultlinè.x"
        ] {
            XCTAssertFalse(FaultlineOwnFrames.isOwn(function: name, rawFunction: nil), name)
        }
        // The demangled subject of a closure is ours only when it is the module itself.
        XCTAssertTrue(FaultlineOwnFrames.isOwn(function: "main", rawFunction: "closure #1 in Faultline.capture(_:)"))
    }

    /// The crash core's C names in the list are functions the core defines: a rename in C must
    /// not leave its frames looking like the app's.
    func testEveryCrashCoreNameIsAFunctionOfTheCrashCore() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent("Sources/CFaultlineCrash")
        var source = ""
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".c") {
            source += try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        }
        for name in FaultlineOwnFrames.crashCoreFunctions where name.hasPrefix("fl_") {
            let defined = source.contains(" \(name)(") || source.contains("*\(name)(") || source.contains("\n\(name):")
            XCTAssertTrue(defined, "\(name) is not defined in Sources/CFaultlineCrash")
        }
    }
}

final class OwnModulePathTests: XCTestCase {
    /// A module is ours when its file name starts with the preload library's name, whatever the
    /// directory, trailing slashes or the bytes around it; the ASCII fast path and the
    /// Character-wise rule answer alike.
    func testThePreloadLibraryIsOursAndItsNeighboursAreNot() {
        let ours = [
            "/usr/lib/libfaultline-preload.so", "libfaultline-preload.so", "/opt/x/libfaultline-preload-cxx.so.1",
            "/opt/x/libfaultline-preload.so/", "/ü/libfaultline-preload.so", "libfaultline-preload"
        ]
        let theirs = [
            "", "/", "/usr/lib/libfaultline.so", "/libfaultline-preload.so/x", "/opt/libfaultline-preload.so/lib.so",
            "/opt/xlibfaultline-preload.so", "libfaultline-prelo", "/ü/libfaultline.so", "/libfaultline-preloäd.so"
        ]
        for path in ours { XCTAssertTrue(FaultlineOwnFrames.isOwn(modulePath: path), path) }
        for path in theirs { XCTAssertFalse(FaultlineOwnFrames.isOwn(modulePath: path), path) }
        for path in ours + theirs {
            XCTAssertEqual(FaultlineOwnFrames.isOwn(modulePath: path), PathName.last(path).hasPrefix("libfaultline-preload"), path)
        }
    }
}
