// `RetentionStore` over SQLite: each call is one job on the writer thread (one transaction).
import Foundation
import FaultlineProtocol

extension SQLiteStore: RetentionStore {
    /// One occurrence and its link to a trace (its attachments and minidump modules go by trigger).
    @discardableResult
    static func deleteOccurrence(_ c: SQLiteConnection, _ id: Int64) throws -> Int {
        try c.run("DELETE FROM occurrence_traces WHERE occurrence_id = ?", .int(id))
        return try c.run("DELETE FROM occurrences WHERE id = ?", .int(id))
    }

    public func deleteOccurrences(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try writer.sync { c in
            var rows: [(id: Int64, issue: Int64?)] = []
            // Each row's live issue (a row may name an issue merged into it: IssueGroups).
            try c.query(
                "SELECT id, \(IssueGroups.resolved("issue_id")) FROM occurrences WHERE received < ? AND processed = 1 ORDER BY received LIMIT ?",
                .double(cutoff), .int(Int64(limit))
            ) { rows.append(($0.int(0), $0.isNull(1) ? nil : $0.int(1))) }
            for r in rows { try Self.deleteOccurrence(c, r.id) }
            for issue in Set(rows.compactMap(\.issue)) { try IssueGroups.recount(c, issue) }
            return rows.count
        }
    }

    public func deleteItems(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try writer.sync { c in
            try c.run(
                "DELETE FROM items WHERE id IN (SELECT id FROM items WHERE received < ? ORDER BY received LIMIT ?)",
                .double(cutoff), .int(Int64(limit)))
        }
    }

    public func deleteOrphanedStacks(limit: Int, buildIDs: @escaping @Sendable (Data) -> Set<BuildID>) throws -> Int {
        try writer.sync { c in
            var orphans: [(String, Data)] = []
            try c.query(
                "SELECT key, signature FROM stacks s WHERE NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.stack_key = s.key) LIMIT ?",
                .int(Int64(limit))
            ) { orphans.append(($0.text(0) ?? "", $0.blob(1))) }
            for (key, signature) in orphans {
                // Module rows are keyed (build_id, stack_key): the signature names the build-ids.
                for b in buildIDs(signature) {
                    try c.run("DELETE FROM stack_modules WHERE build_id = ? AND stack_key = ?", .text(b.hex), .text(key))
                }
                for sql in WebStackKeySchema.deleteStackRows { try c.run(sql, .text(key)) }
                try c.run("DELETE FROM stacks WHERE key = ?", .text(key))
            }
            return orphans.count
        }
    }

    public func retainedBytes() throws -> Int64 {
        try read { c in
            var total: Int64 = 0
            try c.query("SELECT coalesce(sum(length(event)), 0) FROM occurrences") { total += $0.int(0) }
            try c.query("SELECT coalesce(sum(length(payload)), 0) FROM items") { total += $0.int(0) }
            try c.query("SELECT coalesce(sum(size), 0) FROM attachments") { total += $0.int(0) }
            return total
        }
    }

    public func deleteOccurrences(ids: [Int64]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try writer.sync { c in
            var issues = Set<Int64>()
            var deleted = 0
            for id in ids {
                var found = false, issue: Int64?
                try c.query("SELECT \(IssueGroups.resolved("issue_id")) FROM occurrences WHERE id = ? AND processed = 1", .int(id)) {
                    found = true; issue = $0.isNull(0) ? nil : $0.int(0)
                }
                guard found else { continue }
                deleted += try Self.deleteOccurrence(c, id)
                if let issue { issues.insert(issue) }
            }
            for issue in issues.sorted() { try IssueGroups.recount(c, issue) }
            return deleted
        }
    }

    public func deleteItems(ids: [Int64]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try writer.sync { c in
            var deleted = 0
            for id in ids { deleted += try c.run("DELETE FROM items WHERE id = ?", .int(id)) }
            return deleted
        }
    }

    public func oldestRetained(limit: Int) throws -> [RetainedRow] {
        // Each side is one limited range of its `received` index; only the union of the two is sorted.
        // length() of a blob reads its size from the record header, not the blob.
        try read { c in
            var rows: [RetainedRow] = []
            let n = SQLValue.int(Int64(max(0, limit)))
            try c.query(
                """
                SELECT kind, id, received, bytes FROM (
                  SELECT * FROM (SELECT 0 AS kind, id, received, length(event)
                                   + coalesce((SELECT sum(a.size) FROM attachments a WHERE a.occurrence_id = occurrences.id), 0) AS bytes
                                 FROM occurrences
                                 WHERE processed = 1 ORDER BY received, id LIMIT ?)
                  UNION ALL
                  SELECT * FROM (SELECT 1 AS kind, id, received, length(payload) AS bytes FROM items ORDER BY received, id LIMIT ?))
                ORDER BY received, kind, id LIMIT ?
                """, n, n, n
            ) {
                rows.append(RetainedRow(kind: $0.int(0) == 0 ? .occurrence : .item, id: $0.int(1), received: $0.double(2), bytes: $0.int(3)))
            }
            return rows
        }
    }
}
