// A process with more modules than the report's table holds (1,024: 1,100 plugins loaded) still
// has the crashing plugin and libc in its report, the frames resolve to modules, and the report
// and the event say how many modules were left out (they were dropped silently, the crashing
// library and libc among them, as modules are listed in address order).
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineTestSupport

final class ModuleTableCapTests: XCTestCase {
    func testACrashAmongElevenHundredPluginsKeepsItsOwnModulesAndCountsTheRest() throws {
        let dir = TestSupport.makeTemporaryDirectory("faultline-many-modules")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fixtures = TestSupport.repositoryRoot().appendingPathComponent("Fixtures/CrashPrograms").path
        _ = try TestSupport.shell("cc -g -O1 -shared -fPIC '\(fixtures)/plugin.c' -o '\(dir)/plugin.so'")
        _ = try TestSupport.shell("cc -g -O1 '\(fixtures)/many_libraries.c' -o '\(dir)/many_libraries' -ldl")
        let plugins = dir + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        for i in 1...1100 { try FileManager.default.copyItem(atPath: dir + "/plugin.so", toPath: plugins + "/libplugin-\(i).so") }

        let crashes = dir + "/crashes"
        let o = try TestSupport.run(
            dir + "/many_libraries", [plugins, "1100"], environment: ["LD_PRELOAD": try PreloadLibrary.path(), "FAULTLINE_CRASH_DIR": crashes],
            timeout: 120)
        XCTAssertEqual(o.signal, SIGSEGV, o.description)
        let reports = TestSupport.files(in: crashes, suffix: ".crash.json")
        XCTAssertEqual(reports.count, 1, o.description)
        let r = try CrashReport.parse(try Data(contentsOf: URL(fileURLWithPath: try XCTUnwrap(reports.first))))
        XCTAssertLessThanOrEqual(r.modules.count, 1024)
        XCTAssertGreaterThan(r.modulesOmitted, 0)
        XCTAssertGreaterThanOrEqual(r.modules.count + r.modulesOmitted, 1100, "every plugin is listed or counted")
        XCTAssertTrue(r.modules.contains { $0.path == plugins + "/libplugin-1.so" }, "the crashing plugin is in the table")
        XCTAssertTrue(r.modules.contains { ($0.path as NSString).lastPathComponent.hasPrefix("libc.so") }, "libc is in the table")
        for (i, f) in r.frames.enumerated() {
            XCTAssertNotNil(r.module(containing: f.address), "frame \(i) lies in a listed module")
        }
        XCTAssertEqual(CrashEvent.make(from: r)["extra"]?["modules_omitted"]?.int64Value, Int64(r.modulesOmitted))
    }
}
