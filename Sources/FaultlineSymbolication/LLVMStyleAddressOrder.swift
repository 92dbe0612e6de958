// Address mode's lookup order: the input's address lines sorted by address.

extension LLVMStyleSymbolizer {
    /// The address lines as (address, line), sorted by address, lines of one address in input
    /// order. Lookups in this order walk the index's tables forward (`DWARFIndex.SearchHints`).
    ///
    /// When the span of the addresses and the line number fit one 64-bit key together (address −
    /// lowest address above the line number's bits, as any one module's addresses do), the order
    /// is those keys, radix-sorted on the address bits alone: the keys start in line order and
    /// the sort is stable. Read back from the keys, the order needs no second array of pairs
    /// (its pages faulted in). Otherwise the keys are line numbers sorted by their address.
    struct AddressOrder {
        /// Packed (address − lowest, line) keys, or line numbers when `packed` is false.
        private let keys: [UInt64]
        private let packed: Bool
        private let lineBits: UInt64, lowest: UInt64
        /// The addresses by line (read when the keys are line numbers).
        private let lineAddress: [UInt64]

        var count: Int { keys.count }

        init(_ lineAddress: [UInt64], _ isAddress: [Bool]) {
            self.lineAddress = lineAddress
            lineBits = UInt64(max(1, UInt64.bitWidth - UInt64(lineAddress.count).leadingZeroBitCount))
            var lowest = UInt64.max, highest: UInt64 = 0
            for i in lineAddress.indices where isAddress[i] {
                lowest = min(lowest, lineAddress[i]); highest = max(highest, lineAddress[i])
            }
            self.lowest = lowest
            guard lowest <= highest else { keys = []; packed = true; return }
            let span = highest - lowest
            var keys: [UInt64] = []
            keys.reserveCapacity(lineAddress.count)
            packed = span >> (64 - lineBits) == 0
            if packed {
                for i in lineAddress.indices where isAddress[i] { keys.append((lineAddress[i] - lowest) << lineBits | UInt64(i)) }
                let spanBits = UInt64.bitWidth - span.leadingZeroBitCount
                AddressOrder.radixSort(&keys, fromBit: Int(lineBits), toBit: Int(lineBits) + spanBits)
            } else {
                for i in lineAddress.indices where isAddress[i] { keys.append(UInt64(i)) }
                keys.sort { lineAddress[Int($0)] < lineAddress[Int($1)] || (lineAddress[Int($0)] == lineAddress[Int($1)] && $0 < $1) }
            }
            self.keys = keys
        }

        subscript(k: Int) -> (address: UInt64, line: Int32) {
            AddressOrder.entry(keys[k], packed, lineBits, lowest, lineAddress)
        }

        @inline(__always) private static func entry<C: Collection<UInt64>>(
            _ key: UInt64, _ packed: Bool, _ lineBits: UInt64, _ lowest: UInt64, _ lineAddress: C
        ) -> (address: UInt64, line: Int32) where C.Index == Int {
            if packed { return ((key >> lineBits) &+ lowest, Int32(truncatingIfNeeded: key & ((1 << lineBits) - 1))) }
            return (lineAddress[Int(key)], Int32(truncatingIfNeeded: key))
        }

        /// The order over buffer pointers, for loops that must not touch reference counts.
        struct View: @unchecked Sendable {
            fileprivate let keys: UnsafeBufferPointer<UInt64>
            fileprivate let packed: Bool
            fileprivate let lineBits: UInt64, lowest: UInt64
            fileprivate let lineAddress: UnsafeBufferPointer<UInt64>
            var count: Int { keys.count }
            @inline(__always) subscript(k: Int) -> (address: UInt64, line: Int32) {
                AddressOrder.entry(keys[k], packed, lineBits, lowest, lineAddress)
            }
        }

        /// Calls `body` with a view valid until it returns.
        func withView<R>(_ body: (View) -> R) -> R {
            keys.withUnsafeBufferPointer { keys in
                lineAddress.withUnsafeBufferPointer { lineAddress in
                    body(View(keys: keys, packed: packed, lineBits: lineBits, lowest: lowest, lineAddress: lineAddress))
                }
            }
        }

        /// Stable LSD radix sort of `keys` by their bits `fromBit..<toBit`, 11 bits a pass (so the
        /// counters fit in the L1 cache). A pass whose digit is the same in every key is skipped.
        static func radixSort(_ keys: inout [UInt64], fromBit: Int, toBit: Int) {
            guard keys.count > 1, fromBit < toBit else { return }
            let digitBits = 11
            var other = [UInt64](repeating: 0, count: keys.count)
            var counts = [Int](repeating: 0, count: 1 << digitBits)
            for shift in stride(from: fromBit, to: toBit, by: digitBits) {
                let mask = UInt64(1) << UInt64(min(digitBits, toBit - shift)) - 1
                let s = UInt64(shift)
                for i in counts.indices { counts[i] = 0 }
                for k in keys { counts[Int(truncatingIfNeeded: (k >> s) & mask)] += 1 }
                if counts[Int(truncatingIfNeeded: (keys[0] >> s) & mask)] == keys.count { continue }
                var sum = 0
                for i in counts.indices { let c = counts[i]; counts[i] = sum; sum += c }
                for k in keys {
                    let d = Int(truncatingIfNeeded: (k >> s) & mask)
                    other[counts[d]] = k
                    counts[d] += 1
                }
                swap(&keys, &other)
            }
        }
    }
}
