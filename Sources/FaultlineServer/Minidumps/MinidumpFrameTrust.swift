// How a frame walked from a minidump was found (Sentry's `trust` on a frame), as the pages and the
// API show it. Read from the stored event, which a client may have written: only the names a
// stackwalker gives pass.
import Foundation
import FaultlineProtocol

enum MinidumpFrameTrust {
    /// Sentry's trust names that Faultline's walker writes (best first), and the others Sentry's
    /// own stackwalker knows.
    static let names: Set<String> = ["context", "cfi", "fp", "scan", "cfi_scan", "prewalked", "inline", "none"]

    static func of(_ frame: JSONValue) -> String? {
        guard let t = frame["trust"]?.stringValue, names.contains(t) else { return nil }
        return t
    }
}
