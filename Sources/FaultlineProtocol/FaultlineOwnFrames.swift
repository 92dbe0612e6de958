// Which frames of a stack are Faultline's own code: the one rule the SDK, `faultline symbolicate`,
// grouping, the API and the pages apply, so Faultline is never named as the culprit.
//
// Three ways a frame is known to be ours, each as early as it can be known:
// - the crash core marks, by address, frames in its own code section (the handler entry, the
//   thread-start wrapper, the C++ terminate handler): report field `faultline: true`;
// - a frame in a module that is Faultline's alone (the preload libraries) is ours whole;
// - once symbolicated, its function name: the crash core's entry points, the terminate handler,
//   and every Swift symbol of the `Faultline` module (capture, the logging and tracing wrappers).
// Events carry the outcome as `in_app: false` plus `data.faultline_sdk: true`.

/// Decides and marks Faultline's own frames.
public enum FaultlineOwnFrames {
    /// The key under a frame's `data` that marks it as Faultline's own.
    public static let marker = "faultline_sdk"

    /// The crash core's functions that can sit in a reported stack (its C names, which symbol
    /// tables keep even for `static` functions).
    static let crashCoreFunctions: Set<String> = [
        "fl_thread_trampoline", "fl_handle_signal", "fl_handle_crash", "fl_enter_fresh_stack", "fl_run_with_handler_mask",
        "fl_call_with_stack", "fl_run_on_roomy_stack", "fl_invoke", "fl_chain", "fl_forward_nested",
        "fl_answer_dump_request", "fl_watchdog_fired", "fl_add_all_threads",
        // The C++ terminate handler, mangled and demangled (the anonymous namespace is its name
        // in builds before it moved into `faultline`).
        "_ZN9faultline20record_and_terminateEv", "faultline::record_and_terminate()", "faultline::record_and_terminate",
        "_ZN12_GLOBAL__N_120record_and_terminateEv", "(anonymous namespace)::record_and_terminate()",
        "(anonymous namespace)::record_and_terminate"
    ]

    /// True for a function of ours, by its symbolicated name (demangled, mangled, or both).
    public static func isOwn(function: String?, rawFunction: String?) -> Bool {
        for name in [function, rawFunction].compactMap({ $0 }) where !name.isEmpty {
            if crashCoreFunctions.contains(name) || isSwiftSDKSymbol(name) { return true }
        }
        return false
    }

    /// True for a module that holds nothing but Faultline (the preload library and its C++ half).
    public static func isOwn(modulePath: String) -> Bool {
        if let own = isOwnASCII(modulePath: modulePath) { return own }
        return PathName.last(modulePath).hasPrefix(ownModulePrefix)
    }

    static let ownModulePrefix = "libfaultline-preload"

    /// `isOwn` over the bytes of an ASCII path (grouping asks it of every frame of every event);
    /// nil for any other path.
    private static func isOwnASCII(modulePath: String) -> Bool? {
        PathName.withLastOfASCII(modulePath) { $0.starts(with: ownModulePrefix.utf8) }
    }

    /// True when the frame (Sentry event JSON) already carries the marker.
    public static func isMarked(_ frame: JSONValue) -> Bool {
        frame["data"]?[marker]?.boolValue == true
    }

    /// Marks an event frame as ours: not the app's code, and says so.
    public static func mark(_ frame: inout JSONObject) {
        frame["in_app"] = false
        var data = frame["data"]?.objectValue ?? [:]
        data[marker] = true
        frame["data"] = .object(data)
    }

    /// A Swift symbol of the `Faultline` module: mangled (`$s9Faultline…`, the module name's length
    /// first, so `FaultlineApp` does not match) or demangled (`Faultline.…`, also as the subject of
    /// a closure, specialisation, thunk or static member).
    static func isSwiftSDKSymbol(_ name: String) -> Bool {
        if name.hasPrefix("$s9Faultline") || name.hasPrefix("_$s9Faultline") { return true }
        // Every demangled form below holds the bytes "Faultline.", and nearly no frame of a stack
        // does: a byte scan turns those away before the Character-wise searches below, each of
        // which builds a table (String.contains) — grouping asks this of every frame it hashes.
        guard Self.holdsBytes(name, "Faultline.") else { return false }
        let readable = CrashEvent.readableFunctionName(name)
        for lead in ["", "static "] where readable.hasPrefix(lead + "Faultline.") { return true }
        for joint in [" in ", " of ", " for "] {
            if readable.contains(joint + "Faultline.") || readable.contains(joint + "static Faultline.") { return true }
        }
        return false
    }

    /// Whether `needle`'s UTF-8 bytes occur in `haystack`'s (a match of Characters is always one of
    /// bytes, so false here means `contains` is false too).
    static func holdsBytes(_ haystack: String, _ needle: StaticString) -> Bool {
        var haystack = haystack
        return haystack.withUTF8 { h in
            let n = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
            guard let first = n.first, h.count >= n.count else { return n.isEmpty }
            var i = 0
            let last = h.count - n.count
            while i <= last {
                if h[i] == first {
                    var k = 1
                    while k < n.count && h[i + k] == n[k] { k += 1 }
                    if k == n.count { return true }
                }
                i += 1
            }
            return false
        }
    }
}
