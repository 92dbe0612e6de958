// Web users (name + password) for people who should read crashes without holding a server
// token. Added from the CLI (`faultline projects user add NAME`, password on stdin); only a
// salted PBKDF2-HMAC-SHA256 (200,000 rounds) of the password is stored.
import Foundation

public enum WebUsers {
    public enum Failure: Error, CustomStringConvertible {
        case badName, shortPassword
        public var description: String {
            switch self {
            case .badName: return "a user name is 1–64 letters, digits, '.', '-', '_' or '@'"
            case .shortPassword: return "a password needs at least 10 characters"
            }
        }
    }

    /// Adds the user, or sets a new password for an existing one.
    public static func set(store: SQLiteStore, name: String, password: String) throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_@"))
        guard (1...64).contains(name.count), name.unicodeScalars.allSatisfy(allowed.contains) else { throw Failure.badName }
        guard password.count >= 10 else { throw Failure.shortPassword }
        let salt = WebSessions.newSalt()
        try WebQueries(store: store).setUser(WebUser(name: name, salt: salt, hash: WebSessions.hashPassword(password, salt: salt)))
    }

    public static func list(store: SQLiteStore) throws -> [String] { try WebQueries(store: store).users() }
}
