// How a return address becomes the address looked up, per architecture, and which architecture a
// Sentry event's frame ran on (its image's `arch`, else `contexts.device.arch`, else x86_64).
import FaultlineProtocol
import Foundation
import XCTest

final class ReturnAddressLookupTests: XCTestCase {
    func testAReturnAddressStepsBackIntoTheCallByTheArchitecturesCallLength() {
        let ret = FrameAddress.returnAddress(Address(0x4010))
        XCTAssertEqual(ret.lookupAddress(on: .x86_64), Address(0x400f), "x86_64: one byte back lands inside any call")
        XCTAssertEqual(ret.lookupAddress(on: .aarch64), Address(0x400c), "aarch64: the 4-byte bl/blr itself")
        let pc = FrameAddress.programCounter(Address(0x4010))
        for arch in CPUArchitecture.allCases { XCTAssertEqual(pc.lookupAddress(on: arch), Address(0x4010), "a pc is exact on \(arch)") }
        XCTAssertEqual(FrameAddress.returnAddress(Address(2)).lookupAddress(on: .aarch64), Address(2), "no wrap below the step")
    }

    func testELFMachineNumbersNameTheArchitectures() {
        XCTAssertEqual(CPUArchitecture(elfMachine: 62), .x86_64)
        XCTAssertEqual(CPUArchitecture(elfMachine: 183), .aarch64)
        XCTAssertNil(CPUArchitecture(elfMachine: 243), "EM_RISCV is not one the crash core runs on")
        for arch in CPUArchitecture.allCases { XCTAssertEqual(CPUArchitecture(elfMachine: arch.elfMachine), arch) }
    }

    func event(deviceArch: String?, imageArchs: [String?]) -> JSONValue {
        var images: [JSONValue] = []
        var frames: [JSONValue] = []
        for (i, arch) in imageArchs.enumerated() {
            var image: [String: JSONValue] = ["type": "elf", "code_file": .string("/m\(i)"), "image_addr": .string("0x\(i + 1)0000"), "image_size": 0x1000]
            if let arch { image["arch"] = .string(arch) }
            images.append(.object(image))
            frames.append(["instruction_addr": .string("0x\(i + 1)0100")])
        }
        var event: JSONValue = [
            "debug_meta": ["images": .array(images)],
            "exception": ["values": [["type": "SIGSEGV", "stacktrace": ["frames": .array(frames), "instruction_addr_adjustment": "all_but_first"]]]]
        ]
        if let deviceArch { event["contexts"] = ["device": ["arch": .string(deviceArch)]] }
        return event
    }

    func architectures(_ event: JSONValue) -> [CPUArchitecture] {
        let (_, stacktrace) = SentryStackTrace.crashing(in: event)
        return SentryStackTrace.frames(of: stacktrace ?? .null, images: DebugImageMap(event: event)).map(\.architecture)
    }

    func testAFrameRunsOnItsImagesArchitectureElseTheEventsElseX86_64() {
        XCTAssertEqual(architectures(event(deviceArch: nil, imageArchs: ["arm64", "arm64"])), [.aarch64, .aarch64])
        XCTAssertEqual(architectures(event(deviceArch: "arm64", imageArchs: [nil, nil])), [.aarch64, .aarch64], "the device's when images say nothing")
        XCTAssertEqual(architectures(event(deviceArch: nil, imageArchs: [nil, "arm64"])), [.aarch64, .aarch64], "an image's for the event")
        XCTAssertEqual(architectures(event(deviceArch: nil, imageArchs: [nil, nil])), [.x86_64, .x86_64], "as every event was before aarch64")
        XCTAssertEqual(architectures(event(deviceArch: "x86_64", imageArchs: ["x86_64", "x86_64"])), [.x86_64, .x86_64])
    }

    func testAnAarch64CrashEventsFramesAreAarch64() throws {
        let report = Data(
            """
            {"format":"faultline-crash","version":2,"arch":"aarch64","event_id":"0123456789abcdef0123456789abcdef",
             "signal":{"number":11,"name":"SIGSEGV","code":1,"code_name":"SEGV_MAPERR","fault_address":"0x10"},
             "registers":{"pc":"0x1000"},"frames":[{"address":"0x1000","kind":"pc"},{"address":"0x1204","kind":"return"}],
             "modules":[{"path":"/bin/p","base":"0x0","size":65536}],"context":{},"end":true}
            """.utf8)
        let event = CrashEvent.make(from: try CrashReport.parse(report))
        let (_, stacktrace) = SentryStackTrace.crashing(in: event)
        let frames = SentryStackTrace.frames(of: try XCTUnwrap(stacktrace), images: DebugImageMap(event: event))
        XCTAssertEqual(frames.map(\.architecture), [.aarch64, .aarch64])
        XCTAssertEqual(frames.compactMap { $0.address?.lookupAddress(on: $0.architecture) }, [Address(0x1200), Address(0x1000)], "caller first")
    }
}
