// A program that starts Faultline and then crashes in the way its first argument names.
// Tests spawn it and assert how it died and what report it left. Also the sample crasher of
// README's main command.
//
//   faultline-crasher MODE --data-dir DIR [--dsn DSN] [--previous-handler MARKER] [--library SO] [--logs N]
//                     [--swift-backtrace-dir DIR]
import CCrashProbes
import CFaultlineCrash
import Faultline
import Foundation

let modes: [String: String] = [
    "none": "start, print the start result as JSON, exit 0 (the next-launch pickup)",
    "segv": "null-ish pointer write in C (SIGSEGV)",
    "bus": "write past the end of a mapped file (SIGBUS)",
    "fpe": "integer division by zero in C (SIGFPE)",
    "ill": "__builtin_trap / ud2 (SIGILL)",
    "trap": "int3 (SIGTRAP)",
    "abort": "abort() (SIGABRT)",
    "call-null": "call through a null function pointer (SIGSEGV, pc 0)",
    "double-free": "glibc aborts inside free() with the arena lock held (SIGABRT)",
    "swift-force-unwrap": "force-unwrap nil (SIGILL)",
    "swift-index": "array index out of range (SIGILL)",
    "swift-fatal": "fatalError (SIGILL)",
    "swift-overflow": "integer overflow (SIGILL)",
    "stack-overflow": "infinite Swift recursion on the main thread (SIGSEGV)",
    "c-stack-overflow": "infinite C recursion on the main thread (SIGSEGV)",
    "thread-segv": "SIGSEGV on a pthread",
    "thread-stack-overflow": "stack overflow on a pthread",
    "task-stack-overflow": "stack overflow inside a Swift Task",
    "dispatch-stack-overflow": "stack overflow on a Dispatch worker",
    "threads-segv": "four threads crash at the same moment",
    "dlopen": "crash inside a library dlopen'ed after start (--library)",
    "capture-loop":
        "capture --count N errors, printing each event id once it is queued (kill -9 tests); then --then-crash (SIGSEGV) or --then-hang",
    "child-sigign": "run `grep SigIgn /proc/self/status` in a child through system(3)",
    "bad-name-segv": "SIGSEGV on a thread whose name is not valid UTF-8",
    "recover": "fault on a guard page the app's own handler fixes (with --recovering-handler), then exit 0",
    "recover-then-segv": "the same recovered fault, then a real SIGSEGV",
    "recover-threads": "--threads N fault on guard pages the app's handler fixes, --stagger-us apart; exit 0",
    "recover-while-crashing": "like recover-threads, but the last thread crashes for real (SIGSEGV)",
    "context-churn-segv": "SIGSEGV while another thread keeps replacing the crash context",
    "swift-fatal-long": "fatalError with a 5,000-character message (SIGILL; the report keeps the first 2 KiB)",
    "cxx-throw-long": "an uncaught std::runtime_error whose what() is 5,000 characters",
    "pre-start-thread-overflow": "stack overflow on a pthread created before Faultline.start",
    "pre-start-clone-overflow": "stack overflow on a raw clone() thread created before Faultline.start",
    "parked-threads-segv":
        "--threads N (default 8) threads parked in different ways, then SIGSEGV on main (--thread-dump-budget-ms M: every thread's stack gets M ms)",
    "assert": "a failed C assert() (SIGABRT, glibc keeps the message)",
    "cxx-throw": "an uncaught std::out_of_range (SIGABRT through std::terminate)",
    "segv-without-crash-directory": "wait for start's preparation, remove the (empty) crash directory, then SIGSEGV",
    "segv-marked": "write a marker line to stderr, then SIGSEGV (LD_DEBUG=bindings tests)",
    "log-and-wait": "log a warning, print 'ready', then sleep (SIGTERM tests)",
    "capture-and-flush": "--count N errors captured, then flush(timeout: --timeout S); prints 'flush true|false' and the status as JSON",
    "start-twice": "start again with other options; prints the second result as JSON",
    "capture-full-disk": "--fill PATH written until the disk is full, then capture; prints 'captured ID' or 'not captured' and the drops",
    "flush": "start, send everything queued (waiting up to 60 s), exit",
    "flush-report-memory": "like flush; at the very end, after the SDK's exit flush, print `peak_rss_kib N` (VmHWM)",
    "log-and-exit": "log at every level, capture one error, exit normally (flush at exit)",
    "log-burst-and-flush": "--count N warnings (default 2000; --queue-bytes B: the outbox's cap), then flush: prints its result and the lines lost",
    "loader-lock-segv": "SIGSEGV while another thread holds the dynamic loader's lock forever",
    "span-segv": "send a `startup` transaction, then SIGSEGV inside request → db.query spans (--traceparent H)",
    "trace-client": "a traced GET of --url through a propagating URLSession, then flush",
    "trace-serve": "serve one request on 127.0.0.1 (prints the port) continuing its traceparent, then flush",
    "logger-error": "log an error through CrashReportingLogger from reconcileLedger(), then exit (flush at exit)",
    "span-error": "capture an error inside Trace.withSpan from settleInvoice(), then exit (flush at exit)",
    "segv-before-preparation": "SIGSEGV right after start, its background preparation held back 3 s (the crashing thread pre-warms libunwind)",
    "segv-after-preparation": "the same SIGSEGV from the same call site, once start's preparation is done and 100 ms have passed",
    "segv-during-preparation": "SIGSEGV raised on start's preparing thread inside its libunwind pre-warm (frame pointers, with the reason)",
    "segv-during-unwinder-preparation":
        "SIGSEGV on main (an alternate stack of the app's own) while start's thread holds its pre-warm, app signals arriving",
    "timed-segv":
        "recurse --depth N frames, print the time, then SIGSEGV (for tools/measure-crash; --right-after-start: do not wait for start's background preparation)",
    "async-task": "force-unwrap nil three awaits deep under Task { } (SIGILL; async frames)",
    "async-detached": "the same under Task.detached",
    "async-group": "the same in a task-group child",
    "async-actor": "the same awaited from an actor method",
    "async-corrupt-unreadable": "SIGSEGV in an async function whose context's Parent points at unmapped memory",
    "async-corrupt-loop": "SIGSEGV in an async function whose context's Parent points at itself",
    "async-corrupt-misaligned": "SIGSEGV in an async function whose context slot holds a misaligned pointer",
    "timed-async": "SIGILL three awaits deep in a detached task, after printing the time (tools/measure-crash)",
    "call-unmapped": "call through a pointer to unmapped memory (SIGSEGV, the pc where no code is)",
    "jump-unmapped": "jump (no call) to unmapped memory, as a smashed return address does (SIGSEGV, nothing readable at the pc)",
    "call-data": "call into a data buffer (SIGSEGV on the fetch: mapped, not executable)",
    "vfork-child-then-parent": "a vfork child crashes (SIGSEGV) in the parent's memory, then the parent does",
    "fork-child-segv": "once the session began, fork: the child captures an error and crashes (SIGSEGV); the parent waits for it and exits 0",
    "signal-self": "send itself SIGSEGV, SIGTRAP and SIGBUS with kill (ignored ones are survived: --ignored 11,5,7), then exit 0"
]

