// Measures the file log and the stderr capture (run through tools/bench-logging, release build):
// file-log lines per second from 1 and 4 threads, the calling thread's cost of one line, one trim
// of a 2 MiB file, and the capture's overhead on a program printing 100 MB, as a ratio against
// the same program without capture measured in the same run.
//
//   faultline-logging-bench                      all measurements
//   faultline-logging-bench print MB [CAPFILE]   (child) writes MB megabytes to stderr in 100-byte
//                                                lines, capturing into CAPFILE when given
import Dispatch
import Faultline
import Foundation

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s[s.count / 2] }

let args = Array(CommandLine.arguments.dropFirst())
if args.first == "print" {
    let megabytes = Int(args[1])!
    if args.count > 2 { try StderrCapture.start(file: args[2]) }
    // One write(2) per line, as an unbuffered stderr (C's, Swift's FileHandle) does.
    let line = Array((String(repeating: "x", count: 99) + "\n").utf8)
    for _ in 0..<(megabytes * 10_000) { _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) } }
    exit(0)
}

let dir = NSTemporaryDirectory() + "faultline-logging-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }

// 1. Throughput: N lines (with one attribute) through the asynchronous path, flushed, from T threads.
func linesPerSecond(threads: Int, perThread: Int) throws -> Double {
    let path = dir + "/throughput-\(threads).log"
    let log = try FileLogger(path: path)
    let t0 = now()
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        for i in 0..<perThread { log.info("request handled", attributes: ["i": .int(i), "t": .int(t)]) }
    }
    log.flush()
    let seconds = Double(now() - t0) / 1e9
    log.close()
    unlink(path)
    return Double(threads * perThread) / seconds
}
let one = try linesPerSecond(threads: 1, perThread: 400_000)
let four = try linesPerSecond(threads: 4, perThread: 100_000)

// 2. The calling thread's cost of one info line: per-call time over batches of 500, with pauses
// that let the writer drain as a real program's would.
let costLog = try FileLogger(path: dir + "/cost.log")
var perLine: [Double] = []
for _ in 0..<400 {
    let b0 = now()
    for i in 0..<500 { costLog.info("request handled", attributes: ["path": "/api/items", "status": 200, "ms": .double(Double(i) * 0.1)]) }
    perLine.append(Double(now() - b0) / 500)
    usleep(2_000)
}
costLog.close()

// 3. One trim of a 2 MiB file: a file just past the cap, then one synchronous (error) line, which
// appends and trims; the same line without a trim is measured too and subtracted.
let cap = 2 * 1024 * 1024
let filler = Array(
    String(repeating: "2026-12-01T10:20:30.123Z\tINFO\t1:1\tf.swift:1\tf()\tfiller line of about a hundred bytes, like a real log line\n", count: 1).utf8)
func syncLineNanoseconds(trimming: Bool) throws -> Double {
    let path = dir + "/trim.log"
    unlink(path)
    var content = [UInt8]()
    content.reserveCapacity(cap + filler.count)
    while content.count <= (trimming ? cap : cap / 2) { content += filler }
    FileManager.default.createFile(atPath: path, contents: Data(content))
    let log = try FileLogger(path: path, maximumBytes: cap)
    let t0 = now()
    log.error("the line that passes the cap")
    let ns = Double(now() - t0)
    log.close()
    return ns
}
var trimmed: [Double] = [], plain: [Double] = []
for _ in 0..<15 { trimmed.append(try syncLineNanoseconds(trimming: true)); plain.append(try syncLineNanoseconds(trimming: false)) }
let trimMs = (median(trimmed) - median(plain)) / 1e6

// 4. stderr capture overhead: the same child printing 100 MB to /dev/null, with and without
// capture, alternated so that machine load hits both alike.
func runPrinter(capture: Bool) throws -> Double {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    p.arguments = ["print", "100"] + (capture ? [dir + "/stderr.log"] : [])
    p.standardError = FileHandle(forWritingAtPath: "/dev/null")
    let t0 = now()
    try p.run()
    p.waitUntilExit()
    precondition(p.terminationStatus == 0)
    return Double(now() - t0) / 1e9
}
var without: [Double] = [], with: [Double] = []
for _ in 0..<3 { without.append(try runPrinter(capture: false)); with.append(try runPrinter(capture: true)) }

func f(_ x: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", x) }
print("faultline logging benchmark (\(ProcessInfo.processInfo.activeProcessorCount) CPUs)")
print("file log, 1 thread:            \(Int(one)) lines/s (400,000 info lines with 2 attributes, flushed)")
print("file log, 4 threads:           \(Int(four)) lines/s (4 × 100,000)")
print(
    "calling-thread cost of a line: median \(f(perLine.sorted()[perLine.count / 2], 0)) ns, p99 \(f(perLine.sorted()[perLine.count * 99 / 100], 0)) ns (batches of 500, 3 attributes; goal < 1000 ns)"
)
print(
    "one trim of a 2 MiB file:      \(f(trimMs)) ms (median of 15; synchronous line with trim \(f(median(trimmed) / 1e6)) ms, without \(f(median(plain) / 1e6)) ms)"
)
print(
    "stderr, 100 MB in 100-byte writes to /dev/null: without capture \(f(median(without))) s, with capture \(f(median(with))) s, ratio \(f(median(with) / median(without))) (median of 3 each, alternated)"
)
