// Ingest parses an event only as far as its readers read it (EnvelopeDecoder.eventSelection). Every
// reader ingest runs must answer on that partial tree exactly as on the whole event: a member the
// selection leaves out that some reader needs (a context, a frame field) would change an issue,
// an install or a trace without any error.
import Foundation
import XCTest
@testable import FaultlineServer
import FaultlineProtocol

final class EventSelectionTests: XCTestCase {
    /// Events as SDKs send them, with everything the selection drops and everything it keeps.
    var events: [JSONValue] {
        let registers: JSONValue = ["rip": "0x00007f3a1c0012f0", "rsp": "0x00007ffd5a1b2c00", "rbp": "0x0000000000000000"]
        let nativeFrames: JSONValue = [
            ["instruction_addr": "0x55d0c0a01234", "image_addr": "0x55d0c0a00000", "function": "main", "in_app": true, "trust": "cfi"],
            ["instruction_addr": "0x7f3a1c0012f0", "image_addr": "0x7f3a1c000000", "function": "crash_here", "trust": "context"]
        ]
        let images: JSONValue = [
            [
                "type": "elf", "code_id": "0123456789abcdef0123456789abcdef01234567", "debug_id": "67452301-ab89-efcd-0123-456789abcdef",
                "code_file": "/opt/app/bin/app", "image_addr": "0x55d0c0a00000", "image_size": 4_194_304, "arch": "x86_64"
            ],
            [
                "type": "elf", "code_id": "89abcdef0123456789abcdef0123456789abcdef", "debug_id": "efcdab89-6745-2301-89ab-cdef01234567",
                "code_file": "/usr/lib/x86_64-linux-gnu/libc.so.6", "image_addr": "0x7f3a1c000000", "image_size": 2_097_152
            ]
        ]
        let contexts: JSONValue = [
            "os": ["type": "os", "name": "Linux", "version": "6.1.0", "kernel_version": "6.1.0-18-amd64"],
            "device": [
                "type": "device", "arch": "aarch64", "device_unique_identifier": "device-42", "model": "Standard PC (Q35 + ICH9)",
                "memory_size": 25_275_711_488
            ],
            "app": ["type": "app", "app_identifier": "com.example.app", "app_version": "4.2.1"],
            "runtime": ["type": "runtime", "name": "glibc", "version": "2.36"],
            "trace": ["type": "trace", "trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331"],
            "custom": ["anything": ["nested": [1, 2, 3]]]
        ]
        let breadcrumbs: JSONValue = ["values": [["timestamp": 1_733_380_000.5, "category": "http", "message": "GET /sync -> 200"]]]
        let native: JSONValue = [
            "event_id": "0123456789abcdef0123456789abcdef", "timestamp": 1_733_380_001.25, "platform": "native", "level": "fatal",
            "release": "app@4.2.1", "environment": "staging", "tags": ["renderer": "vulkan", "api_token": "s3cr3t", "channel": "beta"],
            "user": ["id": "u-1", "ip_address": "{{auto}}"],
            "exception": [
                "values": [
                    [
                        "type": "SIGSEGV", "value": "Segfault at address 0x10", "thread_id": 4711,
                        "mechanism": ["type": "signalhandler", "handled": false, "meta": ["signal": ["number": 11, "name": "SIGSEGV"]]],
                        "stacktrace": ["frames": nativeFrames, "registers": registers]
                    ]
                ]
            ],
            "threads": [
                "values": [
                    ["id": 4711, "crashed": true, "current": true, "stacktrace": ["frames": nativeFrames, "registers": registers]],
                    ["id": 4712, "name": "io"]
                ]
            ],
            "debug_meta": ["images": images], "contexts": contexts, "breadcrumbs": breadcrumbs,
            "extra": ["uptime_s": 1312], "sdk": ["name": "sentry.native", "version": "0.7.17"]
        ]
        let python: JSONValue = [
            "event_id": "fedcba9876543210fedcba9876543210", "timestamp": "2026-12-05T05:00:00.123Z", "platform": "python", "level": "error",
            "exception": [
                "values": [
                    [
                        "type": "KeyError", "value": "'user'", "module": "builtins",
                        "stacktrace": [
                            "frames": [
                                [
                                    "function": "handle", "module": "app.views", "filename": "app/views.py", "lineno": 42, "in_app": true,
                                    "context_line": "    return data['user']", "vars": ["data": "{}"]
                                ]
                            ]
                        ]
                    ]
                ]
            ],
            "request": ["url": "https://example.test/x", "env": ["REMOTE_ADDR": "{{auto}}"], "headers": [["Authorization", "Bearer abc"]]],
            "contexts": ["trace": ["trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7"]],
            "breadcrumbs": ["values": []], "logentry": ["message": "failed %s", "params": ["x"]], "fingerprint": ["{{ default }}", "views"]
        ]
        // Other forms: sentry-go's bare lists, one exception object, a top-level stacktrace, legacy names.
        let go: JSONValue = [
            "event_id": "00112233445566778899aabbccddeeff", "platform": "go", "level": "error",
            "exception": [["type": "*errors.errorString", "value": "boom", "stacktrace": ["frames": [["function": "main.run", "module": "main"]]]]],
            "threads": [["id": 1, "current": true, "stacktrace": ["frames": [["function": "main.main"]], "registers": registers]]],
            "breadcrumbs": [["message": "one"]]
        ]
        let single: JSONValue = [
            "platform": "javascript", "exception": ["type": "TypeError", "value": "x is undefined", "stacktrace": ["frames": []]],
            "stacktrace": ["frames": [["function": "onClick", "filename": "https://cdn.example/app.3f2a.js", "lineno": 10]], "registers": registers],
            "sentry.interfaces.User": ["id": 7], "breadcrumbs": ["message": "single crumb"], "contexts": "not an object"
        ]
        let message: JSONValue = ["message": "disk full", "level": "warning", "contexts": ["device": "weird"], "threads": ["values": "weird"]]
        // The install named only by the device, the app only by its context.
        let device: JSONValue = [
            "message": "started", "contexts": ["device": ["device_unique_identifier": "device-7", "arch": "x86_64"], "app": ["app_identifier": "org.example"]]
        ]
        // The address rules' inputs: a browser event that says never, one that asks, a REMOTE_ADDR.
        let never: JSONValue = [
            "platform": "javascript", "message": "n", "sdk": ["name": "sentry.javascript.browser", "settings": ["infer_ip": "never"]],
            "user": ["ip_address": "{{auto}}"]
        ]
        let asks: JSONValue = ["platform": "node", "message": "a", "sdk": ["settings": ["infer_ip": "auto", "other": 1]]]
        let remote: JSONValue = [
            "platform": "python", "message": "r", "request": ["method": "GET", "env": ["REMOTE_ADDR": "10.1.2.3", "SERVER_NAME": "x"]]
        ]
        return [native, python, go, single, message, device, never, asks, remote]
    }

