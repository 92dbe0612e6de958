// How many request-body bytes the server holds in memory at once: in total and per client
// address, whatever key or token the request carries (a public key ships in every app).
import Foundation
import Synchronization

/// Bodies are buffered whole before their handler runs, so the bytes held at once are the sum of
/// the bodies in flight. A body larger than `uncountedBytes` reserves its declared length (or,
/// without one, its length so far) before its bytes are kept; a reservation that would pass a
/// budget is refused (503 when the server's is spent, 429 when the address's is), so the memory
/// bodies can take is bounded by the two budgets plus connections × `uncountedBytes`.
final class BodyBudget: Sendable {
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
    private struct Held {
        var total = 0
        var byAddress: [String: Int] = [:]
        var refusedCounts = (server: Int64(0), address: Int64(0))
    }
    private let held = Mutex(Held())

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
        let address = claim.address
        let refusal: Refusal? = held.withLock { held in
            let addressHeld = held.byAddress[address] ?? 0
            // The address first: a client over its own share hears 429 (slow down), not that the
            // server is busy.
            if perAddressBytes > 0 && addressHeld + more > perAddressBytes {
                held.refusedCounts.address += 1
                return .address
            }
            if serverBytes > 0 && held.total + more > serverBytes {
                held.refusedCounts.server += 1
                return .server
            }
            held.total += more
            held.byAddress[address] = addressHeld + more
            return nil
        }
        if refusal == nil { claim.bytes = wanted }
        return refusal
    }

    /// Returns what `claim` holds (idempotent).
    func release(_ claim: Claim) {
        guard claim.bytes > 0 else { return }
        let (address, bytes) = (claim.address, claim.bytes)
        held.withLock { held in
            held.total -= bytes
            let left = (held.byAddress[address] ?? 0) - bytes
            held.byAddress[address] = left > 0 ? left : nil
        }
        claim.bytes = 0
    }

    /// Bytes reserved now (all addresses).
    var reserved: Int { held.withLock { $0.total } }

    /// Reservations refused since start, by which budget was spent.
    var refusals: (server: Int64, address: Int64) { held.withLock { $0.refusedCounts } }
}
