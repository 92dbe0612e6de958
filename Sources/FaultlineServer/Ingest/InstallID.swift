// Install ids as stored: each one persists an install-cap window row, so a client rotating
// megabyte ids must not grow the database.
import Foundation
import FaultlineHashing

enum InstallID {
    /// Ids longer than this are stored as `sha1:` + the SHA-1 of the id.
    static let maxBytes = 128

    /// The window key of submissions that name no install: their sender's address. A client's
    /// own id never begins with the prefix (`bounded` hashes one that does).
    static func forAddress(_ address: String) -> String { addressPrefix + (address.isEmpty ? "unknown" : address) }
    static let addressPrefix = "address:"

    static func bounded(_ id: String?) -> String? {
        guard let id, id.utf8.count > maxBytes || id.hasPrefix(addressPrefix) else { return id }
        return "sha1:" + SHA1Hash.hex(id)
    }
}
