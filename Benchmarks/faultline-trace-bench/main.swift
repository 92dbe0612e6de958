// Tracing benchmark (run through tools/bench-traces): the calling thread's cost of
// startSpan+end and of traceparent(), and server ingest of transactions with 20 spans against
// event ingest measured the same way in the same run.
import Faultline
import FaultlineProtocol
import FaultlineServer
import Foundation
import Synchronization

func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Median per-operation nanoseconds over `batches` batches of `perBatch` operations.
func median(batches: Int = 200, perBatch: Int = 100, _ op: () -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<batches {
        let t0 = nowNanoseconds()
        for _ in 0..<perBatch { op() }
        samples.append(Double(nowNanoseconds() - t0) / Double(perBatch))
    }
    samples.sort()
    return samples[samples.count / 2]
}

let args = CommandLine.arguments
let seconds = Double(args.firstIndex(of: "--seconds").map { args[$0 + 1] } ?? "5") ?? 5
let clients = Int(args.firstIndex(of: "--clients").map { args[$0 + 1] } ?? "4") ?? 4

// MARK: SDK (started, no DSN: transactions are written to the outbox like in an app)
let sdkDir = NSTemporaryDirectory() + "faultline-trace-bench-\(getpid())"
var options = Options(release: "bench@1", dataDirectory: sdkDir)
options.captureCrashes = false
options.flushAtExit = false
Faultline.start(options)
var results: [String: Double] = [:]
Trace.withSpan("bench-root") { _ in
    // Children of one transaction; the recorder caps it at 1000, beyond that each end is counted.
    results["start_end_child_ns"] = median(batches: 9, perBatch: 100) { Trace.startSpan("child", operation: "db.query").end() }
}
results["start_end_unsampled_ns"] = Trace.withTraceparent("00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-00") {
    median { Trace.startSpan("child").end() }
}
results["with_span_closure_ns"] = Trace.withTraceparent("00-5c1f0e3a9b7d4e2f8a6c3b1d0e9f7a24-a1b2c3d4e5f60718-00") {
    median { Trace.withSpan("child") { _ in } }
}
var sink = 0
results["traceparent_ns"] = Trace.withSpan("tp") { _ in median { sink &+= Trace.traceparent().utf8.count } }
results["traceparent_outside_ns"] = median { sink &+= Trace.traceparent().utf8.count }
// Roots: each end hands a whole transaction to the sender queue.
results["start_end_root_ns"] = median(batches: 50, perBatch: 20) { Trace.startSpan("root").end() }
try? FileManager.default.removeItem(atPath: sdkDir)

// MARK: Server ingest
let serverDir = NSTemporaryDirectory() + "faultline-trace-bench-server-\(getpid())"
var config = ServerConfiguration(dataDirectory: serverDir)
config.port = 0
config.limits.eventsPerInstall = 0
let server = try Server(config: config)
try server.start()
let boot = server.bootstrap!
let port = server.port
let key = boot.publicKey.value
let project = boot.project.id

func hex(_ n: Int) -> String { (0..<n).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined() }

func transactionBody() -> Data {
    let t = Date().timeIntervalSince1970, trace = hex(32), root = hex(16), eventID = hex(32)
    let spans: [JSONValue] = (0..<20).map { i in
        [
            "trace_id": .string(trace), "span_id": .string(hex(16)), "parent_span_id": .string(root), "op": "db.query",
            "description": .string("SELECT * FROM t WHERE id = \(i)"), "start_timestamp": .double(t + Double(i) * 0.001),
            "timestamp": .double(t + Double(i) * 0.001 + 0.0005), "status": "ok", "data": ["db.system": "sqlite"]
        ]
    }
    let p: JSONValue = [
        "type": "transaction", "event_id": .string(eventID), "transaction": "GET /checkout", "platform": "native",
        "start_timestamp": .double(t), "timestamp": .double(t + 0.05),
        "contexts": ["trace": ["trace_id": .string(trace), "span_id": .string(root), "op": "http.server", "status": "ok"]],
        "spans": .array(spans)
    ]
    return Envelope(header: ["event_id": .string(eventID)], items: [Envelope.Item(type: "transaction", payload: p.serialized())]).serialized()
}

