// `RetentionStore` over PostgreSQL: each call is one transaction on a pooled connection.
import Foundation

extension PostgresStore: RetentionStore {
    public func deleteOccurrences(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try pool.transaction { c in
            var issues = Set<Int64>()
            let n = try c.query("""
                DELETE FROM occurrences WHERE id IN (
                  SELECT id FROM occurrences WHERE received < $1 AND processed = 1 ORDER BY received LIMIT $2)
                RETURNING \(IssueGroups.resolved("issue_id"))
                """, .double(cutoff), .int(Int64(limit))) { if !$0.isNull(0) { issues.insert($0.int(0)) } }
            // Each row's live issue (a row may name an issue merged into it: IssueGroups), recounted
            // in id order on every node, so two recounts cannot deadlock on issue rows.
            for issue in issues.sorted() { try IssueGroups.recount(c, issue) }
            return n
        }
    }

    public func deleteItems(receivedBefore cutoff: Double, limit: Int) throws -> Int {
        try pool.transaction { c in
            try c.query("DELETE FROM items WHERE id IN (SELECT id FROM items WHERE received < $1 ORDER BY received LIMIT $2)",
                        .double(cutoff), .int(Int64(limit)))
        }
    }

    public func deleteOrphanedStacks(limit: Int) throws -> Int {
        try pool.transaction { c in
            var orphans: [(String, Data)] = []
            try c.query("SELECT key, signature FROM stacks s WHERE NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.stack_key = s.key) LIMIT $1",
                        .int(Int64(limit))) { orphans.append(($0.text(0) ?? "", $0.blob(1))) }
            for (key, signature) in orphans {
                // Module rows are keyed (build_id, stack_key): the signature names the build-ids.
                for b in StackSignature.decode(signature)?.buildIDs ?? [] {
                    try c.query("DELETE FROM stack_modules WHERE build_id = $1 AND stack_key = $2", .text(b.hex), .text(key))
                }
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
            return total
        }
    }

    public func nthOldestReceived(_ n: Int) throws -> (occurrence: Double?, item: Double?) {
        try pool.transaction(readOnly: true) { c in
            var out: (Double?, Double?) = (nil, nil)
            try c.query("SELECT received FROM occurrences WHERE processed = 1 ORDER BY received LIMIT 1 OFFSET $1", .int(Int64(n - 1))) { out.0 = $0.double(0) }
            try c.query("SELECT received FROM items ORDER BY received LIMIT 1 OFFSET $1", .int(Int64(n - 1))) { out.1 = $0.double(0) }
            return out
        }
    }
}
