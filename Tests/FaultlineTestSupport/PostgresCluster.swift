// A real PostgreSQL for the tests: tools/pg-local starts a private cluster (initdb into a temporary
// directory, 127.0.0.1 and a free port, run as the `postgres` user when the tests run as root) and
// each test takes a fresh database in it. A cluster that cannot start fails the test that needs it:
// tools/setup and .ci/run install PostgreSQL, so its absence is a broken machine, not a skip.
import Foundation
import Synchronization

public final class PostgresCluster: Sendable {
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    public let directory: String
    public let url: String
    private let databases = Mutex(0)

    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// Starts a cluster (bounded: pg-local waits at most 60 s for the server, this at most 120 s).
    public init() throws {
        // Directly under /tmp: the `postgres` user must be able to reach the directory.
        directory = "/tmp/faultline-pg-\(getpid())-\(UUID().uuidString.prefix(8))"
        let out = try TestSupport.run(Self.repositoryRoot + "/tools/pg-local", ["start", directory], timeout: 120)
        guard out.exitCode == 0, let line = out.stdout.split(separator: "\n").last, line.hasPrefix("postgres://") else {
            throw Failure(description: "tools/pg-local could not start PostgreSQL: \(out)")
        }
        url = String(line)
    }

    /// A new, empty database in the cluster; its URL.
    public func createDatabase() throws -> String {
        let n = databases.withLock { n in
            n += 1
            return n
        }
        let out = try TestSupport.run(Self.repositoryRoot + "/tools/pg-local", ["createdb", directory, "t\(n)"], timeout: 60)
        guard out.exitCode == 0, let line = out.stdout.split(separator: "\n").last, line.hasPrefix("postgres://") else {
            throw Failure(description: "tools/pg-local createdb failed: \(out)")
        }
        return String(line)
    }

    public func stop() {
        _ = try? TestSupport.run(Self.repositoryRoot + "/tools/pg-local", ["stop", directory], timeout: 120)
    }

    // One cluster per test class that asks for it, stopped by that class's tearDown.
    private static let running = Mutex<[String: Result<PostgresCluster, Error>]>([:])

    public static func shared(for owner: AnyClass) throws -> PostgresCluster {
        let key = NSStringFromClass(owner)
        return try running.withLock { running in
            if let r = running[key] { return try r.get() }
            let r = Result { try PostgresCluster() }
            running[key] = r
            return try r.get()
        }
    }

    public static func stop(for owner: AnyClass) {
        let key = NSStringFromClass(owner)
        let r = running.withLock { $0.removeValue(forKey: key) }
        if case .success(let c)? = r { c.stop() }
    }
}
