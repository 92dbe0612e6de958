// Which database the server tests run on: SQLite in the data directory (the default), or, with
// FAULTLINE_TEST_DATABASE=postgres (tools/test's second pass), PostgreSQL — one private cluster
// per test process (tools/pg-local, started on first use, stopped when the process exits) and a
// fresh database per data directory, so a server restarted on the same directory finds its data.
// The tests themselves are the same on both: one suite, two back ends. None is SQLite-only; the
// suites that pick their back end themselves (conformance, multi-node, cluster) run once, which
// tools/test's second pass says in its --skip.
import Foundation

public enum TestDatabase {
    public static var isPostgres: Bool { ProcessInfo.processInfo.environment["FAULTLINE_TEST_DATABASE"] == "postgres" }
    public static var name: String { isPostgres ? "PostgreSQL" : "SQLite" }

    nonisolated(unsafe) private static var cluster: Result<PostgresCluster, Error>?
    nonisolated(unsafe) private static var databases: [String: String] = [:]
    private static let lock = NSLock()

    /// The PostgreSQL URL a server on `dataDirectory` uses, nil on SQLite. The same directory always
    /// gets the same database; a new directory gets a new, empty one.
    public static func url(forDataDirectory dataDirectory: String) throws -> String? {
        guard isPostgres else { return nil }
        let key = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        lock.lock(); defer { lock.unlock() }
        if let url = databases[key] { return url }
        if cluster == nil {
            cluster = Result { try PostgresCluster() }
            atexit { TestDatabase.stopCluster() }
        }
        let url = try cluster!.get().createDatabase()
        databases[key] = url
        return url
    }

    /// Arguments that put a `faultline serve` child on the same database as `url(forDataDirectory:)`.
    public static func serveArguments(dataDirectory: String) throws -> [String] {
        try url(forDataDirectory: dataDirectory).map { ["--database", $0] } ?? []
    }

    private static func stopCluster() {
        if case .success(let c)? = cluster { c.stop() }
    }
}
