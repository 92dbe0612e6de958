// Ingest's per-event work on a connection thread, without HTTP or storage (run through
// tools/measure-ingest-cpu): decode the gzip'd envelope request as ingest does (one gzip member
// whole, else streamed: Ingest/GzipMember.swift) and frame it, parse the event, compute its stack
// signature, and free it all — the part of `tools/profile-ingest`'s "IngestHandler.ingest" that
// does not wait on the database. Timed per event over batches, median; and each step alone.
import FaultlineProtocol
import FaultlineServer
import Foundation

func nowNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Median per-event nanoseconds over `batches` batches that each go once through `count` events.
func median(batches: Int, count: Int, _ op: (Int) -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<batches {
        let t0 = nowNanoseconds()
        for i in 0..<count { op(i) }
        samples.append(Double(nowNanoseconds() - t0) / Double(count))
    }
    samples.sort()
    return samples[samples.count / 2]
}

let args = CommandLine.arguments
guard let dirIndex = args.firstIndex(of: "--envelopes"), dirIndex + 1 < args.count else {
    FileHandle.standardError.write(Data("usage: faultline-ingest-bench --envelopes DIR [--batches 200]\n".utf8))
    exit(2)
}
let batches = Int(args.firstIndex(of: "--batches").map { args[$0 + 1] } ?? "200") ?? 200
let dir = args[dirIndex + 1]
let names = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".gz") }.sorted()
let gzipped = try names.map { try Data(contentsOf: URL(fileURLWithPath: dir + "/" + $0)) }
guard !gzipped.isEmpty else { fatalError("no .gz envelopes in \(dir)") }
let limits = IngestLimits()
let plain = try gzipped.map { try Inflate.inflate($0, limit: limits.maxDecompressedBytes) }
let decoded = try plain.map { try EnvelopeDecoder.envelope($0, limits: limits) }
let events = decoded.map { $0.event! }
let payloads = decoded.map { $0.eventBytes! }
var sink = 0

// As a connection thread gets it: a gzip'd envelope request, decoded the way ingest decodes it.
let requests = gzipped.map {
    HTTPRequest(method: "POST", path: "/api/1/envelope/", headers: ["Content-Encoding": "gzip"], body: $0)
}
let whole = median(batches: batches, count: requests.count) { i in
    let submission = try! EnvelopeDecoder.envelope(of: requests[i], limits: limits)
    sink &+= StackExtractor.signature(of: submission.event!, grouping: .v2).frames.count
}
let inflate = median(batches: batches, count: gzipped.count) { i in
    sink &+= try! Inflate.inflate(gzipped[i], limit: limits.maxDecompressedBytes).count
}
// The top-level keep list (in every revision, so --baseline builds compile): the parse ingest runs,
// with its JSONSelection inside the members, is in `whole`.
let parse = median(batches: batches, count: payloads.count) { i in
    if case .object(let o) = try! JSONParser.parseObject(payloads[i], keeping: EnvelopeDecoder.eventFieldsRead) { sink &+= o.count }
}
let signature = median(batches: batches, count: events.count) { i in
    sink &+= StackExtractor.signature(of: events[i], grouping: .v2).frames.count
}
let figures: [String: Double] = [
    "whole_ns": whole, "inflate_ns": inflate, "parse_and_free_ns": parse, "signature_ns": signature
]
if args.contains("--json") {
    print(String(decoding: try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]), as: UTF8.self))
} else {
    for (k, v) in figures.sorted(by: { $0.key < $1.key }) {
        print(k.padding(toLength: 20, withPad: " ", startingAt: 0) + String(format: " %9.0f ns per event", v))
    }
}
if sink == 42 { print("") }  // keeps the work observable
