// What the store conformance tests run on: one SQL store (SQLiteStore or PostgresStore) seen as
// the core store and every feature store it implements, wired the way the server wires them.
@testable import FaultlineServer

typealias SQLStoreUnderTest = any Store & ProjectAdministrationStore & IssueReads & DebugFileRecordStore & BackfillJobs & RetentionStore
    & InstallWindows & TraceStore & LogArchiveStore

/// The core store with the two feature stores every store under test has (InMemoryStore too):
/// the conformance checks create projects and read issues back.
typealias CoreStoreUnderTest = any Store & ProjectAdministrationStore & IssueReads

extension Stores {
    /// Every store on the one object under test (the server builds the same with `Stores(sql:)`).
    init(testing store: SQLStoreUnderTest) {
        self.init(
            core: store, projects: store, issueReads: store, debugFiles: store, backfills: store, retention: store, installWindows: store, traces: store,
            logArchives: store)
    }
}
