// The server reads each frame's architecture from the event (its image's `arch`, else
// `contexts.device.arch`) and hands it to the symbolicator wherever it looks a frame up — grouping
// and culprit, the read-time stack — while x86_64 stacks keep the keys they were stored under.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol
import FaultlineSymbolication
import Synchronization

final class FrameArchitectureTests: XCTestCase {
    static let app = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"

    /// Answers every lookup with one function and remembers what it was asked.
    final class RecordingSymbolicator: FrameSymbolicating {
        struct Asked: Hashable { var offset: UInt64; var isReturn: Bool; var architecture: CPUArchitecture }
        let asked = Mutex<[Asked]>([])
        func resolve(buildID: BuildID, modulePath: String?, offset: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture) -> SymbolicationOutcome {
            asked.withLock { $0.append(Asked(offset: offset, isReturn: isReturnAddress, architecture: architecture)) }
            return .resolved([SymbolicatedFrame(function: "settle_invoice", file: "/src/shop/invoice.c", line: 12)])
        }
        func invalidate(buildID: BuildID) {}
    }

    func event(imageArch: String?, deviceArch: String?) -> JSONValue {
        var image: [String: JSONValue] = [
            "type": "elf", "code_file": "/srv/shop/bin/shop", "image_addr": "0x10000", "image_size": 0x10000, "code_id": .string(Self.app)
        ]
        if let imageArch { image["arch"] = .string(imageArch) }
        var event: JSONValue = [
            "platform": "native",
            "debug_meta": ["images": [.object(image)]],
            "exception": [
                "values": [
                    [
                        "type": "SIGSEGV",
                        "stacktrace": [
                            "frames": [["instruction_addr": "0x10804"], ["instruction_addr": "0x10400"]], "instruction_addr_adjustment": "all_but_first"
                        ]
                    ]
                ]
            ]
        ]
        if let deviceArch { event["contexts"] = ["device": ["arch": .string(deviceArch)]] }
        return event
    }

    func testGroupingAndTheReadStackAskWithTheEventsArchitecture() {
        for (imageArch, deviceArch, expected) in [
            ("arm64", nil, CPUArchitecture.aarch64), (nil, "arm64", .aarch64), ("x86_64", nil, .x86_64), (nil, nil, .x86_64)
        ] {
            let e = event(imageArch: imageArch, deviceArch: deviceArch)
            let signature = StackExtractor.signature(of: e, grouping: .v1)
            XCTAssertEqual(signature.frames.map(\.architecture), [expected, expected])

            let grouping = RecordingSymbolicator()
            let fingerprint = Fingerprinter.fingerprint(signature, symbolicator: grouping)
            XCTAssertEqual(fingerprint.culprit, "settle_invoice (invoice.c:12)")
            XCTAssertEqual(
                Set(grouping.asked.withLock { $0 }),
                [.init(offset: 0x400, isReturn: false, architecture: expected), .init(offset: 0x804, isReturn: true, architecture: expected)])

            let reading = RecordingSymbolicator()
            _ = EventRenderer.stack(of: e, symbolicator: reading, pending: [])
            XCTAssertEqual(Set(reading.asked.withLock { $0 }.map(\.architecture)), [expected], "the read-time stack")
            XCTAssertEqual(Set(EventRenderer.lookups(of: e).map(\.architecture)), [expected], "what a read waits for")
        }
    }

    func testOnlyANonX86_64FrameCarriesItsArchitectureInTheStackKey() throws {
        let x86 = StackExtractor.signature(of: event(imageArch: "x86_64", deviceArch: nil), grouping: .v1)
        let legacy = StackExtractor.signature(of: event(imageArch: nil, deviceArch: nil), grouping: .v1)
        let arm = StackExtractor.signature(of: event(imageArch: "arm64", deviceArch: nil), grouping: .v1)
        XCTAssertEqual(x86.encoded, legacy.encoded, "x86_64 stacks keep the key they had before frames had an architecture")
        XCTAssertFalse(String(decoding: x86.encoded, as: UTF8.self).contains("\"c\""))
        XCTAssertNotEqual(arm.encoded, x86.encoded, "the same offsets on another architecture are another stack")
        XCTAssertEqual(StackSignature.decode(arm.encoded)?.frames.map(\.architecture), [.aarch64, .aarch64], "decoded as stored")
    }
}
