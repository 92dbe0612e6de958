// Why a store refused to open or to act, with what to do about it.

public enum StoreError: Error, Equatable, CustomStringConvertible {
    /// The database was written by a newer Faultline; this binary must not touch it.
    case newerSchema(path: String, found: Int, supported: Int)
    /// The store was closed (the server is stopping) before the operation could run.
    case closed
    /// Rows that the store's own writes keep consistent were found not to be (edited by hand, or
    /// damaged): the operation is refused rather than guessed at.
    case inconsistent(String)

    public var description: String {
        switch self {
        case .newerSchema(let path, let found, let supported):
            return "\(path) has schema version \(found), but this faultline understands versions up to \(supported): "
                + "it was written by a newer faultline. Run that version (or newer), or restore a backup made for this one."
        case .closed:
            return "the store is closed: the server is stopping"
        case .inconsistent(let what):
            return "the database is inconsistent: \(what)"
        }
    }
}
