// Session and CSRF cookies, as Relay's defaults filter them: a cookie of one of the common web
// frameworks' session or CSRF names is a whole session, whatever its value looks like. Read by
// SensitiveData for `request.cookies` (an object, pairs, or the header's text) and a `Cookie`
// header.

enum SensitiveCookies {
    /// Relay's list of cookie names.
    static let names: Set<String> = [
        "sentrysid", "sudo", "su", "session", "__session", "sessionid", "user_session", "symfony", "phpsessid", "fasthttpsessionid",
        "mysession", "irissessionid", "_vercel_jwt", "csrf", "xsrf", "_xsrf", "_csrf", "csrf-token", "csrf_token", "xsrf-token",
        "xsrf_token", "fastcsrf", "_iris_csrf"
    ]

    static func isSensitive(_ name: String) -> Bool { names.contains(name.lowercased()) }

    /// A `Cookie` header's text (`a=1; sessionid=…`) with the values of sensitive cookies, and of
    /// cookies whose name names a secret (`SensitiveData.isSensitive(key:)`), filtered; every
    /// other byte as it was.
    static func headerScrubbed(_ header: String) -> String {
        let parts = header.split(separator: ";", omittingEmptySubsequences: false)
        var changed = false
        let kept = parts.map { part -> String in
            guard let eq = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<eq].trimmingCharacters(in: .whitespaces)
            guard isSensitive(name) || SensitiveData.isSensitive(key: name) else { return String(part) }
            changed = true
            return part[...eq] + "[Filtered]"
        }
        return changed ? kept.joined(separator: ";") : header
    }
}
