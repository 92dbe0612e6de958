// What the crash core's crash-path objects import, against the async-signal-safe list: one check
// for every architecture's objects (SwiftPM's x86_64 build, tools/build-preload --arch aarch64).
import FaultlineTestSupport
import Foundation

enum CrashPathImports {
    /// The objects whose code runs inside a signal handler.
    static let crashPathObjects = [
        "handler", "handler_stack", "report_writer", "module_scan", "unwind", "safe_io", "signal_mask", "crash_log_flush", "message_writer", "thread_dump",
        "async_unwind", "trace_slots", "machine_context", "event_id", "session", "monotonic_clock"
    ]

    /// Every function a crash-path object may import that is not defined in a crash-path object
    /// itself; `unwindPrefix` is libunwind's per-architecture prefix (`_Ux86_64_`, `_Uaarch64_`).
    static func allowed(unwindPrefix: String) -> Set<String> {
        [
            // signal-safety(7)
            "close", "open", "read", "write", "rename", "unlink", "mkdir", "getpid", "sigaction", "sigaddset", "fstat",
            "sigemptyset", "clock_gettime", "nanosleep", "memcpy", "memset", "memcmp", "memmove", "strncmp", "strlen",
            "__errno_location",  // errno itself
            // Not in signal-safety(7), but glibc's is registers and one rt_sigprocmask, no lock or
            // allocation: the handler's own context when another handler called it without one.
            "getcontext",
            // raw syscalls: gettid, tgkill, rt_sigprocmask, timer_*, process_vm_readv, prctl, sigaltstack, exit_group
            "syscall",
            // libunwind's local unwinder, pre-warmed at start (see unwind.c for its caveats)
            unwindPrefix + "init_local2", unwindPrefix + "step", unwindPrefix + "get_reg", unwindPrefix + "get_proc_info",
            unwindPrefix + "is_signal_frame",

            // libunwind's pre-warm (crash_path_binding.c): on the crash path only when a crash comes
            // before start's background thread has begun it (handler.c, fl_ready_unwinder), under
            // the watchdog. Its own imports are bound here at start like the rest.
            "fl_prewarm_unwinder",
            // The linker's bounds of the own-code section (report_writer.c): addresses, not calls.
            "__start_faultline_own_code", "__stop_faultline_own_code"
        ]
    }

    struct Findings {
        var missingObjects: [String] = []
        /// "x.c imports f" for each import that is neither allowed nor the core's own.
        var offending: [String] = []
        /// Allowed imports that crash_path_binding.c does not call once at start.
        var unbound: [String] = []
    }

    /// Reads the `<name>.c.o` objects in `directory` with `nm` (the architecture's own nm).
    static func check(objectsIn directory: String, nm: String, unwindPrefix: String) throws -> Findings {
        var findings = Findings()
        let all = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".c.o") }
        findings.missingObjects = crashPathObjects.map { $0 + ".c.o" }.filter { !all.contains($0) }
        func symbols(_ object: String, _ flags: String) throws -> [(type: String, name: String)] {
            try TestSupport.shell("\(nm) \(flags) '\(directory)/\(object)'").split(separator: "\n").compactMap { line in
                let f = line.split(separator: " ")
                return f.count >= 2 ? (String(f[f.count - 2]), String(f[f.count - 1])) : nil
            }
        }
        var crashPathFunctions = Set<String>(), coreData = Set<String>()
        for object in all {
            for s in try symbols(object, "--defined-only") {
                if "TtWw".contains(s.type) && crashPathObjects.contains(String(object.dropLast(4))) { crashPathFunctions.insert(s.name) }
                if "BbDdRrCc".contains(s.type) { coreData.insert(s.name) }
            }
        }
        let allowed = allowed(unwindPrefix: unwindPrefix)
        var imported = Set<String>()
        for object in crashPathObjects where all.contains(object + ".c.o") {
            for s in try symbols(object + ".c.o", "-u") {
                if allowed.contains(s.name) {
                    imported.insert(s.name)
                } else if !crashPathFunctions.contains(s.name) && !coreData.contains(s.name) {
                    findings.offending.append("\(object).c imports \(s.name)")
                }
            }
        }
        let binder = try String(
            contentsOf: TestSupport.repositoryRoot().appendingPathComponent("Sources/CFaultlineCrash/crash_path_binding.c"), encoding: .utf8)
        findings.unbound = imported.filter { name in
            let call = name.hasPrefix(unwindPrefix) ? "unw_" + name.dropFirst(unwindPrefix.count) : Substring(name)
            // errno and the section bounds are data, resolved by the linker, never called.
            return !["__errno_location", "__start_faultline_own_code", "__stop_faultline_own_code"].contains(name) && !binder.contains(call + "(")
        }.sorted()
        return findings
    }
}
