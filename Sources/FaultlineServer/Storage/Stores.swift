// The stores a server runs on, built once at start-up (`Server.init`, or `makeStore` in the
// configuration) and handed to each part as the protocols it uses: the core `Store` and one
// feature store per feature. A part that needs a feature store takes it as a parameter; nothing
// finds one by casting the core store.
import Foundation

/// The core store and the feature stores beside it. SQLiteStore and PostgresStore each implement
/// all of them on one database (`init(sql:)`); a store of another kind fills the required ones
/// and leaves the optional features out (the server then serves without them).
public struct Stores: Sendable {
    /// Project, key and token lookups, ingest, issue edits and claims.
    public let core: any Store
    /// Creating projects, keys and tokens; project settings.
    public let projects: any ProjectAdministrationStore
    /// Issue and occurrence lists, counts.
    public let issueReads: any IssueReads
    public let debugFiles: any DebugFileRecordStore
    public let backfills: any BackfillJobs
    public let retention: any RetentionStore
    public let installWindows: any InstallWindows
    /// Nil: traces are not kept (transactions are accepted and dropped, the trace API answers 404).
    public let traces: (any TraceStore)?
    /// Nil: no log-archive receiver.
    public let logArchives: (any LogArchiveStore)?
    /// Nil: attachments are not listed or served (ingest stores them only through `storeIngest`).
    public let attachments: (any AttachmentStore)?
    /// The database the SQL-written features query directly (web pages, issue lifecycle, alerts);
    /// nil: the server runs without them.
    let database: (any SQLDatabase)?

    public init(
        core: any Store, projects: any ProjectAdministrationStore, issueReads: any IssueReads, debugFiles: any DebugFileRecordStore,
        backfills: any BackfillJobs, retention: any RetentionStore, installWindows: any InstallWindows, traces: (any TraceStore)? = nil,
        logArchives: (any LogArchiveStore)? = nil, attachments: (any AttachmentStore)? = nil
    ) {
        self.init(
            core: core, projects: projects, issueReads: issueReads, debugFiles: debugFiles, backfills: backfills, retention: retention,
            installWindows: installWindows, traces: traces, logArchives: logArchives, attachments: attachments, database: nil)
    }

    init(
        core: any Store, projects: any ProjectAdministrationStore, issueReads: any IssueReads, debugFiles: any DebugFileRecordStore,
        backfills: any BackfillJobs, retention: any RetentionStore, installWindows: any InstallWindows, traces: (any TraceStore)?,
        logArchives: (any LogArchiveStore)?, attachments: (any AttachmentStore)?, database: (any SQLDatabase)?
    ) {
        self.core = core
        self.projects = projects
        self.issueReads = issueReads
        self.debugFiles = debugFiles
        self.backfills = backfills
        self.retention = retention
        self.installWindows = installWindows
        self.traces = traces
        self.logArchives = logArchives
        self.attachments = attachments
        self.database = database
    }

    /// Every store on one SQL database.
    public init(sql store: SQLiteStore) { self.init(all: store) }
    public init(sql store: PostgresStore) { self.init(all: store) }

    private init<
        S: Store & ProjectAdministrationStore & IssueReads & DebugFileRecordStore & BackfillJobs & RetentionStore & InstallWindows
            & TraceStore & LogArchiveStore & AttachmentStore & SQLDatabase
    >(
        all store: S
    ) {
        self.init(
            core: store, projects: store, issueReads: store, debugFiles: store, backfills: store, retention: store,
            installWindows: store, traces: store, logArchives: store, attachments: store, database: store)
    }

    /// Finishes pending writes and releases the database (the feature stores share it).
    public func close() { core.close() }
}
