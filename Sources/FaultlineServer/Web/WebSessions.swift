// Browser sessions: who logged in (a server token or a web user), the cookie that names the
// session, and the CSRF token every state-changing form must echo. Kept in memory: a restart
// logs everyone out, which is acceptable for one server and leaks nothing to disk.
import Foundation
import CCrypto

struct WebSession: Sendable {
    let id: String
    let principal: String
    let csrf: String
    let expires: Double
}

final class WebSessions: @unchecked Sendable {
    static let cookieName = "fl_session"
    /// Double-submit value for the login form (there is no session to hold a CSRF token yet).
    static let loginCookieName = "fl_login"
    static let lifetime: Double = 12 * 3600

    private let lock = NSLock()
    private var sessions: [String: WebSession] = [:]

    func create(principal: String) -> WebSession {
        let s = WebSession(id: Self.random(), principal: principal, csrf: Self.random(), expires: Date().timeIntervalSince1970 + Self.lifetime)
        lock.lock(); defer { lock.unlock() }
        let now = Date().timeIntervalSince1970
        if sessions.count > 10_000 { sessions = sessions.filter { $0.value.expires > now } }
        sessions[s.id] = s
        return s
    }

    func session(for r: HTTPRequest) -> WebSession? {
        guard let id = Self.cookie(Self.cookieName, in: r) else { return nil }
        lock.lock(); defer { lock.unlock() }
        guard let s = sessions[id] else { return nil }
        if s.expires < Date().timeIntervalSince1970 { sessions[id] = nil; return nil }
        return s
    }

    func end(_ id: String) { lock.lock(); sessions[id] = nil; lock.unlock() }

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
