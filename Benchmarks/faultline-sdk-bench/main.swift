// Measures the SDK's costs on the calling thread (run through tools/measure-sdk, release build):
// one Log.info with three attributes, queue throughput to disk, memory at rest and under a burst
// of 100,000 logs, and the time Faultline.start adds to launch.
import Dispatch
import Faultline
import FaultlineProtocol
import Foundation

func rss() -> Int {
    let f = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
    return f.count > 1 ? (Int(f[1]) ?? 0) * 4096 : 0
}
/// The process's resident memory by kind (/proc/self/status: RssAnon, RssFile), in KiB.
func rssParts() -> (anon: Int, file: Int) {
    let lines = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8))?.split(separator: "\n") ?? []
    func kib(_ key: String) -> Int {
        lines.first { $0.hasPrefix(key) }.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }
    return (kib("RssAnon:"), kib("RssFile:"))
}
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
/// CPU time of the calling thread, in ns: what start costs the caller, whether or not the shared
/// machine also took the CPU away from it meanwhile (which wall time counts).
func threadCPU() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
}

// Each run's data directory is made in a folder of the benchmark's own, as an app's is in a
// folder of its own: in a crowded /tmp, looking up a name that is not there reads the directory's
// blocks, and the benchmark would time that lookup instead of start.
let benchFolder = NSTemporaryDirectory() + "faultline-sdk-bench"
try? FileManager.default.createDirectory(atPath: benchFolder, withIntermediateDirectories: true)
let dir = benchFolder + "/\(getpid())"
// --start-only MODE [--data-directory DIR]: start with a DSN ("dsn"), without one ("nodsn") or
// not at all ("none"), wait 0.2 s, print the time start took and the process's resident memory,
// and exit; tools/measure-sdk compares the three, each in a fresh process. With DIR (kept), a
// launch that finds its data directory from an earlier one, as every launch but an app's first.
if let i = CommandLine.arguments.firstIndex(of: "--start-only"), i + 1 < CommandLine.arguments.count {
    let mode = CommandLine.arguments[i + 1]
    let kept = CommandLine.arguments.firstIndex(of: "--data-directory").map { CommandLine.arguments[$0 + 1] }
    let before = rss()
    let s0 = now()
    let c0 = threadCPU()
    if mode != "none" {
        let dsn = mode == "dsn" ? "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1" : nil
        Faultline.start(Options(dsn: dsn, release: "bench@1", environment: "bench", dataDirectory: kept ?? dir))
    }
    let ms = Double(now() - s0) / 1e6
    let cpuMs = Double(threadCPU() - c0) / 1e6
    usleep(200_000)
    let parts = rssParts()
    print(
        "{\"start_ms\":\(ms),\"start_cpu_ms\":\(cpuMs),\"rss_growth_kib\":\((rss() - before) / 1024),\"rss_anon_kib\":\(parts.anon),\"rss_file_kib\":\(parts.file)}"
    )
    if kept == nil { try? FileManager.default.removeItem(atPath: dir) }
    exit(0)
}
defer { try? FileManager.default.removeItem(atPath: dir) }
let rssBeforeStart = rss()
let t0 = now()
let cpu0 = threadCPU()
// A DSN to a closed port: the SDK is fully on (log items buffered, worker running) but sending fails quietly.
let result = Faultline.start(
    Options(
        dsn: "http://0123456789abcdef0123456789abcdef@127.0.0.1:9/1", release: "bench@1",
        environment: "bench", dataDirectory: dir))
let startMs = Double(now() - t0) / 1e6
let startCPUMs = Double(threadCPU() - cpu0) / 1e6
precondition(result.crashHandlerInstalled)
usleep(200_000)
let rssAtRest = rss()
if let i = CommandLine.arguments.firstIndex(of: "--log-loop"), let n = Int(CommandLine.arguments[i + 1]) {
    // Only the Log.info line, n times (for a profiler: perf record faultline-sdk-bench --log-loop N).
    for i in 0..<n { Log.info("request handled", attributes: ["path": "/api/items", "status": 200, "ms": .double(Double(i) * 0.1)]) }
    exit(0)
}

