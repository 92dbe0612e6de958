// Requests in flight per client address when the client came through a trusted proxy: there
// every connection has the proxy's address, so the per-address connection cap at accept
// (CFaultlineHTTPShim) cannot tell clients apart; this cap, applied once the headers name the
// client, does.
import Foundation

final class ForwardedClientCap: @unchecked Sendable {
    let limit: Int
    private let lock = NSLock()
    private var inFlight: [String: Int] = [:]
    private var refusedCount: Int64 = 0

    /// 0: no limit.
    init(limit: Int) { self.limit = limit }

    /// Counts a request from `address`; false (and nothing counted) when it already has `limit`.
    func enter(_ address: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let now = inFlight[address] ?? 0
        if limit > 0 && now >= limit {
            refusedCount += 1
            return false
        }
        inFlight[address] = now + 1
        return true
    }

    func leave(_ address: String) {
        lock.lock()
        defer { lock.unlock() }
        let left = (inFlight[address] ?? 0) - 1
        inFlight[address] = left > 0 ? left : nil
    }

    var refusals: Int64 { lock.lock(); defer { lock.unlock() }; return refusedCount }
}
