// Group commit for ingest on PostgreSQL: the events of concurrent requests (and their trace links)
// are inserted by one statement, which is its own transaction, and each request is answered once
// that commit is flushed, so every acknowledged event is still durable before its 200.
//
// Why: one transaction per event (BEGIN, INSERT, COMMIT: three round trips, a commit and its WAL
// flush) was most of PostgreSQL's CPU per ingested event, and the commit's share does not grow with
// the rows it holds (tools/pg-insert-cost measures both forms; docs/DEPLOY.md has the figures). One
// statement without BEGIN and COMMIT is one round trip per batch: what a batch costs whatever its
// size is what grows when a load is shared by more nodes, each with smaller batches.
// Like SQLiteWriter, a batch is what queued while the previous one ran, and waits for company only
// as GroupCommitGather says: a lone request never waits.
import Foundation
import FaultlineThreads

final class PostgresIngestBatcher: @unchecked Sendable {
    private struct Pending {
        let event: IncomingEvent
        let done: (Result<Int64?, Error>) -> Void
    }
    private let pool: PostgresPool
    private struct Queue {
        var pending: [Pending] = []
        var gather = GroupCommitGather(.overNetwork)
        /// Set by `stop`: nothing more is taken (the thread is ending and would never run it).
        var closed = false
    }
    private let writer = WorkerThread(name: "faultline-pg-ingest", state: Queue())
    /// Events per transaction at most, and their stored bytes: one statement carries them all.
    static let maxBatch = 256
    static let maxBatchBytes = 8 << 20

    init(pool: PostgresPool) {
        self.pool = pool
        // Batches until stopped, and after a stop request until nothing is pending.
        writer.start { [unowned self] q, stopping in
            if q.pending.isEmpty { return stopping ? .exit : .wait(until: nil) }
            if let due = q.gather.waitUntil(pending: q.pending.count, stopping: stopping) { return .wait(until: due) }
            var count = 0, bytes = 0
            while count < q.pending.count && count < Self.maxBatch {
                bytes += q.pending[count].event.compressedEvent.count
                if count > 0 && bytes > Self.maxBatchBytes { break }
                count += 1
            }
            let batch = Array(q.pending.prefix(count))
            q.pending.removeFirst(count)
            return .run { [unowned self] in
                run(batch)
                writer.update { $0.gather.committed(batch.count) }
            }
        }
    }

    /// Whether `event` can join a batch: its attachments and a dump's modules are rows that need the
    /// occurrence's id in the same transaction, so such an event keeps a transaction of its own.
    static func takes(_ event: IncomingEvent) -> Bool {
        event.attachments.isEmpty && event.minidumpModules.isEmpty
    }

    /// Stores `event` in the next batch and returns once that batch is committed: its occurrence
    /// id, or nil when the project already has an event with its id.
    func store(_ event: IncomingEvent) throws -> Int64? {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<Int64?, Error>?
        let taken = writer.update(wakingIf: { $0.gather.wakesWriter(pending: $0.pending.count) }) { q -> Bool in
            guard !q.closed else { return false }
            q.pending.append(
                Pending(event: event) {
                    outcome = $0
                    done.signal()
                })
            return true
        }
        guard taken else { throw StoreError.closed }
        done.wait()
        return try outcome!.get()
    }

    /// Stores what is queued, then ends the thread; a later `store` throws `StoreError.closed`.
    func stop() {
        writer.update { $0.closed = true }
        writer.stop()
    }

    private func run(_ batch: [Pending]) {
        do {
            let ids = try pool.statement { c in try Self.insert(batch.map(\.event), c) }
            for (p, id) in zip(batch, ids) { p.done(.success(id)) }
        } catch {
            // An event the batch could not take must not fail the others: each alone.
            if batch.count == 1 { batch[0].done(.failure(error)); return }
            for p in batch {
                p.done(Result { try pool.statement { c in try Self.insert([p.event], c)[0] } })
            }
        }
    }

    private struct Key: Hashable {
        let projectID: Int64
        let eventID: String
    }

    /// Inserts `events` and their trace links in one statement (atomic by itself) and returns each
    /// one's occurrence id in order: nil for an event id the project has already, and for the
    /// second of two alike in the batch (as if they had come one after the other).
    static func insert(_ events: [IncomingEvent], _ c: PGConnection) throws -> [Int64?] {
        var first: [Key: Int] = [:]
        var rows: [Int] = []
        for (i, e) in events.enumerated() where first[Key(projectID: e.projectID, eventID: e.eventID)] == nil {
            first[Key(projectID: e.projectID, eventID: e.eventID)] = i
            rows.append(i)
        }
        // Every node inserts in one key order, so two batches never wait on each other's keys in a cycle.
        rows.sort { (events[$0].projectID, events[$0].eventID) < (events[$1].projectID, events[$1].eventID) }
        let ordered = rows.map { events[$0] }
        var stored: [Key: Int64] = [:]
        try c.query(
            insertSQL, PGArray.ints(ordered.map(\.projectID)), PGArray.texts(ordered.map(\.eventID)),
            PGArray.doubles(ordered.map(\.received)), PGArray.doubles(ordered.map(\.timestamp)),
            PGArray.texts(ordered.map(\.release)), PGArray.texts(ordered.map(\.installID)),
            PGArray.binaryBlobs(ordered.map(\.compressedEvent)),
            PGArray.texts(ordered.map(\.environment)), PGArray.texts(ordered.map(\.operatingSystem)),
            PGArray.texts(ordered.map(\.traceID)), PGArray.texts(ordered.map(\.spanID)), PGArray.texts(ordered.map(\.clientAddress))
        ) { stored[Key(projectID: $0.int(1), eventID: $0.text(2) ?? "")] = $0.int(0) }
        var ids = [Int64?](repeating: nil, count: events.count)
        for (key, i) in first { ids[i] = stored[key] }
        return ids
    }

    /// The batch's rows in key order (`input`, read once: a CTE used twice is materialised), the
    /// occurrences that were new (`stored`), and a trace link for each of those that names a trace.
    static let insertSQL = """
        WITH input AS (
          SELECT * FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::float8[], $5::text[], $6::text[], $7::bytea[],
                               $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
            AS t(project_id, event_id, received, timestamp, release, install_id, event, environment, os, trace_id, span_id,
                 client_address)
        ), stored AS (
          INSERT INTO occurrences(project_id, event_id, received, timestamp, release, install_id, event, environment, os, client_address)
          SELECT project_id, event_id, received, timestamp, release, install_id, event, environment, os, client_address FROM input
          ON CONFLICT(project_id, event_id) DO NOTHING RETURNING id, project_id, event_id
        ), linked AS (
          INSERT INTO occurrence_traces(occurrence_id, project_id, event_id, trace_id, span_id)
          SELECT stored.id, stored.project_id, stored.event_id, input.trace_id, input.span_id
          FROM stored JOIN input ON input.project_id = stored.project_id AND input.event_id = stored.event_id
          WHERE input.trace_id IS NOT NULL
          \(SQLTraceStore.linkConflict)
        )
        SELECT id, project_id, event_id FROM stored
        """
}
