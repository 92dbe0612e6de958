// The test harness's ports (FaultlineTestSupport/LoopbackPort.swift) against the real programs:
// a debuginfod whose port another process took first starts again on another one at once, never
// waits out a timeout or mistakes the other process for itself; a refusing port refuses and cannot
// be taken. Here because elfutils' debuginfod, this target's upstream, is the child that needs it.
import Foundation
import XCTest
import FaultlineTestSupport

final class LoopbackPortTests: XCTestCase {
    func testADebuginfodWhosePortWasTakenStartsAgainOnAnotherAtOnce() throws {
        let served = Fixtures.temporaryDirectory("debuginfod-port-taken")
        defer { try? FileManager.default.removeItem(atPath: served) }
        // Another process's server on the first port offered (ours, so the test can see it untouched).
        let taken = try ScriptedHTTPServer()
        defer { taken.stop() }
        var offered: [UInt16] = []
        let start = Date()
        guard
            let upstream = try ElfutilsDebuginfod(
                serving: served,
                candidatePorts: {
                    offered.append(offered.isEmpty ? taken.port : LoopbackPort.candidate())
                    return offered.last!
                })
        else { throw TestSupport.ShellError(command: "debuginfod", output: "not installed; tools/setup and .ci/run install it") }
        defer { upstream.stop() }
        XCTAssertLessThan(Date().timeIntervalSince(start), 10, "the lost bind was noticed from debuginfod's exit, not a timeout")
        XCTAssertEqual(offered.count, 2, "\(offered)")
        XCTAssertEqual(offered.first, taken.port)
        XCTAssertEqual(upstream.port, offered.last)
        XCTAssertTrue(LoopbackPort.listeningPorts(of: upstream.processIdentifier).contains(upstream.port))
        XCTAssertEqual(taken.connectionCount, 0, "the other server was not mistaken for debuginfod")
        XCTAssertTrue(upstream.waitUntilUp(), upstream.log)
    }

    func testADebuginfodThatLosesEveryPortGivesUpAfterFiveStarts() throws {
        let served = Fixtures.temporaryDirectory("debuginfod-port-always-taken")
        defer { try? FileManager.default.removeItem(atPath: served) }
        let taken = try ScriptedHTTPServer()
        defer { taken.stop() }
        var starts = 0
        XCTAssertThrowsError(
            try ElfutilsDebuginfod(
                serving: served,
                candidatePorts: {
                    starts += 1; return taken.port
                })
        ) { error in
            XCTAssertEqual((error as? LoopbackPort.Lost)?.port, taken.port, "\(error)")
        }
        XCTAssertEqual(starts, 5)
    }

    func testARefusingPortRefusesConnectionsAndCannotBeBoundByAnother() throws {
        let refused = try RefusingPort()
        defer { refused.close() }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = refused.port.bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        let connected = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) } }
        let connectError = errno
        XCTAssertEqual(connected, -1)
        XCTAssertEqual(connectError, ECONNREFUSED)

        // Another socket, even one asking to reuse the address, cannot have the port.
        let other = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        var one: Int32 = 1
        setsockopt(other, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(other, $0, length) } }
        let bindError = errno
        XCTAssertEqual(bound, -1)
        XCTAssertEqual(bindError, EADDRINUSE)
    }
}
