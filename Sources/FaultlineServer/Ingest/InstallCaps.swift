// How much one sender may submit per window, by what it submits. Events (crashes, errors) are
// what the cap protects against one install flooding with; sessions, logs and transactions come
// with every request of a healthy backend, so they count in a window of their own with a hundred
// times the room. A sender that names no install is counted by its address — a backend host, or
// many users behind one NAT — and gets ten times an install's room. (One window for everything,
// per address, refused a web backend's errors after an hour of ordinary traffic.)
import Foundation
import FaultlineProtocol

struct InstallCaps {
    let limiter: InstallVolumeLimiter

    /// Room for other items, in events' room.
    static let itemsScale = 100
    /// Room for a sender known only by its address, in an install's.
    static let addressScale = 10

    enum Verdict: Equatable {
        case admitted
        /// The event is admitted; the other items are over their window and are not stored.
        case withoutItems
        case refused(retryAfter: Int, categories: [String])
    }

    /// Counts an event (if any) and `items` for `sender`.
    func admit(projectID: Int64, sender: String, namedInstall: Bool, hasEvent: Bool, items: [Envelope.Item], now: Double) -> Verdict {
        let base = limiter.defaultLimit
        guard base > 0 else { return .admitted }
        // The operator's number, scaled: saturating, so a huge --install-cap means no cap, not a trap.
        func scaled(_ factors: Int...) -> Int {
            factors.reduce(base) { n, f in
                let (r, overflow) = n.multipliedReportingOverflow(by: f)
                return overflow ? Int.max : r
            }
        }
        let scale = namedInstall ? 1 : Self.addressScale
        if hasEvent, let retry = limiter.admit(projectID: projectID, installID: sender, count: 1, limit: scaled(scale), now: now) {
            return .refused(retryAfter: retry, categories: ["error", "default"])
        }
        guard !items.isEmpty,
            let retry = limiter.admit(
                projectID: projectID, installID: sender + " items", count: items.count, limit: scaled(Self.itemsScale, scale), now: now)
        else { return .admitted }
        if hasEvent { return .withoutItems }
        return .refused(retryAfter: retry, categories: Array(Set(items.map { DataCategory.of(itemType: $0.type) })).sorted())
    }

}
