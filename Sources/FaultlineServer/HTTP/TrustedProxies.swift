// Which peers may say who the client is (X-Forwarded-For / Forwarded), and who the client of a
// request therefore is: the peer itself, unless the peer is a trusted proxy.
import Foundation

public struct TrustedProxies: Sendable, Equatable {
    /// An IPv4 network in host byte order: an address is inside when `address & mask == network`.
    public struct Network: Sendable, Equatable {
        public var network: UInt32
        public var mask: UInt32
        public func contains(_ address: UInt32) -> Bool { address & mask == network }
    }

    public private(set) var networks: [Network] = []

    public init() {}

    /// `ADDR` or `ADDR/BITS` (IPv4) each; nil if one of them is neither.
    public init?(parsing specs: [String]) {
        for spec in specs {
            guard let n = Self.network(parsing: spec) else { return nil }
            networks.append(n)
        }
    }

    public mutating func add(_ network: Network) { networks.append(network) }

    public static func network(parsing spec: String) -> Network? {
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = ipv4(parsing: String(parts[0])) else { return nil }
        var bits = 32
        if parts.count == 2 {
            guard let b = Int(parts[1]), (0...32).contains(b) else { return nil }
            bits = b
        }
        let mask: UInt32 = bits == 0 ? 0 : UInt32.max << UInt32(32 - bits)
        return Network(network: address & mask, mask: mask)
    }

    public func contains(_ address: UInt32) -> Bool { networks.contains { $0.contains(address) } }

    /// The address a request is attributed to (for per-address caps). A trusted peer's
    /// `X-Forwarded-For` (else `Forwarded: for=`) is read from the right: each proxy appends the
    /// address it received from, so the rightmost entry that is not itself a trusted proxy is
    /// the first one no trusted party vouches past. Anything a client wrote further left is not
    /// believed. Without such a header the peer itself is the client.
    public func clientAddress(peer: UInt32, forwardedFor: String?, forwarded: String?) -> String {
        let peerText = Self.text(peer)
        guard contains(peer) else { return peerText }
        var hops: [String] = []
        if let xff = forwardedFor {
            hops = xff.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        } else if let forwarded {
            hops = Self.forElements(forwarded)
        }
        hops = hops.filter { !$0.isEmpty }
        guard !hops.isEmpty else { return peerText }
        // A hop that normalises to nothing (":", "[]") names no one: the proxy itself is the client.
        for hop in hops.reversed() {
            if let v4 = Self.ipv4(parsing: Self.withoutPort(hop)), contains(v4) { continue }
            let client = Self.normalised(hop)
            return client.isEmpty ? peerText : client
        }
        let first = Self.normalised(hops[0])
        return first.isEmpty ? peerText : first
    }

    /// RFC 7239 `for=` values, in order (`for=192.0.2.43;proto=https, for="[2001:db8::1]:80"`).
    static func forElements(_ header: String) -> [String] {
        header.split(separator: ",").compactMap { element in
            for pair in element.split(separator: ";") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                guard kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
                return kv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            return nil
        }
    }

    /// The address without a port (`1.2.3.4:80`, `[::1]:80`) or brackets, lowercased and cut to
    /// 64 characters so a client cannot make a cap's table keys large. An IPv6 address stands for
    /// its /64 (`2001:db8:1:2::/64`): one subscriber holds a whole /64, so keying per address
    /// would give every per-address cap 2^64 fresh keys; an IPv4-mapped one is its IPv4 address.
    static func normalised(_ hop: String) -> String {
        let bare = withoutPort(hop).lowercased()
        var v6 = in6_addr()
        guard bare.contains(":"), inet_pton(AF_INET6, bare, &v6) == 1 else { return String(bare.prefix(64)) }
        let b = withUnsafeBytes(of: v6) { Array($0) }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff { return "\(b[12]).\(b[13]).\(b[14]).\(b[15])" }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(b[$0]) << 8 | UInt16(b[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    static func withoutPort(_ hop: String) -> String {
        if hop.hasPrefix("["), let end = hop.firstIndex(of: "]") { return String(hop[hop.index(after: hop.startIndex)..<end]) }
        let colons = hop.filter { $0 == ":" }.count
        if colons == 1, let colon = hop.firstIndex(of: ":") { return String(hop[..<colon]) }
        return hop
    }

    /// Dotted-quad IPv4 to host byte order.
    static func ipv4(parsing text: String) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for p in parts {
            guard !p.isEmpty, p.count <= 3, p.allSatisfy({ $0.isASCII && $0.isNumber }), let octet = UInt32(p), octet <= 255 else { return nil }
            value = value << 8 | octet
        }
        return value
    }

    static func text(_ address: UInt32) -> String {
        "\(address >> 24).\(address >> 16 & 0xff).\(address >> 8 & 0xff).\(address & 0xff)"
    }
}