let args = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? { crasherOption(name, in: args) }
guard let mode = args.first, modes[mode] != nil else {
    print("usage: faultline-crasher MODE --data-dir DIR [--dsn DSN] [--previous-handler MARKER] [--library SO] [--logs N]\n")
    for (m, d) in modes.sorted(by: { $0.key < $1.key }) { print("  \(m.padding(toLength: 24, withPad: " ", startingAt: 0)) \(d)") }
    exit(2)
}

// --start-in DIR / --chdir-after-start DIR: the working directory at start, and a move before
// the crash (a relative --data-dir must still mean the directory it meant at start).
if let d = option("--start-in") { chdir(d) }
// --ignored N,M: these signals ignored before start, as a parent's `trap '' SEGV` leaves them.
for number in (option("--ignored") ?? "").split(separator: ",").compactMap({ Int32($0) }) { signal(number, SIG_IGN) }
if mode == "pre-start-thread-overflow" || mode == "pre-start-clone-overflow" {
    probe_spawn_thread_before_start(mode == "pre-start-clone-overflow" ? 1 : 0)
}
if mode == "flush-report-memory" {
    // Registered before start: atexit runs newest first, so this runs after the SDK's exit flush
    // (registered by start) and the figure covers every answer the SDK read.
    atexit {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let kib = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?.split(separator: " ").dropFirst().first ?? "?"
        print("peak_rss_kib \(kib)")
        fflush(nil)
    }
}
if let marker = option("--previous-handler") { probe_install_previous_handler(marker) }
if args.contains("--recovering-handler") { probe_install_recovering_handler() }

