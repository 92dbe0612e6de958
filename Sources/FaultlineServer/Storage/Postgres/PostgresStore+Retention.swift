// `RetentionStore` over PostgreSQL: each call is one transaction on a pooled connection.
import Foundation
import FaultlineProtocol

extension PostgresStore: RetentionStore {
    /// The trace links of deleted occurrences (their attachments and minidump modules cascade).
    static func deleteTraceLinks(_ c: PGConnection, _ ids: [Int64]) throws {
        guard !ids.isEmpty else { return }
        _ = try c.query(
            "DELETE FROM occurrence_traces WHERE occurrence_id = ANY(string_to_array($1, ',')::bigint[])", .text(ids.map(String.init).joined(separator: ",")))
    }

    public func deleteOccurrences(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try pool.transaction { c in
            var issues = Set<Int64>()
            var deleted: [Int64] = []
            let n = try c.query(
                """
                DELETE FROM occurrences WHERE id IN (
                  SELECT id FROM occurrences WHERE received < $1 AND processed = 1 ORDER BY received LIMIT $2)
                RETURNING \(IssueGroups.resolved("issue_id")), id
                """, .double(cutoff), .int(Int64(limit))
            ) {
                if !$0.isNull(0) { issues.insert($0.int(0)) }
                deleted.append($0.int(1))
            }
            try Self.deleteTraceLinks(c, deleted)
            // Each row's live issue (a row may name an issue merged into it: IssueGroups), recounted
            // in id order on every node, so two recounts cannot deadlock on issue rows.
            for issue in issues.sorted() { try IssueGroups.recount(c, issue) }
            return n
        }
    }

    public func deleteItems(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try pool.transaction { c in
            try c.query(
                "DELETE FROM items WHERE id IN (SELECT id FROM items WHERE received < $1 ORDER BY received LIMIT $2)",
                .double(cutoff), .int(Int64(limit)))
        }
    }

    public func deleteOrphanedStacks(limit: Int, buildIDs: @escaping @Sendable (Data) -> Set<BuildID>) throws -> Int {
        try pool.transaction { c in
            var orphans: [(String, Data)] = []
            try c.query(
                "SELECT key, signature FROM stacks s WHERE NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.stack_key = s.key) LIMIT $1",
                .int(Int64(limit))
            ) { orphans.append(($0.text(0) ?? "", $0.blob(1))) }
            for (key, signature) in orphans {
                // Module rows are keyed (build_id, stack_key): the signature names the build-ids.
                for b in buildIDs(signature) {
                    try c.query("DELETE FROM stack_modules WHERE build_id = $1 AND stack_key = $2", .text(b.hex), .text(key))
                }
                for sql in WebStackKeySchema.deleteStackRows { try c.query(PostgresPlaceholders.numbered(sql), .text(key)) }
                try c.query("DELETE FROM stacks WHERE key = $1", .text(key))
            }
            return orphans.count
        }
    }

    public func retainedBytes() throws -> Int64 {
        try pool.transaction(readOnly: true) { c in
            var total: Int64 = 0
            try c.query("SELECT coalesce(sum(octet_length(event)), 0) FROM occurrences") { total += $0.int(0) }
            try c.query("SELECT coalesce(sum(octet_length(payload)), 0) FROM items") { total += $0.int(0) }
            try c.query("SELECT coalesce(sum(size), 0) FROM attachments") { total += $0.int(0) }
            return total
        }
    }

    public func deleteOccurrences(ids: [Int64]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try pool.transaction { c in
            var issues = Set<Int64>()
            var deleted: [Int64] = []
            // One statement: the ids go as one text parameter, split and cast by the server.
            let n = try c.query(
                """
                DELETE FROM occurrences WHERE id = ANY(string_to_array($1, ',')::bigint[]) AND processed = 1
                RETURNING \(IssueGroups.resolved("issue_id")), id
                """, .text(ids.map(String.init).joined(separator: ","))
            ) {
                if !$0.isNull(0) { issues.insert($0.int(0)) }
                deleted.append($0.int(1))
            }
            try Self.deleteTraceLinks(c, deleted)
            // In id order on every node, so two recounts cannot deadlock on issue rows.
            for issue in issues.sorted() { try IssueGroups.recount(c, issue) }
            return n
        }
    }

    public func deleteItems(ids: [Int64]) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try pool.transaction { c in
            try c.query("DELETE FROM items WHERE id = ANY(string_to_array($1, ',')::bigint[])", .text(ids.map(String.init).joined(separator: ",")))
        }
    }

    public func oldestRetained(limit: Int) throws -> [RetainedRow] {
        // Each side is one limited range of its `received` index; only the union of the two is sorted.
        // octet_length() of a TOASTed value reads its size from the TOAST pointer, not the value.
        try pool.transaction(readOnly: true) { c in
            var rows: [RetainedRow] = []
            _ = try c.query(
                """
                SELECT kind, id, received, bytes FROM (
                  (SELECT 0 AS kind, id, received, (octet_length(event)
                     + coalesce((SELECT sum(a.size) FROM attachments a WHERE a.occurrence_id = occurrences.id), 0))::bigint AS bytes
                   FROM occurrences
                   WHERE processed = 1 ORDER BY received, id LIMIT $1)
                  UNION ALL
                  (SELECT 1 AS kind, id, received, octet_length(payload)::bigint AS bytes FROM items ORDER BY received, id LIMIT $1)) r
                ORDER BY received, kind, id LIMIT $1
                """, .int(Int64(max(0, limit)))
            ) {
                rows.append(RetainedRow(kind: $0.int(0) == 0 ? .occurrence : .item, id: $0.int(1), received: $0.double(2), bytes: $0.int(3)))
            }
            return rows
        }
    }
}
