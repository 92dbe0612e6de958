// Which database the server tests run on: SQLite in the data directory (the default), or, with
// FAULTLINE_TEST_DATABASE=postgres (tools/test's second pass), PostgreSQL — one private cluster
// per test process (tools/pg-local, started on first use, stopped when the process exits) and a
// fresh database per data directory, so a server restarted on the same directory finds its data.
// The tests themselves are the same on both: one suite, two back ends. None is SQLite-only; the
// suites that pick their back end themselves (conformance, multi-node, cluster) run once, which
// tools/test's second pass says in its --skip.
import Foundation
import Synchronization

public enum TestDatabase {
    public static var isPostgres: Bool { ProcessInfo.processInfo.environment["FAULTLINE_TEST_DATABASE"] == "postgres" }
    public static var name: String { isPostgres ? "PostgreSQL" : "SQLite" }

    private struct Databases {
        var cluster: Result<PostgresCluster, Error>?
        var byDirectory: [String: String] = [:]
    }
    private static let state = Mutex(Databases())

    /// The PostgreSQL URL a server on `dataDirectory` uses, nil on SQLite. The same directory always
    /// gets the same database; a new directory gets a new, empty one.
    public static func url(forDataDirectory dataDirectory: String) throws -> String? {
        guard isPostgres else { return nil }
        let key = URL(fileURLWithPath: dataDirectory).standardizedFileURL.path
        return try state.withLock { s in
            if let url = s.byDirectory[key] { return url }
            if s.cluster == nil {
                s.cluster = Result { try PostgresCluster() }
                atexit { TestDatabase.stopCluster() }
            }
            let url = try s.cluster!.get().createDatabase()
            s.byDirectory[key] = url
            return url
        }
    }

    /// Arguments that put a `faultline serve` child on the same database as `url(forDataDirectory:)`.
    public static func serveArguments(dataDirectory: String) throws -> [String] {
        try url(forDataDirectory: dataDirectory).map { ["--database", $0] } ?? []
    }

    private static func stopCluster() {
        if case .success(let c)? = state.withLock({ $0.cluster }) { c.stop() }
    }
}
