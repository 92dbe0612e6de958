// A program the logging tests run as a real child: writes a file log, captures stderr, crashes.
//
//   faultline-log-probe write PATH N [--threads T] [--cap BYTES] [--tag TAG]   N lines per thread, then exit
//   faultline-log-probe loop PATH [--cap BYTES]                   log forever (kill -9 tests)
//   faultline-log-probe async-then-crash PATH N DATADIR            N queued lines, then SIGSEGV at once
//   faultline-log-probe stderr-crash DATADIR                       capture stderr, write from C and Swift, SIGSEGV
//   faultline-log-probe stderr-closed DATADIR                      fd 2 closed before capture; write; exit 0
//   faultline-log-probe stderr-fork DATADIR                        capture, fork a child that writes; exit
//   faultline-log-probe journal SOCKET                             one entry to a journal socket
//   faultline-log-probe log-fork N                                 no start; a thread logs while main forks N
//                                                                  children that each log one line; exit
//   faultline-log-probe start-then-return DSN DATADIR MICROS       start with a DSN, return from main MICROS
//                                                                  later (start's background half still running)
import CCrashProbes
import Faultline
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? { args.firstIndex(of: name).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
guard let mode = args.first else { print("usage: see the comment in main.swift"); exit(2) }

switch mode {
case "start-then-return":
    Faultline.start(Options(dsn: args[1], release: "probe@1", dataDirectory: args[2]))
    usleep(UInt32(args[3]) ?? 0)
case "write":
    let path = args[1], n = Int(args[2])!
    let threads = Int(option("--threads") ?? "1")!
    let cap = Int(option("--cap") ?? "\(2 << 20)")!
    let tag = option("--tag") ?? "p\(getpid())"
    let log = try FileLogger(path: path, maximumBytes: cap)
    DispatchQueue.concurrentPerform(iterations: threads) { t in
        for i in 0..<n { log.info(ProbeLines.body(tag, t, i), attributes: ["i": .int(i)]) }
    }
    log.flush()
case "loop":
    let log = try FileLogger(path: args[1], maximumBytes: Int(option("--cap") ?? "65536")!)
    print("ready"); fflush(nil)
    var i = 0
    while true { log.info(ProbeLines.body("loop", 0, i)); i += 1; if i % 100 == 0 { log.flush() } }
case "async-then-crash":
    let path = args[1], n = Int(args[2])!
    Faultline.start(Options(dataDirectory: args[3]))
    let log = try FileLogger(path: path)
    for i in 0..<n { log.info("queued \(i)") }
    probe_segv()
case "stderr-crash":
    var o = Options(dataDirectory: args[1])
    o.captureStderr = true
    Faultline.start(o)
    probe_stderr_printf("written by C stdio before the crash\n")
    FileHandle.standardError.write(Data("written by Swift FileHandle before the crash\n".utf8))
    for i in 0..<2000 { probe_stderr_printf("filler line \(i) to push old bytes out of the 16 KiB tail\n") }
    probe_stderr_printf("the last line before the crash\n")
    probe_segv()
case "stderr-closed":
    close(2)
    var o = Options(dataDirectory: args[1])
    o.captureStderr = true
    let r = Faultline.start(o)
    probe_stderr_printf("written to a closed stderr\n")
    print(r.warnings.filter { $0.contains("stderr") }); fflush(nil)
    exit(0)
case "stderr-fork":
    var o = Options(dataDirectory: args[1])
    o.captureStderr = true
    Faultline.start(o)
    probe_stderr_printf("parent before fork\n")
    let pid = fork()
    if pid == 0 {
        for i in 0..<5000 { probe_stderr_printf("child line \(i)\n") }
        _exit(0)
    }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    probe_stderr_printf("parent after fork, child status \(status)\n")
    exit(0)
case "log-fork":
    // The crash core is never started here, yet Log.* writes the breadcrumb ring under its mutex:
    // a child forked while the logging thread holds it must still be able to log.
    let forks = Int(args[1]) ?? 200
    Thread.detachNewThread { while true { Log.info("busy", attributes: ["i": 1, "s": "x", "b": true]) } }
    usleep(20_000)
    for _ in 0..<forks {
        let pid = fork()
        if pid == 0 { Log.info("child", attributes: ["k": "v"]); _exit(0) }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
    print("forked \(forks)"); fflush(nil)
    exit(0)
case "journal":
    let j = JournalLogger(
        identifier: "faultline-log-probe", subsystem: "dev.faultline", category: "tests",
        socketPath: args[1])
    j.warning("journal line\nsecond line", attributes: ["order.id": "A-7", "tries": 3])
default:
    print("unknown mode \(mode)"); exit(2)
}
