// The storage seam for traces, beside `Store`: a backend that keeps traces conforms to both.
import Foundation

/// A transaction in the list of recent traces.
public struct TransactionSummary: Sendable {
    public var traceID: String
    public var spanID: String
    public var name: String
    public var op: String?
    public var status: String?
    public var start: Double
    public var end: Double
    public var spanCount: Int64
    public var received: Double
}

/// An occurrence (crash or error) that happened inside a trace.
public struct TracedOccurrence: Sendable, Equatable {
    public var occurrenceID: Int64
    public var eventID: String
    public var spanID: String?
}

/// One trace as read: earliest spans first; `cut` when more were stored than one read returns.
public struct StoredTrace: Sendable {
    public var spans: [SpanRecord]
    public var occurrences: [TracedOccurrence]
    public var cut: Bool
}

public protocol TraceStore: AnyObject, Sendable {
    /// Stores transactions and their spans, indexed by trace id. A span sent twice is kept once.
    func storeTransactions(_ transactions: [IncomingTransaction]) throws
    /// Remembers that an occurrence belongs to a trace (from its `contexts.trace`).
    func linkOccurrence(occurrenceID: Int64, projectID: Int64, eventID: String, traceID: String, spanID: String?) throws
    /// The stored spans of one trace and the occurrences inside it, each at most TraceLimits' cap.
    func trace(projectID: Int64, traceID: String) throws -> StoredTrace
    /// The most recently received transactions, optionally only those with this name / status.
    func recentTransactions(projectID: Int64, name: String?, status: String?, limit: Int, offset: Int) throws -> [TransactionSummary]
    /// The trace an occurrence belongs to, if it named one.
    func traceOf(occurrenceID: Int64) throws -> (traceID: String, spanID: String?)?
    /// Retention: deletes transactions (with their spans) received before `cutoff`; returns how many.
    @discardableResult
    func deleteTransactions(receivedBefore cutoff: Double) throws -> Int
}
