// Browser sessions: who logged in (a server token or a web user), the cookie that names the
// session, and the CSRF token every state-changing form must echo. Kept in the database (hash of
// the cookie only, migration 10), so every node sharing it accepts a session made on any other,
// and a logout anywhere ends it everywhere. The CSRF token is derived from the cookie, never stored.
import Foundation
import CCrypto
import FaultlineHashing

struct WebSession: Sendable {
    let id: String
    let principal: String
    let csrf: String
    let expires: Double
}

final class WebSessions: Sendable {
    static let cookieName = "fl_session"
    /// Double-submit value for the login form (there is no session to hold a CSRF token yet).
    static let loginCookieName = "fl_login"
    static let lifetime: Double = 12 * 3600

    private let queries: WebQueries

    init(queries: WebQueries) { self.queries = queries }

    /// A new session, stored; nil when the database refused it.
    func create(principal: String) -> WebSession? {
        let id = Self.random(), now = Date().timeIntervalSince1970
        let s = WebSession(id: id, principal: principal, csrf: Self.csrf(for: id), expires: now + Self.lifetime)
        do { try queries.saveSession(idHash: Self.hash(id), principal: principal, expires: s.expires, now: now) } catch { return nil }
        return s
    }

    func session(for r: HTTPRequest) -> WebSession? {
        guard let id = Self.cookie(Self.cookieName, in: r), id.utf8.count == 64 else { return nil }
        guard let found = try? queries.session(idHash: Self.hash(id), now: Date().timeIntervalSince1970) else { return nil }
        return WebSession(id: id, principal: found.principal, csrf: Self.csrf(for: id), expires: found.expires)
    }

    func end(_ id: String) { try? queries.endSession(idHash: Self.hash(id)) }

    static func hash(_ id: String) -> String { SHA256Hash.hex(Data(id.utf8)) }

    /// What forms echo: a hash of the session id under its own label (knowing it gives no session).
    static func csrf(for id: String) -> String { SHA256Hash.hex(Data(("faultline-csrf:" + id).utf8)) }

    /// 32 bytes from the system CSPRNG (RAND_bytes), hex.
    static func random() -> String {
        var b = [UInt8](repeating: 0, count: 32)
        if RAND_bytes(&b, 32) != 1 {
            var g = SystemRandomNumberGenerator()
            for i in b.indices { b[i] = UInt8.random(in: 0...255, using: &g) }
        }
        return b.map { String(format: "%02x", $0) }.joined()
    }

    static func cookie(_ name: String, in r: HTTPRequest) -> String? {
        guard let header = r.header("cookie") else { return nil }
        for part in header.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces) == name { return kv[1].trimmingCharacters(in: .whitespaces) }
        }
        return nil
    }

    /// `Set-Cookie` value: HttpOnly and SameSite=Strict always, Secure when the browser reaches
    /// us over TLS (public URL https, or a proxy saying so), scoped to the web pages.
    static func setCookie(_ name: String, _ value: String, secure: Bool, maxAge: Int) -> String {
        "\(name)=\(value); Path=/ui; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)" + (secure ? "; Secure" : "")
    }

    /// Constant-time comparison for secrets from the request.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count, !x.isEmpty else { return false }
        var d: UInt8 = 0
        for i in x.indices { d |= x[i] ^ y[i] }
        return d == 0
    }

    // MARK: Passwords (web users added with `faultline projects user add`)

    static func hashPassword(_ password: String, salt: Data) -> Data {
        var out = [UInt8](repeating: 0, count: 32)
        let pw = Array(password.utf8).map { CChar(bitPattern: $0) }
        let s = [UInt8](salt)
        _ = PKCS5_PBKDF2_HMAC(pw, Int32(pw.count), s, Int32(s.count), 200_000, EVP_sha256(), 32, &out)
        return Data(out)
    }

    static func newSalt() -> Data {
        var b = [UInt8](repeating: 0, count: 16)
        _ = RAND_bytes(&b, 16)
        return Data(b)
    }
}
