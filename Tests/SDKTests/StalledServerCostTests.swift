// Issue 30 item 4: while the server accepts the connection and never answers, an app that links
// the SDK spends no CPU waiting (FoundationNetworking's URLSession spun a core in this state; the
// SDK's sender is libcurl itself, which sleeps in poll until the answer or its timeout).
// The figure is the child's own CPU time (utime + stime in /proc/PID/stat) over a five-second
// window while it waits: CPU time, not elapsed time, so a busy machine does not change it.
import FaultlineTestSupport
import Foundation
import XCTest

final class StalledServerCostTests: XCTestCase {
    /// utime + stime of `pid`, in seconds.
    static func cpuSeconds(_ pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func testAnAppWaitingOnAStalledServerSpendsNoCPU() throws {
        let stalled = try StalledServer()
        defer { stalled.close() }
        let port = stalled.port

        let dataDir = TestSupport.makeTemporaryDirectory("stalled-server")
        defer { try? FileManager.default.removeItem(atPath: dataDir) }
        let out = dataDir + "/stdout"
        FileManager.default.createFile(atPath: out, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: TestSupport.product("faultline-crasher"))
        p.arguments = ["log-and-wait", "--data-dir", dataDir + "/data", "--dsn", "http://0123456789abcdef0123456789abcdef@127.0.0.1:\(port)/1"]
        p.environment = ProcessInfo.processInfo.environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }
        p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { p.end(with: SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline && !((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").contains("ready") { usleep(20_000) }
        // The sender is connected and waiting once the stalled socket has a connection queued.
        let connected = stalled.hasConnection(within: max(1, deadline.timeIntervalSinceNow))
        XCTAssertTrue(connected, "the SDK connected to the stalled server")
        let before = try XCTUnwrap(Self.cpuSeconds(p.processIdentifier))
        let window = Date().addingTimeInterval(5)
        while Date() < window { usleep(100_000) }  // a measurement window, not a wait for an event
        let after = try XCTUnwrap(Self.cpuSeconds(p.processIdentifier))
        // A spinning sender costs seconds here; the allowance is the SDK's own idle wake-ups (the
        // file log's writer) and clock-tick rounding, on a machine that may be busy.
        XCTAssertLessThanOrEqual(after - before, 0.25, "CPU spent over 5 s waiting on a stalled server")
    }
}
