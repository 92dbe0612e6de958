// What the store conformance tests run on: one SQL store (SQLiteStore or PostgresStore) seen as
// the core store and every feature store it implements, wired the way the server wires them.
@testable import FaultlineServer

typealias SQLStoreUnderTest = any Store & DebugFileRecordStore & BackfillJobs & RetentionStore & InstallWindows & TraceStore & LogArchiveStore

extension Stores {
    /// Every store on the one object under test (the server builds the same with `Stores(sql:)`).
    init(testing store: SQLStoreUnderTest) {
        self.init(
            core: store, debugFiles: store, backfills: store, retention: store, installWindows: store, traces: store, logArchives: store)
    }
}
