// How many minidumps are decoded and walked at once, in all and per client address: the walk runs
// synchronously in the request (every thread, with CFI), and a dump's inflation, its copy for the
// reader and its walked event are held meanwhile — so one address cannot take every core, and the
// memory dumps hold is bounded by the slots, not by the connection limit.
import Foundation

final class MinidumpWalkSlots: @unchecked Sendable {
    /// One taken slot; `release()` gives it back (once; later calls do nothing).
    final class Slot: @unchecked Sendable {
        private let slots: MinidumpWalkSlots
        private let address: String
        private var held = true
        fileprivate init(_ slots: MinidumpWalkSlots, _ address: String) { self.slots = slots; self.address = address }

        func release() {
            slots.lock.withLock {
                guard held else { return }
                held = false
                slots.total -= 1
                slots.byAddress[address, default: 1] -= 1
                if slots.byAddress[address] == 0 { slots.byAddress[address] = nil }
            }
        }
    }

    let serverWide: Int
    let perAddress: Int
    private let lock = NSLock()
    private var total = 0
    private var byAddress: [String: Int] = [:]

    init(limits: IngestLimits) {
        serverWide = max(1, limits.maxMinidumpWalks)
        perAddress = max(1, limits.maxMinidumpWalksPerAddress)
    }

    /// A slot for a dump from `address`, or 429 when that address has `perAddress` dumps in
    /// flight, 503 when the server has `serverWide` (each with Retry-After: Crashpad keeps the
    /// report and uploads it again).
    func take(for address: String) throws(IngestError) -> Slot {
        let refusal: IngestError? = lock.withLock {
            if byAddress[address, default: 0] >= perAddress {
                return .busy("minidump: \(perAddress) dump(s) from this address are being walked; retry shortly", serverWide: false)
            }
            if total >= serverWide { return .busy("minidump: the server is walking \(serverWide) dumps; retry shortly", serverWide: true) }
            total += 1
            byAddress[address, default: 0] += 1
            return nil
        }
        if let refusal { throw refusal }
        return Slot(self, address)
    }
}
