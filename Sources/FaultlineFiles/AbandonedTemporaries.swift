// AtomicFile's temporaries that no writer will ever rename into place (a writer killed mid-write
// leaves one behind), and the sweep that removes them.
import FoundationEssentials
import Glibc

extension AtomicFile {
    /// A temporary this old is abandoned whoever wrote it: a write takes far less, and its writer's
    /// pid may since have gone to another process (or belong to another pid namespace).
    public static let abandonedAfterSeconds: Double = 3600

    /// The pid of the process that wrote temporary `name` (AtomicFile.write names it
    /// `.<file>.<pid>.<counter>.<random>.tmp`); nil for a name of another shape.
    static func writerPID(ofTemporary name: String) -> pid_t? {
        let fields = name.split(separator: ".", omittingEmptySubsequences: false)
        guard isTemporary(name), fields.count >= 5 else { return nil }
        return pid_t(fields[fields.count - 4])
    }

    /// Removes the temporaries in `directory` whose writer process is gone, or that are older
    /// than `abandonedAfterSeconds`; a live writer's fresh one is left to be renamed into place.
    public static func removeAbandonedTemporaries(in directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let now = Date().timeIntervalSince1970
        for name in names where isTemporary(name) {
            let path = directory + "/" + name
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            let age = now - (Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
            let writerGone = writerPID(ofTemporary: name).map { pid in kill(pid, 0) != 0 && errno == ESRCH } ?? false
            if writerGone || age > abandonedAfterSeconds { unlink(path) }
        }
    }
}
