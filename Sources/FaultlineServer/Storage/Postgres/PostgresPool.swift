// A pool of libpq connections to one database, and transactions over it.
import Foundation
import CLibPQ

/// Connections to one database, opened on demand up to `size` and reused; a caller waits for a
/// free one beyond that. A connection that broke (server restarted) is dropped, not returned.
/// Not a WorkerThread: no thread of its own, callers wait on it for a resource (a semaphore's rule).
final class PostgresPool: @unchecked Sendable {
    let url: String
    let size: Int
    /// Run on every new connection before its first use (session settings), nil: nothing.
    let sessionSetup: String?
    private let cond = NSCondition()
    private var idle: [PGConnection] = []
    private var open = 0
    private var closed = false

    init(url: String, size: Int, sessionSetup: String? = nil) {
        self.url = url
        self.size = max(1, size)
        self.sessionSetup = sessionSetup
    }

    func take() throws -> PGConnection {
        cond.lock()
        while idle.isEmpty && open >= size && !closed { cond.wait() }
        if let c = idle.popLast() { cond.unlock(); return c }
        open += 1
        cond.unlock()
        do {
            let c = try PGConnection(url: url)
            if let sessionSetup { try c.exec(sessionSetup) }
            return c
        } catch {
            cond.lock(); open -= 1; cond.signal(); cond.unlock()
            throw error
        }
    }

    func give(_ c: PGConnection) {
        cond.lock()
        if c.isBroken || closed { open -= 1 } else { idle.append(c) }
        cond.signal()
        cond.unlock()
    }

    func close() {
        cond.lock()
        closed = true
        open -= idle.count
        idle.removeAll()
        cond.broadcast()
        cond.unlock()
    }

    /// Runs `body`'s statements each in its own implicit transaction (no BEGIN/COMMIT round trips):
    /// for one statement that is atomic by itself.
    func autocommit<T>(_ body: (PGConnection) throws -> T) throws -> T {
        let c = try take()
        defer { give(c) }
        return try body(c)
    }

    /// Runs `body`'s one statement as its own implicit transaction, with `transaction`'s retry rule:
    /// atomic, and committed (flushed, with `synchronous_commit = on`) before its result returns,
    /// in one round trip instead of three.
    @discardableResult
    func statement<T>(_ body: (PGConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            let c = try take()
            do {
                let out = try body(c)
                give(c)
                return out
            } catch let e as PostgresError where e.isRetryable && attempt < 8 {
                give(c)
                attempt += 1
                usleep(UInt32.random(in: 1_000...20_000) * UInt32(attempt))
            } catch {
                give(c)
                throw error
            }
        }
    }

    /// Runs `body` in one transaction (committed before this returns: with PostgreSQL's default
    /// `synchronous_commit = on` the commit is flushed to the WAL on disk). A serialization failure
    /// or deadlock runs the whole body again, a few times.
    @discardableResult
    func transaction<T>(isolation: String = "READ COMMITTED", readOnly: Bool = false, _ body: (PGConnection) throws -> T) throws -> T {
        var attempt = 0
        while true {
            let c = try take()
            do {
                try c.exec("BEGIN ISOLATION LEVEL \(isolation)\(readOnly ? " READ ONLY" : "")")
                let out = try body(c)
                try c.exec("COMMIT")
                give(c)
                return out
            } catch let e as PostgresError where e.isRetryable && attempt < 8 {
                _ = try? c.exec("ROLLBACK")
                give(c)
                attempt += 1
                usleep(UInt32.random(in: 1_000...20_000) * UInt32(attempt))
            } catch {
                _ = try? c.exec("ROLLBACK")
                give(c)
                throw error
            }
        }
    }
}
