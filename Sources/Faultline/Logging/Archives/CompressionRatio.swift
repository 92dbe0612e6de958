// What a rolled log will weigh once gzipped: the byte cap counts a `.log` still waiting for
// compression (or still being written) at this estimate, corrected by every archive made.
import Synchronization

final class CompressionRatio: Sendable {
    /// Until this process has made an archive: what the file log's lines typically come to.
    static let typical = 0.2

    private let totals = Mutex<(raw: Int, compressed: Int)>((0, 0))

    /// One archive made: `raw` bytes of log became `compressed` bytes of gzip.
    func record(raw: Int, compressed: Int) {
        guard raw > 0 else { return }
        totals.withLock { t in
            t.raw += raw
            t.compressed += compressed
        }
    }

    /// Compressed bytes per raw byte, over the archives this process made.
    var current: Double {
        let t = totals.withLock { $0 }
        return t.raw > 0 ? Double(t.compressed) / Double(t.raw) : Self.typical
    }
}
