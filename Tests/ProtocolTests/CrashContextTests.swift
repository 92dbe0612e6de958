// A crash context's JSON: the SDK writes `machine` and `trace` field by field at start (no JSON
// values made on the app's thread); what it writes must be what JSONValue writes for the same
// object, with or without other contexts beside the machine's, and must read back the same.
import FaultlineProtocol
import Foundation
import XCTest

final class CrashContextTests: XCTestCase {
    func context(extraContexts: [String: JSONValue], spanID: String?) -> CrashContext {
        var c = CrashContext()
        c.machine = .init(kernelVersion: "6.1.0-\"quoted\"\\", architecture: "x86_64")
        c.contexts = extraContexts
        c.release = "app@1"
        c.trace = .init(traceID: "0123456789abcdef0123456789abcdef", spanID: spanID)
        return c
    }

    func testTheHandWrittenMachineAndTraceAreWhatJSONValueWrites() throws {
        let cases: [([String: JSONValue], String?)] = [
            ([:], "0123456789abcdef"), ([:], nil),
            // Another context beside the machine's, and one the machine's replaces.
            (["app": ["app_name": "a"], "os": ["name": "Other"]], "0123456789abcdef")
        ]
        for (extra, span) in cases {
            let c = context(extraContexts: extra, spanID: span)
            let bytes = c.jsonBytes
            let parsed = try JSONValue.parse(Data(bytes))
            XCTAssertEqual(Data(bytes), parsed.serialized(), String(decoding: bytes, as: UTF8.self))
            XCTAssertEqual(parsed, c.json)
            XCTAssertEqual(parsed["contexts"]?["os"]?["kernel_version"]?.stringValue, "6.1.0-\"quoted\"\\")
            XCTAssertEqual(parsed["contexts"]?["os"]?["name"]?.stringValue, "Linux")
            XCTAssertEqual(parsed["contexts"]?["app"], extra["app"])
            XCTAssertEqual(parsed["trace"]?["span_id"]?.stringValue, span)

            // Read back, the machine's contexts are in `contexts`: the same object, the same bytes.
            let read = CrashContext(json: parsed)
            XCTAssertNil(read.machine)
            XCTAssertEqual(read.allContexts, c.allContexts)
            XCTAssertEqual(read.architecture, "x86_64")
            XCTAssertEqual(read.jsonBytes, bytes)
        }
    }
}
