// Web users (name + password) for people who should read crashes without holding a server
// token. Added from the CLI (`faultline projects user add NAME`, password on stdin); only a
// salted PBKDF2-HMAC-SHA256 (200,000 rounds) of the password is stored.
import Foundation

public enum WebUsers {
    public enum Failure: Error, CustomStringConvertible {
        case badName, shortPassword, noWebStore
        public var description: String {
            switch self {
            case .noWebStore: return "this store keeps no web users"
            case .badName: return "a user name is 1–64 letters, digits, '.', '-', '_' or '@'"
            case .shortPassword: return "a password needs at least 10 characters"
            }
        }
    }

    /// Adds the user, or sets a new password for an existing one.
    public static func set(stores: Stores, name: String, password: String) throws {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: ".-_@"))
        guard (1...64).contains(name.count), name.unicodeScalars.allSatisfy(allowed.contains) else { throw Failure.badName }
        guard password.count >= 10 else { throw Failure.shortPassword }
        let salt = WebSessions.newSalt()
        try queries(stores).setUser(WebUser(name: name, salt: salt, hash: WebSessions.hashPassword(password, salt: salt)))
    }

    public static func list(stores: Stores) throws -> [String] { try queries(stores).users() }

    private static func queries(_ stores: Stores) throws -> WebQueries {
        guard let database = stores.database else { throw Failure.noWebStore }
        return WebQueries(store: stores.core, database: database)
    }
}