// The window between start and its background preparation, held open: the crash comes before
// libunwind is pre-warmed.
if mode == "segv-before-preparation" { faultline_crash_delay_preparation_for_testing(3000) }
if mode == "segv-during-preparation" { faultline_crash_fault_during_preparation_for_testing(SIGSEGV) }
if mode == "segv-during-unwinder-preparation" { faultline_crash_hold_unwinder_preparation_for_testing(500) }
if let budget = option("--thread-dump-budget-ms").flatMap(UInt32.init) { faultline_crash_set_thread_dump_budget_for_testing(budget) }
if let watchdog = option("--watchdog-ms").flatMap(UInt32.init) { faultline_crash_set_watchdog_for_testing(watchdog) }
let rssBefore = residentBytes()
let startedAt = DispatchTime.now().uptimeNanoseconds
var options = Options(
    dsn: option("--dsn"), release: "crasher@1.0", environment: "test",
    service: "faultline-crasher", appID: "dev.faultline.crasher", dataDirectory: option("--data-dir"))
options.swiftBacktraceDirectory = option("--swift-backtrace-dir")
if let bytes = option("--queue-bytes").flatMap(Int.init) { options.queueByteCap = bytes }
let result = Faultline.start(options)
let startNanoseconds = DispatchTime.now().uptimeNanoseconds - startedAt
let rssAfter = residentBytes()
if let n = option("--logs").flatMap(Int.init) {
    for i in 0..<n { Log.info("log line \(i)", attributes: ["index": .int(i)]) }
}
if args.contains("--escaped-logs") {
    // Every attribute type and every character JSON escapes, in a report's breadcrumbs, and
    // one line too long for a ring slot.
    Log.warning(
        "quote\" back\\ nl\n ctl\u{01} ü 😀",
        attributes: ["s": "a\"b\\c\u{7}d", "i": .int(Int.min), "d": 0.1, "w": 2.0, "b": false, "s": "last"])
    Log.info(String(repeating: "é", count: 2000), attributes: ["k": "v"])
}
// A crash meant to come before start's background half has finished must not wait for it here
// (reading pickup or warnings does).
let early = args.contains("--right-after-start") || mode.hasSuffix("-preparation")
if mode == "segv-during-preparation" { _ = faultline_crash_wait_for_preparation(60_000) }  // it crashes meanwhile
// --wait-for-thread NAME: go on once a thread of this process bears NAME (at most 10 s), e.g.
// start's preparing thread once it has named itself.
if let name = option("--wait-for-thread") {
    func named() -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name
        }
    }
    let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
    while !named() && DispatchTime.now().uptimeNanoseconds < deadline { sched_yield() }
}
if mode == "segv-during-unwinder-preparation" {
    let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
    while faultline_crash_unwinder_preparation_held_for_testing() == 0 && DispatchTime.now().uptimeNanoseconds < deadline { sched_yield() }
    probe_use_own_alternate_stack(64 * 1024)  // the handler then runs with the app's signals open
    probe_start_signal_storm()
    probe_segv()
}
if mode == "segv-before-preparation" || mode == "segv-after-preparation" {
    if mode == "segv-after-preparation" {
        _ = faultline_crash_wait_for_preparation(5000)
        usleep(100_000)
    }
    probe_segv()  // one call site for both, so both reports must carry the same frames
}
var summary: [String: Any] = [
    "crash_handler_installed": result.crashHandlerInstalled,
    "data_directory": result.dataDirectory,
    "start_ns": startNanoseconds,
    "crash_core_start_ns": result.crashHandlerStartNanoseconds,
    "rss_delta_bytes": rssAfter - rssBefore,
    "reserved_bytes": faultline_crash_reserved_bytes()
]
if !early {
    summary["converted"] = result.pickup.converted
    summary["set_aside"] = result.pickup.setAside
    summary["warnings"] = result.warnings
}
print(String(decoding: try! JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]), as: UTF8.self))
fflush(nil)

if let d = option("--chdir-after-start") {
    _ = faultline_crash_wait_for_preparation(5000)  // the background half uses the directory too
    chdir(d)
}
switch mode {
case "none": exit(0)
case "signal-self":
    for number in [SIGSEGV, SIGTRAP, SIGBUS] { kill(getpid(), number) }
    print("survived")
    exit(0)
case "segv": probe_segv()
case "segv-without-crash-directory":
    _ = faultline_crash_wait_for_preparation(5000)
    if rmdir(result.dataDirectory + "/crashes") != 0 { print("crasher: cannot remove the crash directory"); exit(1) }
    probe_segv()
case "bus": probe_bus((result.dataDirectory as NSString).appendingPathComponent("bus-scratch"))
case "fpe": probe_fpe()
case "ill": probe_ill()
case "trap": probe_trap()
case "abort": probe_abort()
case "call-null": probe_call_null()
case "call-unmapped": probe_call_unmapped()
case "jump-unmapped": probe_jump_unmapped()
case "call-data": probe_call_data()
case "vfork-child-then-parent": probe_vfork_child_then_parent()
case "double-free": probe_double_free()
case "swift-force-unwrap": print(forceUnwrapNil())
case "swift-index": print(indexOutOfRange())
case "swift-fatal": fatalError("crasher asked for fatalError")
case "swift-overflow": print(integerOverflow())
case "stack-overflow": print(recurseForever(0))
case "c-stack-overflow": probe_c_stack_overflow()
case "thread-segv": probe_segv_on_pthread(0)
case "thread-stack-overflow": probe_segv_on_pthread(1)
case "task-stack-overflow":
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        print(recurseForever(0)); done.signal()
    }
    done.wait()