func eventBody() -> Data {
    let eventID = hex(32)
    let frames: [JSONValue] = (0..<30).map { i in
        ["instruction_addr": .string(String(format: "0x%llx", 0x5555_0000_1000 + i * 0x40)), "package": "/usr/bin/app"]
    }
    let e: JSONValue = [
        "event_id": .string(eventID), "timestamp": .double(Date().timeIntervalSince1970), "platform": "native", "level": "error",
        "exception": ["values": [["type": "SIGSEGV", "value": "Segfault", "stacktrace": ["frames": .array(frames)]]]],
        "debug_meta": [
            "images": [
                [
                    "type": "elf", "code_file": "/usr/bin/app", "code_id": "f1c3bcc0279865fe3058404b2831d9e64135386c",
                    "image_addr": "0x555500000000", "image_size": 1048576
                ]
            ]
        ],
        "contexts": ["trace": ["trace_id": .string(hex(32)), "span_id": .string(hex(16))]]
    ]
    return Envelope(header: ["event_id": .string(eventID)], items: [Envelope.Item(type: "event", payload: e.serialized())]).serialized()
}

/// One POST over a fresh connection; true on 200.
func post(_ body: Data) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = port.bigEndian
    let ok = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard ok == 0 else { return false }
    let head =
        "POST /api/\(project)/envelope/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/x-sentry-envelope\r\n"
        + "X-Sentry-Auth: Sentry sentry_version=7, sentry_key=\(key)\r\nContent-Length: \(body.count)\r\n\r\n"
    let request = Data(head.utf8) + body
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var buf = [UInt8](repeating: 0, count: 256)
    let n = recv(fd, &buf, buf.count, 0)
    return n > 12 && String(decoding: buf[9..<12], as: UTF8.self) == "200"
}

/// Accepted envelopes per second with `clients` closed-loop senders.
func ingestRate(_ make: @escaping @Sendable () -> Data) -> Double {
    let bodies = (0..<2000).map { _ in make() }
    let accepted = Atomic<Int>(0), failed = Atomic<Int>(0)
    let deadline = nowNanoseconds() + UInt64(seconds * 1e9)
    let group = DispatchGroup()
    for c in 0..<clients {
        group.enter()
        Thread {
            var i = c
            while nowNanoseconds() < deadline {
                if post(bodies[i % bodies.count]) { accepted.add(1, ordering: .relaxed) } else { failed.add(1, ordering: .relaxed) }
                i += clients
            }
            group.leave()
        }.start()
    }
    group.wait()
    if failed.load(ordering: .relaxed) > 0 { print("  (\(failed.load(ordering: .relaxed)) requests failed)") }
    return Double(accepted.load(ordering: .relaxed)) / seconds
}

let events = ingestRate(eventBody)
let transactions = ingestRate(transactionBody)
server.stop()
try? FileManager.default.removeItem(atPath: serverDir)

func f(_ v: Double) -> String { String(format: "%.0f", v) }
print("SDK, calling thread (median per operation):")
print("  startSpan+end, child of a sampled transaction: \(f(results["start_end_child_ns"]!)) ns   (goal < 2000)")
print("  startSpan+end, unsampled:                      \(f(results["start_end_unsampled_ns"]!)) ns")
print("  withSpan { } closure, unsampled:               \(f(results["with_span_closure_ns"]!)) ns")
print("  startSpan+end of a root (hands off a transaction): \(f(results["start_end_root_ns"]!)) ns")
print("  traceparent() in a span:                       \(f(results["traceparent_ns"]!)) ns   (goal < 200)")
print("  traceparent() outside a trace:                 \(f(results["traceparent_outside_ns"]!)) ns")
print("Server ingest, \(clients) clients, \(f(seconds)) s each, durability full, one connection per request:")
print("  events:                         \(f(events)) events/s")
print("  transactions with 20 spans:     \(f(transactions)) transactions/s = \(f(transactions * 21)) spans/s")
print("  spans/s vs events/s:            \(String(format: "%.1f", transactions * 21 / max(events, 1)))x")
