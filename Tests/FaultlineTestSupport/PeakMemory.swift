// Peak memory of a child process, read from /proc/<pid>/status (VmHWM) while it runs, for tests
// that bound what an attack costs; the child is killed once it passes the bound, so a regression
// fails the test instead of exhausting the machine.
import Foundation

public enum PeakMemory {
    /// VmHWM (the resident set's high-water mark) of a live process, in bytes; nil once it is gone.
    public static func highWaterMark(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kib * 1024
    }

    public struct Measured: CustomStringConvertible {
        public var outcome: TestSupport.Outcome
        /// The highest VmHWM read while the child ran (a lower bound of its true peak: add what the
        /// child reports of itself at exit when it does).
        public var observedPeak: Int
        /// The child passed `limit` and was killed.
        public var killedAtLimit: Bool
        public var description: String {
            "peak \(observedPeak / 1024) KiB\(killedAtLimit ? " (killed at the limit)" : "")\n\(outcome)"
        }
    }

    /// Runs a program like `TestSupport.run`, reading its VmHWM as it runs; kills it past `limit` bytes.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:],
        limit: Int, timeout: TimeInterval = 60
    ) throws -> Measured {
        var peak = 0
        var killed = false
        let outcome = try TestSupport.run(executable, arguments, environment: environment, timeout: timeout) { pid in
            if let now = highWaterMark(of: pid) { peak = max(peak, now) }
            if peak > limit { killed = true }
            return !killed
        }
        return Measured(outcome: outcome, observedPeak: peak, killedAtLimit: killed)
    }
}