case "dispatch-stack-overflow":
    DispatchQueue.global().async { print(recurseForever(0)) }
    sleep(30)
case "threads-segv": probe_segv_on_threads(4)
case "capture-loop":
    let count = option("--count").flatMap(Int.init) ?? 100
    for i in 0..<count {
        Log.warning("about to capture \(i)", attributes: ["i": .int(i)])
        if let id = Faultline.capture(CrasherError.numbered(i)) { print("captured \(id)"); fflush(nil) }
        usleep(2_000)
    }
    if args.contains("--then-crash") { probe_segv() }
    if args.contains("--then-hang") {
        print("captured all")
        fflush(nil)
        for _ in 0..<600 { sleep(1) }
    }
    Faultline.flush(timeout: 10)
    exit(0)
case "child-sigign":
    exit(system("grep SigIgn /proc/self/status") == 0 ? 0 : 1)
case "bad-name-segv": probe_segv_with_invalid_utf8_thread_name()
case "recover":
    probe_touch_guard_page()
    exit(0)
case "recover-then-segv":
    probe_touch_guard_page()
    probe_segv()
case "recover-threads", "recover-while-crashing":
    probe_recover_on_threads(
        Int32(option("--threads").flatMap(Int32.init) ?? 2),
        Int32(option("--stagger-us").flatMap(Int32.init) ?? 0), mode == "recover-while-crashing" ? 1 : 0)
    exit(0)
case "segv-marked":
    // Start's background work binds symbols of its own (normal context, another thread): the C
    // preparation and then the SDK's continuation (outbox scan, crash pickup, network set-up).
    // LD_DEBUG does not say which thread bound what, so let both finish first.
    _ = faultline_crash_wait_for_preparation(5000)
    _ = result.pickup
    probe_segv_after_marker()
case "assert": probe_assert(Int32(args.count))
case "cxx-throw": probe_throw_cxx()
case "parked-threads-segv": probe_crash_with_parked_threads(Int32(option("--threads").flatMap(Int32.init) ?? 8))
case "pre-start-thread-overflow", "pre-start-clone-overflow":
    _ = faultline_crash_wait_for_preparation(5000)  // the pre-existing thread is covered in the background
    probe_release_pre_start_thread_and_wait()
case "cxx-throw-long": probe_throw_cxx_long()
case "swift-fatal-long": fatalError("long " + String(repeating: "é", count: 2500))
case "context-churn-segv": probe_segv_while_context_changes()
case "log-and-wait":
    Log.warning("waiting for SIGTERM")
    print("ready"); fflush(nil)
    for _ in 0..<600 { sleep(1) }  // like an app's run loop: a signal interrupts one sleep, not the loop
    exit(0)
case "span-segv": TraceModes.spanSegv(traceparent: option("--traceparent"))
case "trace-client": TraceModes.client(url: option("--url") ?? "http://127.0.0.1:9/")
case "trace-serve": TraceModes.serveOnce()
case "flush", "flush-report-memory":
    print(Faultline.flush(timeout: 60) ? "flushed" : "flush timed out")
    exit(0)
case "capture-and-flush":
    for i in 0..<Int(option("--count") ?? "5")! { _ = Faultline.capture(CrasherError.numbered(i)) }
    let flushed = Faultline.flush(timeout: Double(option("--timeout") ?? "3")!)
    print("flush \(flushed)")
    let status = Faultline.status
    let statusJSON: [String: Any] = [
        "pending": status.pendingEnvelopes, "rejected_key_status": status.rejectedKey?.httpStatus ?? 0,
        "rejected_key_prefix": status.rejectedKey?.keyPrefix ?? "",
        "rejected_by_server": status.droppedCounts[.rejectedByServer] ?? 0
    ]
    print(String(decoding: try! JSONSerialization.data(withJSONObject: statusJSON, options: [.sortedKeys]), as: UTF8.self))
    fflush(nil)
    exit(0)
