// The whole-member gzip path (libdeflate) takes only what it can decode exactly; everything else
// falls back to the streaming inflate, so what ingest accepts and refuses is unchanged.
import FaultlineProtocol
import Foundation
import XCTest

@testable import FaultlineServer

final class GzipMemberTests: XCTestCase {
    let envelope = Data("{\"event_id\":\"0123456789abcdef0123456789abcdef\"}\n{\"type\":\"event\"}\n{\"message\":\"hello\"}\n".utf8)

    func testOneMemberIsDecodedWhole() throws {
        let body = try XCTUnwrap(Deflate.gzip(envelope))
        XCTAssertEqual(GzipMember.inflated(body, limit: 1 << 20).map { Data($0) }, envelope)
    }

    /// The trailer's size is the client's word: a member stating more than its limit, more than a
    /// DEFLATE stream can expand to, or not what it decodes to is not decoded here.
    func testAStatedSizeIsBelievedOnlyWithinBoundsAndWhenItIsTrue() throws {
        let body = try XCTUnwrap(Deflate.gzip(envelope))
        XCTAssertNil(GzipMember.inflated(body, limit: envelope.count - 1))
        XCTAssertNil(GzipMember.inflated(withStatedSize(body, envelope.count + 1), limit: 1 << 20))
        XCTAssertNil(GzipMember.inflated(withStatedSize(body, envelope.count - 1), limit: 1 << 20))
        XCTAssertNil(GzipMember.inflated(withStatedSize(body, body.count * GzipMember.maxRatio + 1), limit: 1 << 30))
        XCTAssertNil(GzipMember.inflated(Data([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03]), limit: 1 << 20))
        // zlib-wrapped deflate is not a gzip member.
        XCTAssertNil(GzipMember.inflated(Deflate.compress(envelope), limit: 1 << 20))
    }

    /// Concatenated members are legal gzip: not decoded whole, but ingest still reads them (the
    /// streaming inflate goes on to the next member).
    func testConcatenatedMembersGoTheStreamingWay() throws {
        let half = envelope.count / 2
        let body = try XCTUnwrap(Deflate.gzip(envelope.prefix(half))) + XCTUnwrap(Deflate.gzip(envelope.dropFirst(half)))
        XCTAssertNil(GzipMember.inflated(body, limit: 1 << 20))
        let (env, inflated) = try EnvelopeDecoder.framed(body, limits: IngestLimits(), format: .gzipOrZlib)
        XCTAssertEqual(inflated, envelope.count)
        XCTAssertEqual(env.items.first?.payload, Data("{\"message\":\"hello\"}".utf8))
    }

    /// A member whose stated size lies is refused as corrupt by the streaming inflate (zlib checks
    /// the trailer too), as before the whole-member path existed.
    func testALyingSizeIsStillRefusedAsCorrupt() throws {
        let body = withStatedSize(try XCTUnwrap(Deflate.gzip(envelope)), envelope.count - 1)
        XCTAssertThrowsError(try EnvelopeDecoder.framed(body, limits: IngestLimits(), format: .gzipOrZlib)) { error in
            XCTAssertEqual((error as? IngestError)?.status, 400, "\(error)")
        }
    }

    private func withStatedSize(_ body: Data, _ size: Int) -> Data {
        var out = body
        for i in 0..<4 { out[out.count - 4 + i] = UInt8(truncatingIfNeeded: size >> (8 * i)) }
        return out
    }
}
