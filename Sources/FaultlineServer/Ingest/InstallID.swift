// Install ids as stored: each one persists an install-cap window row, so a client rotating
// megabyte ids must not grow the database.
import Foundation

enum InstallID {
    /// Ids longer than this are stored as `sha1:` + the SHA-1 of the id.
    static let maxBytes = 128

    static func bounded(_ id: String?) -> String? {
        guard let id, id.utf8.count > maxBytes else { return id }
        return "sha1:" + SHA1Hash.hex(id)
    }
}
