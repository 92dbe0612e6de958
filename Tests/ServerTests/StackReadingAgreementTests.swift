// The CLI (`faultline symbolicate` → EventSymbolicator) and the server (grouping and rendering →
// StackExtractor) read the same frames out of the same Sentry event: same image, same module
// offset, same program-counter/return-address decision — including images with image_size 0 and
// addresses written as whole-number doubles.
import Foundation
import XCTest
import FaultlineProtocol
import FaultlineServer
import FaultlineSymbolication

final class StackReadingAgreementTests: XCTestCase {
    struct Read: Equatable, CustomStringConvertible {
        var module: String?
        var offset: UInt64?
        var isReturn: Bool?
        var description: String { "\(module ?? "-") +\(offset.map { String($0, radix: 16) } ?? "-") \(isReturn.map { $0 ? "ret" : "pc" } ?? "-")" }
    }

    static let buildA = "0a" + String(repeating: "1", count: 38)
    static let buildB = "0b" + String(repeating: "2", count: 38)

    /// Images: A (size 0: up to B), B (a size, written as a whole-number double), C (last, size 0),
    /// D without a build-id. Frames caller-first, the innermost last.
    static func event(adjustment: String?) -> JSONValue {
        let frames: [JSONValue] = [
            ["instruction_addr": "0x1010"],  // A
            ["instruction_addr": .double(0x1068)],  // A, as a whole-number double
            ["instruction_addr": "0x5010"],  // B
            ["instruction_addr": "0x5020", "image_addr": "0x5000"],  // B, named by the frame
            ["instruction_addr": "0x6500"],  // after B's end: no image
            ["instruction_addr": "0x0", "function": "<3 frames omitted>"],  // no address
            ["instruction_addr": .int(0x20010)],  // D
            ["instruction_addr": "0x9100"],  // C (last image, size 0)
            ["instruction_addr": "0x1fff", "data": ["faultline_inlined": true]],  // added by a symbolicator: not read
            ["instruction_addr": "0x4ff0"]  // A (size 0, below B)
        ]
        var st: [String: JSONValue] = ["frames": .array(frames)]
        if let adjustment { st["instruction_addr_adjustment"] = .string(adjustment) }
        return [
            "event_id": "0123456789abcdef0123456789abcdef", "timestamp": .double(1_700_000_000), "platform": "native",
            "exception": ["values": [["type": "SIGSEGV", "stacktrace": .object(st)]]],
            "debug_meta": [
                "images": [
                    ["type": "elf", "code_file": "/app/b.so", "image_addr": "0x5000", "image_size": .double(4096), "code_id": .string(buildB)],
                    ["type": "elf", "code_file": "/app/a", "image_addr": "0x1000", "image_size": 0, "code_id": .string(buildA)],
                    ["type": "elf", "code_file": "/app/c.so", "image_addr": "0x9000", "image_size": 0],
                    ["type": "elf", "code_file": "/app/d.so", "image_addr": "0x20000", "image_size": "0x100"]
                ]
            ]
        ]
    }

    /// Caller-first, as the CLI walks them.
    func readByCLI(_ event: JSONValue) -> [Read] {
        var reads: [Read] = []
        let (out, _, _) = EventSymbolicator.symbolicate(event: event) { image, address, _ in
            reads.append(Read(module: image.codeFile, offset: address.address.value - image.base.value, isReturn: address.isReturnAddress))
            return .unresolved(.missingDebugFile)
        }
        // Frames the lookup never saw: no address, or in no image.
        var all: [Read] = []
        var next = reads.makeIterator()
        for f in out["exception"]?["values"]?[0]?["stacktrace"]?["frames"]?.arrayValue ?? [] {
            if f["data"]?["symbolicator_status"]?.stringValue == UnresolvedReason.missingDebugFile.rawValue {
                all.append(next.next()!)
            } else {
                all.append(Read(module: nil, offset: nil, isReturn: nil))
            }
        }
        return all
    }

    /// Reversed from the server's innermost-first order.
    func readByServer(_ event: JSONValue) -> [Read] {
        StackExtractor.frames(of: event).frames.reversed().map { f in
            f.module == nil ? Read(module: nil, offset: nil, isReturn: nil) : Read(module: f.module, offset: f.offset, isReturn: f.isReturnAddress)
        }
    }

    func testCLIAndServerReadTheSameFrames() throws {
        for adjustment in [nil, "auto", "all_but_first", "all", "none"] {
            // Through the wire: written by the one writer, read by the one parser.
            let event = try JSONValue.parse(Self.event(adjustment: adjustment).serialized())
            let cli = readByCLI(event), server = readByServer(event)
            XCTAssertEqual(cli, server, "adjustment \(adjustment ?? "absent")")
            let innermostIsPC = adjustment != "all"
            let expected: [Read] = [
                Read(module: "/app/a", offset: 0x10, isReturn: adjustment != "none"),
                Read(module: "/app/a", offset: 0x68, isReturn: adjustment != "none"),
                Read(module: "/app/b.so", offset: 0x10, isReturn: adjustment != "none"),
                Read(module: "/app/b.so", offset: 0x20, isReturn: adjustment != "none"),
                Read(module: nil, offset: nil, isReturn: nil),
                Read(module: nil, offset: nil, isReturn: nil),
                Read(module: "/app/d.so", offset: 0x10, isReturn: adjustment != "none"),
                Read(module: "/app/c.so", offset: 0x100, isReturn: adjustment != "none"),
                Read(module: "/app/a", offset: 0x3ff0, isReturn: !innermostIsPC)
            ]
            XCTAssertEqual(server, expected, "adjustment \(adjustment ?? "absent")")
        }
        XCTAssertEqual(StackExtractor.frames(of: Self.event(adjustment: nil)).frames.first?.buildID?.hex, Self.buildA)
    }
}
