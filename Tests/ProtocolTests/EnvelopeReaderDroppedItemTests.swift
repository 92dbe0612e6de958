// The framing reader steps over an item of a droppable type that is over its cap or the kept
// total — declared or growing without a `length` — and leaves its header, marked with its size,
// in the envelope; other types over their cap still refuse the envelope.
import FaultlineProtocol
import Foundation
import XCTest

final class EnvelopeReaderDroppedItemTests: XCTestCase {
    var limits: EnvelopeReader.Limits {
        var l = EnvelopeReader.Limits()
        l.keptItemCaps = ["event": 1_000, "attachment": 10]
        l.maxKeptBytes = 40
        l.droppedWhenTooLarge = ["attachment"]
        return l
    }

    func testAnAttachmentOverItsCapIsSteppedOverWithOrWithoutALength() throws {
        let body = Data(
            """
            {}
            {"type":"event","length":2}
            {}
            {"type":"attachment","length":11,"filename":"big"}
            01234567890
            {"type":"attachment","filename":"long"}
            0123456789abcdef
            {"type":"attachment","length":3,"filename":"small"}
            abc

            """.utf8)
        let env = try EnvelopeReader.read(body, limits: limits)
        XCTAssertEqual(env.items.map(\.type), ["event", "attachment", "attachment", "attachment"])
        XCTAssertEqual(env.items.map { $0.header[EnvelopeReader.droppedSizeKey]?.int64Value }, [nil, 11, 16, nil])
        XCTAssertEqual(env.items.map(\.payload.count), [2, 0, 0, 3], "nothing of the dropped ones is kept")
    }

    func testOverTheKeptTotalTheLaterAttachmentsAreSteppedOver() throws {
        let items = (0..<6).map { "{\"type\":\"attachment\",\"length\":10,\"filename\":\"f\($0)\"}\n0123456789\n" }.joined()
        let env = try EnvelopeReader.read(Data(("{}\n" + items).utf8), limits: limits)
        XCTAssertEqual(env.items.map { $0.header[EnvelopeReader.droppedSizeKey] == nil }, [true, true, true, true, false, false])
    }

    func testAnEventOverItsCapStillRefusesTheEnvelope() {
        var l = limits
        l.keptItemCaps = ["event": 1, "attachment": 10]
        XCTAssertThrowsError(try EnvelopeReader.read(Data("{}\n{\"type\":\"event\",\"length\":2}\n{}\n".utf8), limits: l))
    }
}
