// The default event type: what one log line carries from the caller to every sink.
import CFaultlineCrash
import Foundation

/// Wall-clock time of an event, kept as the kernel gives it (no Date, no Double rounding).
public struct LogTimestamp: Sendable, Hashable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32
    public init(seconds: Int64, nanoseconds: Int32) { self.seconds = seconds; self.nanoseconds = nanoseconds }
    public static func now() -> LogTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return LogTimestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }
    public var secondsSince1970: Double { Double(seconds) + Double(nanoseconds) / 1e9 }
    public static func < (l: LogTimestamp, r: LogTimestamp) -> Bool { (l.seconds, l.nanoseconds) < (r.seconds, r.nanoseconds) }
}

/// One log line. Attributes follow swift-log's metadata shape (a dictionary keyed by string)
/// with Sentry's typed values. Source location uses `#fileID`/`#function` static strings, so
/// building an event copies no file or function name.
public struct LogEvent: Sendable {
    public var level: LogLevel
    public var message: String
    public var attributes: [String: AttributeValue]
    public var file: StaticString
    public var function: StaticString
    public var line: UInt
    public var timestamp: LogTimestamp
    /// Kernel thread id of the logging thread (what crash reports call `thread.tid`).
    public var threadID: Int
    /// W3C trace id (32 hex) and span id (16 hex) active when the line was logged, once tracing
    /// exists; nil until then. Sinks write them when present.
    public var traceID: String?
    public var spanID: String?

    public init(
        level: LogLevel, message: String, attributes: [String: AttributeValue] = [:],
        file: StaticString = #fileID, function: StaticString = #function, line: UInt = #line,
        timestamp: LogTimestamp = .now(), threadID: Int = LogEvent.currentThreadID,
        traceID: String? = nil, spanID: String? = nil
    ) {
        self.level = level
        self.message = message
        self.attributes = attributes
        self.file = file
        self.function = function
        self.line = line
        self.timestamp = timestamp
        self.threadID = threadID
        self.traceID = traceID
        self.spanID = spanID
    }

    /// The calling thread's kernel id (cached per thread).
    public static var currentThreadID: Int { faultline_log_thread_id() }
}
