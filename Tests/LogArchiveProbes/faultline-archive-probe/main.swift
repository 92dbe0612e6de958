// A program the log-archive tests run as a real child (kill -9, restarts, server down and up).
//
//   faultline-archive-probe loop LOGDIR TAG [--roll BYTES]            log numbered lines forever
//   faultline-archive-probe write LOGDIR TAG N [--roll BYTES] [--files K] [--total BYTES]
//        N lines, roll, wait for gzip, exit
//   faultline-archive-probe upload LOGDIR SDKDIR DSN TAG N [--roll BYTES] [--recheck S] [--wait S]
//        N lines into archives, uploaded through the SDK; exits once LOGDIR has no archive left
//        (prints "uploaded") or after --wait seconds (prints "left K")
//   N = 0 writes nothing: only leftovers of earlier runs are compressed and uploaded.
import Faultline
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? { args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
guard let mode = args.first else { print("usage: see the comment in main.swift"); exit(2) }
/// Unbuffered, so a test that kills us has seen every line printed before.
func say(_ s: String) { FileHandle.standardOutput.write(Data((s + "\n").utf8)) }

func logger(_ dir: String) throws -> RollingFileLogger {
    var c = RollingFileLogger.Configuration(directory: dir)
    c.maximumFileBytes = Int(option("--roll") ?? "4096")!
    c.maximumFiles = Int(option("--files") ?? "100000")!
    c.maximumTotalBytes = Int(option("--total") ?? "\(1 << 30)")!
    return try RollingFileLogger(c)
}

func archivesLeft(_ dir: String) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".log.gz") }.count
}

switch mode {
case "loop":
    let log = try logger(args[1])
    say("ready")
    var i = 0
    // Throttled (about 100k lines/s at most) so a run stays far below the probe's file cap.
    while true { log.info("probe \(args[2]) line \(i)"); i += 1; if i % 50 == 0 { log.flush(); usleep(500) } }
case "write":
    let log = try logger(args[1])
    for i in 0..<Int(args[3])! { log.info("probe \(args[2]) line \(i)") }
    log.roll()
    log.waitForArchives(timeout: 30)
    say("written")
case "upload":
    let (dir, sdk, dsn, tag, n) = (args[1], args[2], args[3], args[4], Int(args[5])!)
    var o = Options(dsn: dsn, release: "probe@1.0", appID: "dev.faultline.probe", dataDirectory: sdk)
    o.logArchiveDirectory = dir
    o.captureCrashes = false
    o.logArchiveRecheckSeconds = Double(option("--recheck") ?? "300")!
    // Lines first, uploads after: a test that kills us after "written" kills during upload.
    let log = try logger(dir)
    for i in 0..<n { log.info("probe \(tag) line \(i)") }
    log.roll()
    log.waitForArchives(timeout: 30)
    say("written")
    Faultline.start(o)
    let deadline = Date().addingTimeInterval(Double(option("--wait") ?? "30")!)
    while archivesLeft(dir) > 0 && Date() < deadline { Faultline.flush(timeout: 2); usleep(50_000) }
    let left = archivesLeft(dir)
    say(left == 0 ? "uploaded" : "left \(left)")
    say("dropped \(Faultline.droppedCounts.values.reduce(0, +))")
    log.close()
default:
    print("unknown mode \(mode)"); exit(2)
}