case "log-burst-and-flush":
    for i in 0..<Int(option("--count") ?? "2000")! { Log.warning("burst line \(i)", attributes: ["index": .int(i)]) }
    let flushed = Faultline.flush(timeout: 30)
    print("flush \(flushed) queue_overflow \(Faultline.status.droppedCounts[.queueOverflow] ?? 0)")
    fflush(nil)
    exit(0)
case "start-twice":
    var other = Options(dsn: nil, release: "other@2.0", dataDirectory: (result.dataDirectory as NSString).appendingPathComponent("other"))
    other.captureCrashes = false
    let again = Faultline.start(other)
    let againJSON: [String: Any] = [
        "crash_handler_installed": again.crashHandlerInstalled, "data_directory": again.dataDirectory, "warnings": again.warnings
    ]
    print(String(decoding: try! JSONSerialization.data(withJSONObject: againJSON, options: [.sortedKeys]), as: UTF8.self))
    fflush(nil)
    exit(0)
case "capture-full-disk":
    _ = Faultline.outbox  // waits until start's background half made it
    let fd = open(option("--fill")!, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    let block = [UInt8](repeating: 0x2E, count: 4096)
    for _ in 0..<100_000 where block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    close(fd)
    print(Faultline.capture(CrasherError.numbered(1)).map { "captured \($0)" } ?? "not captured")
    print("disk_write_failed \(Faultline.droppedCounts[.diskWriteFailed] ?? 0)")
    fflush(nil)
    exit(0)
case "fork-child-segv":
    _ = Faultline.flush(timeout: 10)  // the session's opening update is queued (and sent)
    let child = fork()
    if child == 0 {
        _ = Faultline.capture(CrasherError.numbered(2))
        probe_segv()
    }
    var status: Int32 = 0
    waitpid(child, &status, 0)
    print("child ended by signal \(status & 0x7f)")
    exit(0)
case "log-and-exit":
    Log.debug("a debug line")
    Log.info("an info line", attributes: ["user": "alice"])
    Log.warning("a warning line", attributes: ["retries": 3, "ratio": 0.5, "cold": true])
    Log.error("an error line")
    if let id = Faultline.capture(CrasherError.numbered(7), attributes: ["where": "log-and-exit"]) { print("captured \(id)") }
    exit(0)
case "logger-error":
    reconcileLedger(CrashReportingLogger())
    exit(0)
case "span-error":
    settleInvoice()
    exit(0)
case "loader-lock-segv": probe_segv_while_loader_lock_held()
case "async-task", "timed-async":
    let done = DispatchSemaphore(value: 0)
    if mode == "timed-async" { print("crash_at_ns \(DispatchTime.now().uptimeNanoseconds)"); fflush(nil) }
    startUnstructuredTask(done)
    done.wait()
case "async-detached":
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        print(await asyncOuter(nothing())); done.signal()
    }
    done.wait()
case "async-group":
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let sum = await withTaskGroup(of: Int.self) { group in
            group.addTask { await asyncOuter(nothing()) }
            return await group.reduce(0, &+)
        }
        print(sum); done.signal()
    }
    done.wait()
case "async-actor":
    let done = DispatchSemaphore(value: 0)
    let counter = AsyncCounter()
    Task.detached {
        print(await counter.add()); done.signal()
    }
    done.wait()
case "async-corrupt-unreadable", "async-corrupt-loop", "async-corrupt-misaligned":
    let how: Int32 = mode.hasSuffix("unreadable") ? 1 : mode.hasSuffix("loop") ? 2 : 3
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        print(await asyncCorruptCaller(how)); done.signal()
    }
    done.wait()
case "timed-segv":
    // Measures a crash in a running program, not one within a millisecond of start (while start's
    // background preparation still runs): wait for it unless asked not to.
    if !args.contains("--right-after-start") { _ = faultline_crash_wait_for_preparation(5000) }
    probe_recurse_then_segv(Int32(option("--depth").flatMap(Int32.init) ?? 10))
case "dlopen":
    guard let lib = option("--library") else { print("dlopen needs --library"); exit(2) }
    probe_dlopen_and_crash(lib)
default: break
}
print("crasher: mode \(mode) did not crash")
exit(1)

// The app's own functions that report errors through Faultline's wrappers: events must be titled
// after them, never after the wrappers (FaultlineOwnFrames).
@inline(never) func reconcileLedger(_ logger: any Logger) {
    logger.error("ledger out of balance", attributes: ["ledger": "eu-1"])
}

@inline(never) func settleInvoice() {
    Trace.withSpan("settle", operation: "invoice") { _ in
        Faultline.capture(CrasherError.numbered(42), attributes: ["invoice": "I-9"])
    }
}
