// Which store an administrative command (projects, logs) opens: the SQLite file in the data
// directory, or with `--database URL` (env FAULTLINE_DATABASE_URL) the PostgreSQL database that
// `faultline serve --database URL` uses.
import Foundation
import FaultlineCommandLine
import FaultlineServer

enum DatabaseOption {
    /// FAULTLINE_DATABASE_URL when set; `--database` overrides it.
    static var fromEnvironment: String? {
        ProcessInfo.processInfo.environment["FAULTLINE_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether there is server data to work on (a PostgreSQL database is taken to be there).
    static func hasData(dataDirectory: String, database: String?) -> Bool {
        database != nil || FileManager.default.fileExists(atPath: dataDirectory + "/faultline.sqlite")
    }

    /// Nil when there is data to work on; otherwise says so (as `command`) and returns the exit code.
    static func refuseWithoutData(_ command: String, dataDirectory: String, database: String?) -> Int32? {
        if hasData(dataDirectory: dataDirectory, database: database) { return nil }
        printError("\(command): no server data in \(dataDirectory) (run 'faultline serve' once, or pass --data-dir)")
        return ExitCode.inputError
    }

    static func open(dataDirectory: String, database: String?) throws -> Stores {
        if let database { return Stores(sql: try PostgresStore(url: database, connections: 1)) }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        return Stores(sql: try SQLiteStore(path: dataDirectory + "/faultline.sqlite"))
    }

    /// The store (core and issue reads) with its SQL features (alert rules, issue statuses), for
    /// `faultline alerts` and `faultline issues`.
    static func openWithFeatures(
        dataDirectory: String, database: String?
    ) throws -> (store: any Store & IssueReads, alerts: AlertAdministration, lifecycle: Lifecycle) {
        if let database {
            let s = try PostgresStore(url: database, connections: 2)
            return (s, AlertAdministration(store: s), Lifecycle(store: s))
        }
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        let s = try SQLiteStore(path: dataDirectory + "/faultline.sqlite")
        return (s, AlertAdministration(store: s), Lifecycle(store: s))
    }
}
