// How many minidumps are decoded and walked at once, in all and per client address: the walk runs
// synchronously in the request (every thread, with CFI), and a dump's inflation, its copy for the
// reader and its walked event are held meanwhile — so one address cannot take every core, and the
// memory dumps hold is bounded by the slots, not by the connection limit.
import Foundation
import Synchronization

final class MinidumpWalkSlots: Sendable {
    /// One taken slot; `release()` gives it back (once; later calls do nothing).
    final class Slot: Sendable {
        private let slots: MinidumpWalkSlots
        private let address: String
        private let held = Mutex(true)
        fileprivate init(_ slots: MinidumpWalkSlots, _ address: String) { self.slots = slots; self.address = address }

        func release() {
            guard
                held.withLock({ h in
                    defer { h = false }; return h
                })
            else { return }
            slots.giveBack(for: address)
        }
    }

    private struct Counts {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    let serverWide: Int
    let perAddress: Int
    private let counts = Mutex(Counts())

    init(limits: IngestLimits) {
        serverWide = max(1, limits.maxMinidumpWalks)
        perAddress = max(1, limits.maxMinidumpWalksPerAddress)
    }

    /// A slot for a dump from `address`, or 429 when that address has `perAddress` dumps in
    /// flight, 503 when the server has `serverWide` (each with Retry-After: Crashpad keeps the
    /// report and uploads it again).
    func take(for address: String) throws(IngestError) -> Slot {
        let refusal: IngestError? = counts.withLock { c in
            if c.byAddress[address, default: 0] >= perAddress {
                return .busy("minidump: \(perAddress) dump(s) from this address are being walked; retry shortly", serverWide: false)
            }
            if c.total >= serverWide { return .busy("minidump: the server is walking \(serverWide) dumps; retry shortly", serverWide: true) }
            c.total += 1
            c.byAddress[address, default: 0] += 1
            return nil
        }
        if let refusal { throw refusal }
        return Slot(self, address)
    }

    private func giveBack(for address: String) {
        counts.withLock { c in
            c.total -= 1
            c.byAddress[address, default: 1] -= 1
            if c.byAddress[address] == 0 { c.byAddress[address] = nil }
        }
    }
}
