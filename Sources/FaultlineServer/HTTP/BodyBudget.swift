// How many request-body bytes the server holds in memory at once: in total and per client
// address, whatever key or token the request carries (a public key ships in every app).
import Foundation

/// Bodies are buffered whole before their handler runs, so the bytes held at once are the sum of
/// the bodies in flight. A body larger than `uncountedBytes` reserves its declared length (or,
/// without one, its length so far) before its bytes are kept; a reservation that would pass a
/// budget is refused (503 when the server's is spent, 429 when the address's is), so the memory
/// bodies can take is bounded by the two budgets plus connections × `uncountedBytes`.
final class BodyBudget: @unchecked Sendable {
    /// Bodies up to this size are not counted: the connection limit bounds them (1,024 × 64 KiB),
    /// and small events still get through while large bodies fill the budget.
    static let uncountedBytes = 64 * 1024

    enum Refusal: Equatable {
        /// The server's budget is spent: 503, try later.
        case server
        /// This address's budget is spent: 429.
        case address
    }

    /// What one request has reserved; released when the request ends.
    final class Claim {
        let address: String
        fileprivate(set) var bytes = 0
        init(address: String) { self.address = address }
    }

    let serverBytes: Int
    let perAddressBytes: Int
    private let lock = NSLock()
    private var total = 0
    private var byAddress: [String: Int] = [:]
    private var refusedCounts = (server: Int64(0), address: Int64(0))

    /// 0 for either budget: no limit.
    init(serverBytes: Int, perAddressBytes: Int) {
        self.serverBytes = serverBytes
        self.perAddressBytes = perAddressBytes
    }

    /// Raises `claim` to cover a body of `bodyBytes`; nil when granted (or already covered).
    func extend(_ claim: Claim, toBodyBytes bodyBytes: Int) -> Refusal? {
        let wanted = bodyBytes > Self.uncountedBytes ? bodyBytes : 0
        let more = wanted - claim.bytes
        guard more > 0 else { return nil }
        lock.lock()
        defer { lock.unlock() }
        let addressHeld = byAddress[claim.address] ?? 0
        // The address first: a client over its own share hears 429 (slow down), not that the
        // server is busy.
        if perAddressBytes > 0 && addressHeld + more > perAddressBytes {
            refusedCounts.address += 1
            return .address
        }
        if serverBytes > 0 && total + more > serverBytes {
            refusedCounts.server += 1
            return .server
        }
        total += more
        byAddress[claim.address] = addressHeld + more
        claim.bytes = wanted
        return nil
    }

    /// Returns what `claim` holds (idempotent).
    func release(_ claim: Claim) {
        guard claim.bytes > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        total -= claim.bytes
        let left = (byAddress[claim.address] ?? 0) - claim.bytes
        byAddress[claim.address] = left > 0 ? left : nil
        claim.bytes = 0
    }

    /// Bytes reserved now (all addresses).
    var reserved: Int { lock.lock(); defer { lock.unlock() }; return total }

    /// Reservations refused since start, by which budget was spent.
    var refusals: (server: Int64, address: Int64) { lock.lock(); defer { lock.unlock() }; return refusedCounts }
}
