// libFuzzer target: who the client is behind a trusted proxy (X-Forwarded-For, RFC 7239
// Forwarded) and Content-Length values. Input lines: X-Forwarded-For, Forwarded, Content-Length.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForwarded(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let field = { (i: Int) -> String? in i < lines.count ? lines[i] : nil }
    let proxies = TrustedProxies(parsing: ["127.0.0.0/8", "10.0.0.0/8"])!
    let peer: UInt32 = 0x7F00_0001
    for (xff, forwarded) in [(field(0), field(1)), (nil, field(1)), (field(0), nil)] {
        let client = proxies.clientAddress(peer: peer, forwardedFor: xff, forwarded: forwarded)
        precondition(!client.isEmpty && client.count <= 64, "a client address is 1–64 characters")
        // An untrusted peer's headers are never believed.
        precondition(proxies.clientAddress(peer: 0xC000_0207, forwardedFor: xff, forwarded: forwarded) == "192.0.2.7")
    }
    if let value = field(2), let length = ContentLength.parse(value) {
        let digits = value.trimmingCharacters(in: .whitespaces)
        precondition(digits.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }, "only digits make a length")
        if let exact = UInt64(digits) { precondition(exact == length) } else { precondition(length == UInt64.max) }
    }
    _ = TrustedProxies.network(parsing: field(0) ?? "")
    return 0
}
