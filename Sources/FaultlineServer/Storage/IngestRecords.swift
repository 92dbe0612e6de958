// What ingest stores: events and other envelope items, the stored occurrence, item counts.
import Foundation
import FaultlineProtocol

/// An event as stored at ingest, before symbolication and grouping.
public struct IncomingEvent: Sendable {
    public var projectID: Int64
    public var eventID: String
    public var received: Double
    public var timestamp: Double
    public var release: String?
    public var installID: String?
    /// The event's environment and operating system (`EventFields`), for the issue page's breakdown.
    public var environment: String? = nil
    public var operatingSystem: String? = nil
    /// The event as stored (`StoredEvent`: its JSON zlib-compressed, or the client's gzip'd envelope).
    public var compressedEvent: Data
    /// The trace the event's `contexts.trace` names, linked in the same transaction (Traces/).
    public var traceID: String? = nil
    public var spanID: String? = nil
    /// The envelope's `attachment` items, stored with the occurrence in its transaction (Attachments/).
    public var attachments: [IncomingAttachment] = []
    /// The build-ids of a minidump's modules when the event was walked from one (Minidumps/),
    /// stored in its transaction for the backfill to find the dump again.
    public var minidumpModules: [BuildID] = []
    /// The address the event came from, when the event asks for it (Ingest/InferredIPAddress).
    public var clientAddress: String? = nil
}

/// A non-event envelope item we keep and count (sessions, logs, client reports).
public struct IncomingItem: Sendable {
    public var projectID: Int64
    public var type: String
    public var received: Double
    public var payload: Data
    /// Sessions this item starts and reports crashed (for the crash-free rate).
    public var sessionsStarted: Int64 = 0
    public var sessionsCrashed: Int64 = 0
}

public struct StoredOccurrence: Sendable {
    public var id: Int64
    public var projectID: Int64
    public var eventID: String
    public var received: Double
    public var timestamp: Double
    public var release: String?
    public var issueID: Int64?
    public var compressedEvent: Data
    /// The address the event came from, kept only when the event asks for it (InferredIPAddress).
    public var clientAddress: String? = nil
}

public struct ItemCounts: Sendable {
    public var byType: [String: Int64]
    public var sessionsTotal: Int64
    public var sessionsCrashed: Int64
}
