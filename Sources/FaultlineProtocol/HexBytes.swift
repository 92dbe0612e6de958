// Hex encoding and decoding without Foundation.

/// Hex helpers without Foundation so the crash-adjacent code paths stay light.
public enum HexBytes {
    public static func encode(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](); out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }
    public static func decode(_ hex: String) -> [UInt8]? {
        var hex = hex
        return hex.withUTF8 { u -> [UInt8]? in
            guard u.count % 2 == 0 else { return nil }
            var valid = true
            let out = [UInt8](unsafeUninitializedCapacity: u.count / 2) { buffer, initialized in
                for j in 0..<u.count / 2 {
                    guard let hi = nibble(u[2 * j]), let lo = nibble(u[2 * j + 1]) else {
                        valid = false
                        break
                    }
                    buffer[j] = hi << 4 | lo
                    initialized = j + 1
                }
            }
            return valid ? out : nil
        }
    }
    @inline(__always) public static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
