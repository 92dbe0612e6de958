// Swift-level faults, kept out of main.swift so they are not main-actor isolated.
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