    func testEveryIngestReaderAnswersOnTheSelectionAsOnTheWholeEvent() throws {
        let request = HTTPRequest(method: "POST", path: "/api/1/envelope/", headers: ["x-faultline-app-id": "header-app"], clientAddress: "127.0.0.1")
        for (n, event) in events.enumerated() {
            let bytes = event.serialized()
            let whole = try JSONParser.parse(bytes)
            let part = try JSONParser.parseObject(bytes, selecting: EnvelopeDecoder.eventSelection)
            XCTAssertLessThan(part.serialized().count, whole.serialized().count + 1, "event \(n)")
            XCTAssertEqual(EventFields.installID(event: part, request: request), EventFields.installID(event: whole, request: request), "event \(n)")
            XCTAssertEqual(EventFields.appID(event: part, request: request), EventFields.appID(event: whole, request: request), "event \(n)")
            XCTAssertEqual(EventFields.operatingSystem(part), EventFields.operatingSystem(whole), "event \(n)")
            XCTAssertEqual(EventFields.environment(part), EventFields.environment(whole), "event \(n)")
            XCTAssertEqual(EventFields.tags(part), EventFields.tags(whole), "event \(n)")
            XCTAssertEqual(
                EventFields.eventTimestamp(part["timestamp"], received: 1_733_380_100), EventFields.eventTimestamp(whole["timestamp"], received: 1_733_380_100))
            XCTAssertEqual(TransactionIngest.traceContext(of: part)?.traceID, TransactionIngest.traceContext(of: whole)?.traceID, "event \(n)")
            XCTAssertEqual(TransactionIngest.traceContext(of: part)?.spanID, TransactionIngest.traceContext(of: whole)?.spanID, "event \(n)")
            for grouping in GroupingConfig.allCases {
                XCTAssertEqual(StackExtractor.signature(of: part, grouping: grouping), StackExtractor.signature(of: whole, grouping: grouping), "event \(n)")
            }
            XCTAssertEqual(FrameVariables.hasVariables(part), FrameVariables.hasVariables(whole), "event \(n)")
            XCTAssertEqual(SentryValues.needsNormalising(part), SentryValues.needsNormalising(whole), "event \(n)")
            XCTAssertEqual(DebugImageMap(event: part).architecture, DebugImageMap(event: whole).architecture, "event \(n)")
            XCTAssertEqual(
                InferredIPAddress.addressToKeep(for: part, clientAddress: "198.51.100.7"),
                InferredIPAddress.addressToKeep(for: whole, clientAddress: "198.51.100.7"), "event \(n)")
        }
        // The selection did leave things out (else this test proves nothing about it).
        let native = try JSONParser.parseObject(events[0].serialized(), selecting: EnvelopeDecoder.eventSelection)
        XCTAssertNil(native["exception"]?["values"]?[0]?["stacktrace"]?["registers"])
        XCTAssertNil(native["contexts"]?["runtime"])
        XCTAssertEqual(native["breadcrumbs"]?["values"], .null)
        XCTAssertNil(native["extra"])
    }
}
