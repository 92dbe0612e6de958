// The one double format (JSONWriter's file comment states it), written into the caller's memory:
// the logging hot path writes straight into a crash-ring slot and must not allocate a String per
// number, as `description` does.

/// The standard library's shortest round-trip formatter, the one `Double.description` calls
/// (exported by libswiftCore and its static archive alike, kept for inlinable code's ABI). Its
/// arguments are a pointer, integers, a double and a flag, passed alike by the C and Swift
/// conventions. It writes at most `bufferLength` bytes, no terminator, and returns their count.
/// The buffer must hold ASCII zeros on entry: this toolchain's version leaves the leading "0" of
/// "0.3" unwritten (later versions fill the buffer themselves). Its behaviour is not an API
/// promise: DoubleTextTests holds it to `description` on every kind of value, and must pass on
/// every toolchain this is built with.
@_silgen_name("swift_float64ToString")
private func runtimeFloat64ToString(
    _ textBuffer: UnsafeMutablePointer<UInt8>, _ bufferLength: UInt, _ value: Double, _ debug: Bool
) -> UInt64

/// A double as JSON text: a whole number below 1e15 as `N.0`, any other finite value in Swift's
/// shortest round-trip form (`description`'s text: "0.1", "1e+20"), NaN and infinities as `null`.
public enum DoubleText {
    /// The most bytes `write` produces ("-2.2250738585072014e-308" is 24), with room to spare.
    public static let maximumLength = 32

    /// Writes `v`'s text at `out`, which has room for `maximumLength` bytes; returns its length.
    @inline(__always)
    public static func write(_ v: Double, to out: UnsafeMutablePointer<UInt8>) -> Int {
        guard v.isFinite else {
            out[0] = 0x6E; out[1] = 0x75; out[2] = 0x6C; out[3] = 0x6C  // null
            return 4
        }
        if abs(v) < 1e15, Double(Int64(v)) == v { return whole(Int64(v), to: out) }  // also -0.0 as "0.0"
        UnsafeMutableRawPointer(out).initializeMemory(as: UInt8.self, repeating: 0x30, count: maximumLength)
        return Int(runtimeFloat64ToString(out, UInt(maximumLength), v, false))
    }

    /// `n` in digits and ".0".
    private static func whole(_ n: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var o = out
        if n < 0 { o.pointee = 0x2D; o += 1 }
        var m = n.magnitude
        var digits = 1
        var limit: UInt64 = 10
        while m >= limit, digits < 19 { digits += 1; limit &*= 10 }
        var p = o + digits
        repeat {
            p -= 1
            p.pointee = UInt8(truncatingIfNeeded: m % 10) &+ 0x30
            m /= 10
        } while p > o
        o += digits
        o[0] = 0x2E; o[1] = 0x30  // .0
        return o + 2 - out
    }
}
