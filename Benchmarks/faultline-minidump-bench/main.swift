// Measures the minidump path on real dumps (run through tools/measure-minidump, release build):
// reading a dump, walking every thread with the module files found (CFI) and with none (frame
// pointers and scanning only), and building the event; median time per operation, and each
// walk as a ratio against reading the same dump, all in the same run.
//
//   faultline-minidump-bench RUNS DUMP [MODULE-FILE…]
//     MODULE-FILE: files offered to the walk for the module of the same path
import FaultlineMinidump
import FaultlineProtocol
import Foundation

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s[s.count / 2] }

let args = Array(CommandLine.arguments.dropFirst())
guard args.count >= 2, let runs = Int(args[0]), let data = FileManager.default.contents(atPath: args[1]) else {
    FileHandle.standardError.write("usage: faultline-minidump-bench RUNS DUMP [MODULE-FILE...]\n".data(using: .utf8)!)
    exit(2)
}
let bytes = [UInt8](data)
let offered = Array(args.dropFirst(2))

let dump = try Minidump(bytes: bytes)
// The dump was written moments ago on this machine from these very files, so a module's own path
// (or, for Crashpad's bare sonames, the system library directory) or an offered file of the same
// name is its file.
var files: [BuildID: String] = [:]
for m in dump.modules {
    guard let id = m.buildID else { continue }
    let own = m.path.hasPrefix("/") ? [m.path] : ["/lib/x86_64-linux-gnu/" + m.path]
    if let f = (own + offered.filter { $0 == m.path }).first(where: { FileManager.default.fileExists(atPath: $0) }) { files[id] = f }
}
let table = files
let lookup = ModuleFileLookup { id, _, kind in kind == .executable ? id.flatMap { table[$0] } : nil }

func measure(_ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs {
        let t = now()
        try body()
        times.append(Double(now() - t) / 1000)
    }
    return median(times)
}

let read = try measure { _ = try Minidump(bytes: bytes) }
var cfiWalk = MinidumpStackwalker(lookup: lookup).walk(dump)
let withFiles = measure { cfiWalk = MinidumpStackwalker(lookup: lookup).walk(dump) }
var bareWalk = cfiWalk
let withoutFiles = measure { bareWalk = MinidumpStackwalker().walk(dump) }
let event = measure { _ = MinidumpEvent.make(dump: dump, walk: cfiWalk, eventID: "0", timestamp: 0).serialized() }

func frames(_ w: MinidumpStackwalk) -> String {
    let all = w.threads.flatMap(\.frames)
    let byTrust = Dictionary(grouping: all, by: \.trust).mapValues(\.count)
    return "\(all.count) frames (" + ["context", "cfi", "fp", "scan"].map { "\($0) \(byTrust[FrameTrust(rawValue: $0)!] ?? 0)" }.joined(separator: ", ") + ")"
}
print("dump: \(bytes.count) bytes, \(dump.threads.count) threads, \(dump.modules.count) modules, \(files.count) module files found; \(runs) runs, medians")
print(String(format: "read             %9.1f µs", read))
print(String(format: "walk, CFI        %9.1f µs  (%.1fx reading)  %@", withFiles, withFiles / read, frames(cfiWalk)))
print(String(format: "walk, no files   %9.1f µs  (%.1fx reading)  %@", withoutFiles, withoutFiles / read, frames(bareWalk)))
print(String(format: "event + JSON     %9.1f µs", event))
