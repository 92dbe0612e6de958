// The last 32 breadcrumbs, held in one place: the crash handler's ring. Events copy them from there.
import CFaultlineCrash
import Foundation
import FaultlineProtocol

final class BreadcrumbStore: Sendable {
    static let shared = BreadcrumbStore()
    static let capacity = Int(FAULTLINE_BREADCRUMB_SLOTS)  // the crash core's ring
    private static let maxBytes = Int(FAULTLINE_BREADCRUMB_MAX_BYTES)  // the crash core's slot size

    /// Writes the breadcrumb straight into the crash ring's next slot, on the calling thread, as
    /// a binary record (`BreadcrumbRecord`: its JSON is rendered later, off this thread): a crash
    /// right after the call carries it. No allocation on this path. Too long for a slot: kept with
    /// a shortened message and no data rather than lost.
    func add(_ r: LogRecord) {
        Self.add(
            Breadcrumb(
                level: r.level, message: r.message, file: r.file, function: r.function, line: r.line,
                timestamp: r.timestamp, traceID: r.traceID, spanID: r.spanID), attributes: r.attributes)
    }

    /// The same for a line that has no `LogEvent` (the `Log` facade's breadcrumb-only path): the
    /// attributes in the caller's order (a key given twice keeps its last value when rendered).
    @inline(__always)
    static func add<A: Collection>(_ b: Breadcrumb, attributes: A) where A.Element == (key: String, value: AttributeValue) {
        let slot = UnsafeMutableRawBufferPointer(start: faultline_crash_reserve_breadcrumb(), count: Self.maxBytes)
        var length = Self.write(b, attributes: attributes, includeData: true, into: slot)
        if length == nil {
            var short = b
            short.message = String(b.message.utf8.prefix(600)).map { $0 + "…" } ?? String(b.message.prefix(200)) + "…"
            length = Self.write(short, attributes: attributes, includeData: false, into: slot)
        }
        faultline_crash_commit_breadcrumb(length ?? 0)
    }

    /// What a breadcrumb carries besides its attributes.
    struct Breadcrumb {
        var level: LogLevel
        var message: String
        var file: StaticString
        var function: StaticString
        var line: UInt
        var timestamp: LogTimestamp
        var traceID: String?
        var spanID: String?
    }

    /// The breadcrumb's record in `out`; its length, or nil if it does not fit.
    @inline(__always)
    static func write<A: Collection>(
        _ r: Breadcrumb, attributes: A, includeData: Bool,
        into out: UnsafeMutableRawBufferPointer
    ) -> Int?
    where A.Element == (key: String, value: AttributeValue) {
        var w = BreadcrumbRecord.Encoder(out)
        let trace = r.traceID.flatMap { t in r.spanID.map { (t, $0) } }
        w.header(
            level: r.level, seconds: r.timestamp.seconds, nanoseconds: r.timestamp.nanoseconds, line: r.line,
            hasTrace: trace != nil)
        w.string(r.message)
        w.string(r.function)
        w.string(r.file)
        if let (t, s) = trace {
            w.string(t)
            w.string(s)
        }
        w.attributeCount(includeData ? attributes.count : 0)
        if includeData {
            for (key, value) in attributes {
                w.string(key)
                switch value {
                case .string(let s):
                    w.byte(BreadcrumbRecord.Tag.string.rawValue)
                    w.string(s)
                case .int(let i):
                    w.byte(BreadcrumbRecord.Tag.int.rawValue)
                    w.word(UInt64(bitPattern: Int64(i)))
                case .double(let d):
                    w.byte(BreadcrumbRecord.Tag.double.rawValue)
                    w.word(d.bitPattern)
                case .bool(let b):
                    w.byte(BreadcrumbRecord.Tag.bool.rawValue)
                    w.byte(b ? 1 : 0)
                }
            }
        }
        return w.overflowed ? nil : w.count
    }

    /// Breadcrumbs for an event, oldest first (copied out of the crash ring; records rendered).
    var snapshot: [JSONValue] {
        var newestFirst: [JSONValue] = []
        var buffer = [UInt8](repeating: 0, count: Self.maxBytes)
        for age in 0..<Self.capacity {
            let n = buffer.withUnsafeMutableBytes { faultline_crash_copy_breadcrumb(age, $0.baseAddress, $0.count) }
            if n == 0 { break }
            let text: [UInt8]? =
                buffer[0] == BreadcrumbRecord.magic
                ? buffer.withUnsafeBytes { BreadcrumbRecord.json(UnsafeRawBufferPointer(rebasing: $0[..<n])) } : Array(buffer[..<n])
            if let text, let v = try? JSONValue.parse(Data(text)) { newestFirst.append(v) }
        }
        return newestFirst.reversed()
    }
}
