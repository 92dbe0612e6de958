// Swift-level faults, kept out of main.swift so they are not main-actor isolated.
import CCrashProbes
import Foundation

func crasherOption(_ name: String, in args: [String]) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

@inline(never) @Sendable func recurseForever(_ n: Int) -> Int {
    var pad = (n, n &+ 1, n &+ 2, n &+ 3)
    withUnsafeMutablePointer(to: &pad) { _ in }
    return recurseForever(n &+ 1) &+ pad.0
}
@inline(never) @Sendable func forceUnwrapNil() -> Int {
    let value: Int? = ProcessInfo.processInfo.environment["FAULTLINE_NEVER_SET_\(getpid())"].flatMap(Int.init)
    return value!
}
@inline(never) @Sendable func indexOutOfRange() -> Int {
    let array = [1, 2, 3]
    return array[array.count + Int(getpid() % 1)]
}
@inline(never) @Sendable func integerOverflow() -> Int {
    var x = Int.max - Int(getpid() % 1)
    x += 1
    return x
}

/// Resident set size from /proc/self/statm.
func residentBytes() -> Int {
    guard let s = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let f = s.split(separator: " ")
    return f.count > 1 ? (Int(f[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

enum CrasherError: Error, CustomStringConvertible {
    case numbered(Int)
    var description: String { if case .numbered(let n) = self { return "crasher error #\(n)" }; return "" }
}

// Swift async crashes (issue 17): a force-unwrap three awaits deep, each caller on its own
// lines so the report's file:line tells them apart. The nil comes from the environment, so -O
// cannot fold it away.
@inline(never) func asyncLeaf(_ v: Int?) async -> Int {
    await Task.yield()
    return v!
}
@inline(never) func asyncMiddle(_ v: Int?) async -> Int {
    let r = await asyncLeaf(v)
    return r &+ 1
}
@inline(never) func asyncOuter(_ v: Int?) async -> Int {
    let r = await asyncMiddle(v)
    return r &+ 2
}
func nothing() -> Int? { ProcessInfo.processInfo.environment["FAULTLINE_NEVER_SET_\(getpid())"].flatMap(Int.init) }

actor AsyncCounter {
    var total = 0
    @inline(never) func add() async -> Int {
        let r = await asyncOuter(nothing())
        total &+= r
        return total
    }
}

/// Corrupts the calling async function's context (probe_corrupt_async_context) and crashes.
@inline(never) func asyncCorrupt(_ how: Int32) async -> Int {
    await Task.yield()
    return Int(probe_corrupt_async_context(how))
}
@inline(never) func asyncCorruptCaller(_ how: Int32) async -> Int {
    let r = await asyncCorrupt(how)
    return r &+ 1
}

/// `Task { }` from a nonisolated function: on the global executor (from main.swift's top level it
/// would inherit the main actor, which the waiting main thread blocks).
func startUnstructuredTask(_ done: DispatchSemaphore) {
    Task {
        print(await asyncOuter(nothing())); done.signal()
    }
}
