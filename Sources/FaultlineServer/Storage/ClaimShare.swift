// A claim held in shared mode: many holders at once (every node's grouping), none while an
// exclusive holder has the claim or waits for it (a backfill or a retention sweep). Shares are rows
// of the `claims` table named after the claim and their holder, so they need no table of their own
// (no schema version: nodes of the previous release keep running beside these during an upgrade)
// and are renewed and released with `Store.renewClaim` / `releaseClaim` under that row name.
import Foundation

enum ClaimShare {
    /// The `claims` row holding `holder`'s share of `claim`.
    static func rowName(claim: String, holder: String) -> String { prefix(claim: claim) + holder }

    /// What every share row of `claim` starts with (a space: no claim name holds one).
    static func prefix(claim: String) -> String { claim + " share " }

    /// `prefix` as a LIKE pattern (claim names hold no `%` or `_` that would need escaping: they
    /// are ours, "regrouping", "alerting", "assemble:<sha1 hex>").
    static func pattern(claim: String) -> String { prefix(claim: claim) + "%" }
}
