// Debug images and stack traces as FaultlineProtocol reads and writes them.
import Foundation
import XCTest
import FaultlineProtocol

final class StackReadingTests: XCTestCase {
    /// Address(string:) reads "0x…" byte by byte first; every string must parse as the general rule
    /// (whitespace trimmed, optional 0x, UInt64 hex) says, fast path or not.
    func testAddressStringsParseAsTheGeneralRuleSays() {
        func reference(_ s: String) -> UInt64? {
            var t = Substring(s.trimmingCharacters(in: .whitespacesAndNewlines))
            if t.hasPrefix("0x") || t.hasPrefix("0X") { t = t.dropFirst(2) }
            return t.isEmpty ? nil : UInt64(t, radix: 16)
        }
        var cases = [
            "0x0", "0X7f3a1ebcc7d7", "0xffffffffffffffff", "0x1ffffffffffffffff", "0x00000000000000001", "0x", "0xg1",
            " 0x10 ", "0x+1", "0x-0", "+0x1", "1a2b", "0x1a2B", "0x١٢", "", "x10", "00x1", "0x10\n"
        ]
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789abcdefABCDEFxX +-g ")
        for _ in 0..<20_000 {
            let n = Int.random(in: 0...20, using: &rng)
            cases.append((Bool.random(using: &rng) ? "0x" : "") + String((0..<n).map { _ in alphabet.randomElement(using: &rng)! }))
        }
        for s in cases {
            XCTAssertEqual(Address(string: s)?.value, reference(s), "\(s.debugDescription)")
        }
    }

    func testImageSizeZeroCoversUpToTheNextImage() {
        let map = DebugImageMap([
            DebugImage(codeFile: "/b", base: Address(0x5000), size: 0x1000, buildID: nil, arch: "x86_64"),
            DebugImage(codeFile: "/a", base: Address(0x1000), size: 0, buildID: nil, arch: "x86_64"),
            DebugImage(codeFile: "/c", base: Address(0x9000), size: 0, buildID: nil, arch: "x86_64")
        ])
        XCTAssertEqual(map.image(containing: 0x0fff)?.codeFile, nil)
        XCTAssertEqual(map.image(containing: 0x1000)?.codeFile, "/a")
        XCTAssertEqual(map.image(containing: 0x4fff)?.codeFile, "/a")
        XCTAssertEqual(map.image(containing: 0x5fff)?.codeFile, "/b")
        XCTAssertEqual(map.image(containing: 0x6000)?.codeFile, nil, "a sized image ends at its size")
        XCTAssertEqual(map.image(containing: 0xffff_0000)?.codeFile, "/c", "the last unsized image is open-ended")
        XCTAssertEqual(map.image(for: 0x1010, imageAddress: 0x5000)?.codeFile, "/b", "a frame's image_addr wins")
    }

    /// Two images listed at one base: the first listed is the one, whichever way the list is
    /// ordered; a frame's image_addr names an image only when one starts exactly there.
    func testTheFirstImageListedAtABaseWins() {
        let images = [
            DebugImage(codeFile: "/z", base: Address(0x9000), size: 0, buildID: nil, arch: "x86_64"),
            DebugImage(codeFile: "/first", base: Address(0x5000), size: 0x1000, buildID: nil, arch: "x86_64"),
            DebugImage(codeFile: "/a", base: Address(0x1000), size: 0, buildID: nil, arch: "x86_64"),
            DebugImage(codeFile: "/second", base: Address(0x5000), size: 0x3000, buildID: nil, arch: "x86_64")
        ]
        for list in [images, images.reversed()] {
            let map = DebugImageMap(list)
            let first = list.first { $0.base.value == 0x5000 }?.codeFile
            XCTAssertEqual(map.images.map(\.base.value), [0x1000, 0x5000, 0x9000])
            XCTAssertEqual(map.image(containing: 0x5100)?.codeFile, first)
            XCTAssertEqual(map.image(startingAt: 0x5000)?.codeFile, first)
            XCTAssertNil(map.image(startingAt: 0x5001))
            XCTAssertNil(map.image(startingAt: 0x0fff))
            XCTAssertEqual(map.image(for: 0x9100, imageAddress: 0x1000)?.codeFile, "/a")
            XCTAssertEqual(map.image(for: 0x9100, imageAddress: 0x1001)?.codeFile, "/z", "no image starts there: the address decides")
        }
    }

    func testDebugImageRoundTrip() throws {
        let image = DebugImage(
            codeFile: "/usr/lib/x.so", base: Address(0x7f00_0000_0000), size: 0x2000,
            buildID: BuildID(hex: "00112233445566778899aabbccddeeff00112233"), arch: "arm64")
        XCTAssertEqual(DebugImage(json: try JSONValue.parse(image.json.serialized())), image)
        XCTAssertEqual(image.json["debug_id"]?.stringValue, image.buildID?.debugID.description)
    }

    func testEnvelopeReaderFramesPiecewiseAndChecksLimits() throws {
        let body = Data("{\"event_id\":\"e\"}\n{\"type\":\"event\",\"length\":2}\n{}\n\n{\"type\":\"attachment\"}\nxyz\n{\"type\":\"log\"}\n[1]".utf8)
        var limits = EnvelopeReader.Limits()
        limits.keptItemCaps = ["event": 10, "log": 10]
        var reader = EnvelopeReader(limits: limits)
        for byte in body { try [byte].withUnsafeBufferPointer { try reader.feed($0) } }
        let env = try reader.finish()
        XCTAssertEqual(env.eventID, "e")
        XCTAssertEqual(env.items.map(\.type), ["event", "log"], "the attachment is stepped over")
        XCTAssertEqual(env.items.map(\.payload), [Data("{}".utf8), Data("[1]".utf8)])
        XCTAssertEqual(try Envelope.parse(body).items.count, 3, "without limits every item is kept")
        limits.keptItemCaps = ["event": 1]
        XCTAssertThrowsError(try Envelope.parse(body, limits: limits)) { XCTAssertTrue(($0 as! Envelope.ParseError).isOverLimit) }
        XCTAssertThrowsError(try Envelope.parse(Data("{}\n{\"length\":1}\nx".utf8))) { XCTAssertEqual($0 as? Envelope.ParseError, .missingType(index: 0)) }
    }
}
