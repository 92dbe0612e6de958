// Requests in flight per client address when the client came through a trusted proxy: there
// every connection has the proxy's address, so the per-address connection cap at accept
// (CFaultlineHTTPShim) cannot tell clients apart; this cap, applied once the headers name the
// client, does.
import Foundation
import Synchronization

final class ForwardedClientCap: Sendable {
    let limit: Int
    private struct Counts {
        var inFlight: [String: Int] = [:]
        var refused: Int64 = 0
    }
    private let counts = Mutex(Counts())

    /// 0: no limit.
    init(limit: Int) { self.limit = limit }

    /// Counts a request from `address`; false (and nothing counted) when it already has `limit`.
    func enter(_ address: String) -> Bool {
        counts.withLock { c in
            let now = c.inFlight[address] ?? 0
            if limit > 0 && now >= limit {
                c.refused += 1
                return false
            }
            c.inFlight[address] = now + 1
            return true
        }
    }

    func leave(_ address: String) {
        counts.withLock { c in
            let left = (c.inFlight[address] ?? 0) - 1
            c.inFlight[address] = left > 0 ? left : nil
        }
    }

    var refusals: Int64 { counts.withLock { $0.refused } }
}