// 1. Log.info with three attributes: per-call time, median and p99 over batches.
var samples: [Double] = []
for batch in 0..<200 {
    let b0 = now()
    for i in 0..<500 { Log.info("request handled", attributes: ["path": "/api/items", "status": 200, "ms": .double(Double(i) * 0.1)]) }
    samples.append(Double(now() - b0) / 500)
    if batch % 50 == 49 { usleep(50_000) }  // let the worker drain, as a real app's pauses would
}
samples.sort()
// The same line with every call timed on its own (CLOCK_MONOTONIC around each call; the two
// clock reads, about 40 ns, are included), for a per-call median and 99th percentile.
var perCall: [Double] = []
perCall.reserveCapacity(100_000)
for batch in 0..<200 {
    for i in 0..<500 {
        var a = timespec(), b = timespec()
        clock_gettime(CLOCK_MONOTONIC, &a)
        Log.info("request handled", attributes: ["path": "/api/items", "status": 200, "ms": .double(Double(i) * 0.1)])
        clock_gettime(CLOCK_MONOTONIC, &b)
        perCall.append(Double((b.tv_sec - a.tv_sec) * 1_000_000_000 + (b.tv_nsec - a.tv_nsec)))
    }
    if batch % 50 == 49 { usleep(50_000) }
}
perCall.sort()
// Info is below the default send level: the cost is the breadcrumb alone. Warning is also sent.
var warnSamples: [Double] = []
for _ in 0..<100 {
    let b0 = now()
    for i in 0..<500 { Log.warning("slow request", attributes: ["path": "/api/items", "status": 200, "ms": .double(Double(i))]) }
    warnSamples.append(Double(now() - b0) / 500)
}
warnSamples.sort()

// 2. Burst of 100,000 logs: peak memory held.
let burst0 = now()
for i in 0..<100_000 { Log.warning("burst line \(i)", attributes: ["i": .int(i), "a": "x", "b": true]) }
let burstSeconds = Double(now() - burst0) / 1e9
let rssAfterBurst = rss()
Faultline.flush(timeout: 30)
let rssAfterFlush = rss()

// 3. Queue throughput: durable (fsync) enqueues of a 2 KB envelope.
let outbox = try Outbox(directory: dir + "/bench-outbox", byteCap: 1 << 30)
let payload = Data(repeating: 0x61, count: 2048)
let env = Envelope(header: ["event_id": "0123456789abcdef0123456789abcdef"], items: [Envelope.Item(type: "event", payload: payload)])
let q0 = now()
for _ in 0..<500 { outbox.enqueue(env) }
let durablePerSec = 500 / (Double(now() - q0) / 1e9)
let q1 = now()
for _ in 0..<2000 { outbox.enqueue(env, sync: false) }
let bufferedPerSec = 2000 / (Double(now() - q1) / 1e9)

if CommandLine.arguments.contains("--json") {  // for tools/measure-sdk, which takes medians over runs
    let figures: [String: Double] = [
        "log_info_batch_median_ns": samples[samples.count / 2], "log_info_batch_p99_ns": samples[samples.count * 99 / 100],
        "log_info_call_median_ns": perCall[perCall.count / 2], "log_info_call_p99_ns": perCall[perCall.count * 99 / 100],
        "log_warning_batch_median_ns": warnSamples[warnSamples.count / 2],
        "start_ms": startMs, "start_cpu_ms": startCPUMs, "crash_core_start_ms": Double(result.crashHandlerStartNanoseconds) / 1e6,
        "rss_start_mib": Double(rssAtRest - rssBeforeStart) / 1048576
    ]
    print(String(decoding: try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]), as: UTF8.self))
    exit(0)
}
func f(_ x: Double) -> String { String(format: "%.3f", x) }
print("Log.info, 3 attributes (breadcrumb only): median \(f(samples[samples.count / 2] / 1000)) µs, p99 \(f(samples[samples.count * 99 / 100] / 1000)) µs")
print(
    "Log.info, 3 attributes, each call timed: median \(f(perCall[perCall.count / 2] / 1000)) µs, p99 \(f(perCall[perCall.count * 99 / 100] / 1000)) µs (100,000 calls, ~40 ns of clock reads included)"
)
print(
    "Log.warning, 3 attributes (breadcrumb + sent as log item): median \(f(warnSamples[warnSamples.count / 2] / 1000)) µs, p99 \(f(warnSamples[warnSamples.count * 99 / 100] / 1000)) µs"
)
print("burst of 100,000 Log.warning: \(f(burstSeconds)) s on the calling thread")
print(
    "Faultline.start: \(f(startMs)) ms, \(f(startCPUMs)) ms of the calling thread's CPU (crash core \(f(Double(result.crashHandlerStartNanoseconds) / 1e6)) ms)"
)
print(
    "RSS: +\(f(Double(rssAtRest - rssBeforeStart) / 1048576)) MiB at rest after start, +\(f(Double(rssAfterBurst - rssBeforeStart) / 1048576)) MiB right after the burst, +\(f(Double(rssAfterFlush - rssBeforeStart) / 1048576)) MiB after flushing it"
)
print("queue to disk: \(Int(durablePerSec)) envelopes/s durable (fsync), \(Int(bufferedPerSec)) envelopes/s without fsync (2 KB each)")
print("dropped by the SDK so far: \(Faultline.droppedCounts)")
