// DoubleText writes JSONWriter's one double format without allocating: checked against the format
// as stated (with `description`) over edge values, i * 0.1 and random bit patterns.
import FaultlineProtocol
import Foundation
import XCTest

final class DoubleTextTests: XCTestCase {
    /// The format as JSONWriter's file comment states it, spelled with `description`.
    private func stated(_ v: Double) -> String {
        guard v.isFinite else { return "null" }
        if v == v.rounded(), abs(v) < 1e15 { return "\(Int64(v)).0" }
        return v.description
    }

    private func written(_ v: Double) -> String {
        var text = [UInt8](repeating: 0xFF, count: DoubleText.maximumLength)
        let n = text.withUnsafeMutableBufferPointer { DoubleText.write(v, to: $0.baseAddress!) }
        XCTAssertLessThanOrEqual(n, DoubleText.maximumLength)
        return String(decoding: text[..<n], as: UTF8.self)
    }

    func testEveryKindOfDoubleIsWrittenInTheStatedFormat() {
        var rng = SystemRandomNumberGenerator()
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, -0.1, 0.3, 0.1 + 0.2, 1e-4, 1e-5, 9.999999999999999e-5, 999999999999999.9,
            1e15 - 1, 1e15 - 0.5, 1e15, -1e15, 9_007_199_254_740_993, 1e300, -1e-300, 5e-324, -5e-324,
            .pi, .ulpOfOne, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude,
            -2.2250738585072014e-308, 1 / 3, .infinity, -.infinity, .nan, Double(Int64.max), Double(Int64.min)
        ]
        for i in 0..<20_000 { values.append(Double(i) * 0.1); values.append(Double(i) * 0.01 - 50) }
        for _ in 0..<100_000 {
            values.append(Double(bitPattern: rng.next()))
            let digits = Double(Int64.random(in: -99_999_999...99_999_999, using: &rng))
            values.append(digits / pow(10, Double(Int.random(in: 0...17, using: &rng))))
            values.append(Double.random(in: -1e6...1e6, using: &rng))
        }
        for v in values {
            XCTAssertEqual(written(v), stated(v), "bits \(v.bitPattern)")
        }
    }

    func testJSONWriterAndTheParserAgreeOnWrittenDoubles() throws {
        for v in [0.1, 1e-7, 123.456, -0.0, 2.0, 1e21, 5e-324] {
            var w = JSONWriter()
            w.double(v)
            XCTAssertEqual(String(decoding: w.bytes, as: UTF8.self), stated(v))
            XCTAssertEqual(try JSONValue.parse(Data(w.bytes)).doubleValue, v == 0 ? 0 : v)
        }
    }
}
