// Busy processes that keep every core occupied while a test runs, so the crash path is exercised
// as on a loaded machine (the background preparation thread gets scheduled late, or not at all).
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// `workers` shell busy loops, stopped by `stop()` (or when the test process exits: each loop
/// also ends on its own after `limit` seconds, so a crashed test run leaves no spinner behind).
public final class CPULoad {
    private var processes: [Process] = []

    public init(workers: Int = 2, limit: Int = 600) throws {
        for _ in 0..<workers {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = [
                "-c", "end=$(( $(date +%s) + \(limit) )); while [ $(date +%s) -lt $end ]; do i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; done"
            ]
            try p.run()
            processes.append(p)
        }
    }

    public func stop() {
        for p in processes { p.end(with: SIGKILL) }
        processes = []
    }

    deinit { stop() }
}
