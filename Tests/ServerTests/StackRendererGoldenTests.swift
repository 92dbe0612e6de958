// The three renderers of a symbolicated stack (the CLI's text, the API's JSON, the issue page's
// HTML) against golden files, from one stored event and a fixed table of symbols: every outcome
// (symbolicated, inlined, symbol table only, each unresolved reason, pending, a client-resolved
// Python frame) and every role (in-app, system, Faultline's own by mark and by name).
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineSymbolication

final class StackRendererGoldenTests: XCTestCase {
    static let app = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
    static let libc = "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2"
    static let vendor = "d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3d3"
    static let preload = "e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4e4"

    /// What the symbolicator answers, by (build-id, module offset); anything else has no debug file.
    static let symbols: [String: SymbolicationOutcome] = {
        var inferred = SymbolicatedFrame(function: "crash_here", file: "/src/shop/crash.c", line: 5, column: 0)
        inferred.isInferred = true
        return [
            "\(libc)+29d90": .resolved([SymbolicatedFrame(function: "__libc_start_call_main", fromSymbolTable: true)]),
            "\(app)+1100": .resolved([SymbolicatedFrame(function: "main", file: "/src/shop/main.c", line: 10, column: 3)]),
            "\(app)+1200": .resolved([
                SymbolicatedFrame(function: "checkout_total", file: "/src/shop/cart.h", line: 12, column: 5, isInlined: true),
                SymbolicatedFrame(function: "process_order", file: "/src/shop/orders.c", line: 40, column: 9)
            ]),
            "\(vendor)+3000": .unresolved(.missingDebugFile),
            "\(app)+1300": .unresolved(.noDebugInfoForAddress),
            "\(app)+1400": .resolved([
                SymbolicatedFrame(
                    function: "Faultline.capture(_:)", mangledFunction: "$s9Faultline7captureyys5Error_pF",
                    file: "/src/Faultline/Capture.swift", line: 20, column: 9)
            ]),
            "\(app)+1480": .resolved([
                SymbolicatedFrame(
                    function: "(1) await resume partial function for Shop.fetch(id: Swift.Int) async -> ()",
                    mangledFunction: "$s4Shop5fetch2idySi_tYaFTQ0_", file: "/src/shop/Fetch.swift", line: 7, column: 5)
            ]),
            "\(preload)+500": .resolved([SymbolicatedFrame(function: "fl_handle_signal", fromSymbolTable: true)]),
            "\(app)+1500": .resolved([inferred]),
            "\(app)+1600": .resolved([SymbolicatedFrame(function: "worker_loop", file: "/src/shop/worker.c", line: 30, column: 7)]),
            "\(libc)+ea000": .unresolved(.buildIDMismatch)
        ]
    }()

    struct TableSymbolicator: FrameSymbolicating {
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            StackRendererGoldenTests.symbols["\(buildID.hex)+\(String(offset, radix: 16))"] ?? .unresolved(.missingDebugFile)
        }
        func invalidate(buildID: BuildID) {}
    }

    func event() throws -> JSONValue {
        try JSONValue.parse(try Data(contentsOf: GoldenFile.url("stack/event.json")))
    }

    /// The outermost frame is still being looked up when the server renders.
    var pending: Set<FrameLookup> { [FrameLookup(buildID: BuildID(hex: Self.libc)!, offset: 0x29d90, isReturnAddress: true, architecture: .x86_64)] }

    func testBacktraceText() throws {
        let symbolicated = EventSymbolicator.symbolicate(event: try event()) { image, address, _ in
            Self.symbols["\(image.buildID?.hex ?? "-")+\(String(address.address.value - image.base.value, radix: 16))"] ?? .unresolved(.missingDebugFile)
        }.event
        var text = "== faultline symbolicate ==\n" + BacktraceText.render(event: symbolicated)
        text += "\n== --faultline-frames ==\n" + BacktraceText.render(event: symbolicated, showFaultlineFrames: true)
        text += "\n== --crashed-only ==\n" + BacktraceText.render(event: symbolicated, crashedOnly: true)
        GoldenFile.assertMatches(text, "stack/backtrace.txt")
    }

    func testAPIStack() throws {
        let event = try event()
        let json: JSONValue = [
            "stack": .array(EventRenderer.stack(of: event, symbolicator: TableSymbolicator(), pending: pending)),
            "stack_with_faultline_frames": .array(EventRenderer.stack(of: event, symbolicator: TableSymbolicator(), pending: pending, faultlineFrames: true))
        ]
        GoldenFile.assertMatches(String(decoding: json.serialized(pretty: true), as: UTF8.self) + "\n", "stack/api-stack.json")
    }

    func testIssuePageStack() throws {
        let event = try event()
        let html =
            StackView.render(event: event, symbolicator: TableSymbolicator(), pending: pending)
            + StackView.threads(event: event, symbolicator: TableSymbolicator(), pending: [])
        // One element per line, so a change reads as a few lines of diff.
        GoldenFile.assertMatches(html.replacingOccurrences(of: "><", with: ">\n<") + "\n", "stack/stack.html")
    }
}
