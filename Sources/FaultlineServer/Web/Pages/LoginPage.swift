// /ui/login: a server token, or a web user's name and password, becomes a session cookie.
// The form is protected by a double-submit nonce (cookie + hidden field), since there is no
// session yet to hold a CSRF token; SameSite=Strict keeps other sites from posting it anyway.
import Foundation

struct LoginPage {
    let ui: WebUI
    /// The salt an unknown user's password is hashed with (never matches: no stored hash is empty).
    static let decoySalt = Data(repeating: 0x5a, count: 16)

    func handle(_ r: HTTPRequest) throws -> HTTPResponse {
        if r.method == "POST" { return try login(r) }
        return form(error: nil, request: r)
    }

    /// The page to go to once logged in: the form's `next` (the query's on the form, the posted
    /// field on login), when ReturnPath allows it.
    func returnPath(_ r: HTTPRequest) -> String? {
        ReturnPath.validated(r.method == "POST" ? WebUI.form(r.body)["next"] : r.query["next"])
    }

    func form(error: String?, request r: HTTPRequest, status: Int = 200) -> HTTPResponse {
        let nonce = WebSessions.random()
        let next = returnPath(r).map { "<input type=\"hidden\" name=\"next\" value=\"\(HTML.esc($0))\">" } ?? ""
        let body = """
            <form class="login" method="post" action="/ui/login">
            <h1>Log in</h1>
            \(error.map { "<p class=\"error\">\(HTML.esc($0))</p>" } ?? "")
            <input type="hidden" name="_login" value="\(nonce)">\(next)
            <label for="token">Server token</label><input id="token" name="token" type="password" autocomplete="off" placeholder="flst_…">
            <p class="muted">or a user added with <code>faultline projects user add</code>:</p>
            <label for="user">User</label><input id="user" name="user" autocomplete="username">
            <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
            <p><button class="primary" type="submit">Log in</button></p>
            </form>
            """
        return WebUI.page(
            status: status, WebLayout.page(title: "Log in", body: body, user: nil, csrfField: ""),
            headers: [("Set-Cookie", WebSessions.setCookie(WebSessions.loginCookieName, nonce, secure: ui.isSecure(r), maxAge: 1800))])
    }

    func login(_ r: HTTPRequest) throws -> HTTPResponse {
        let f = WebUI.form(r.body)
        guard let cookie = WebSessions.cookie(WebSessions.loginCookieName, in: r), WebSessions.same(cookie, f["_login"] ?? "") else {
            return form(error: "The login form expired; try again.", request: r, status: 403)
        }
        var principal: String?
        if let token = f["token"]?.trimmingCharacters(in: .whitespaces), !token.isEmpty {
            if try ui.store.isServerToken(token) { principal = "token " + ((try ui.queries.tokenName(token: token)) ?? "?") }
        } else if let name = f["user"], !name.isEmpty, let password = f["password"] {
            if let wait = ui.loginThrottle.lockedFor(name, address: r.clientAddress) {
                return form(error: "Too many failed logins; try again in \(Int(wait.rounded(.up))) s.", request: r, status: 429)
            }
            let user = try ui.queries.user(name)
            // An unknown name costs the same hash as a known one, so timing tells neither apart.
            // Asked again inside the one hashing slot: attempts that were all waiting for it when
            // the limit was reached are refused, not each hashed.
            guard
                let matches = ui.loginThrottle.hashing({ () -> Bool? in
                    if ui.loginThrottle.lockedFor(name, address: r.clientAddress) != nil { return nil }
                    return WebSessions.hashPassword(password, salt: user?.salt ?? LoginPage.decoySalt) == (user?.hash ?? Data())
                })
            else {
                return form(error: "The server is busy checking other logins; try again in a moment.", request: r, status: 503)
            }
            guard let matches else {
                return form(error: "Too many failed logins; try again later.", request: r, status: 429)
            }
            if let user, matches {
                principal = user.name
                ui.loginThrottle.recordSuccess(name)
            } else {
                ui.loginThrottle.recordFailure(name, address: r.clientAddress)
            }
        }
        guard let principal else { return form(error: "Unknown token, user or password.", request: r, status: 401) }
        guard let s = ui.sessions.create(principal: principal) else {
            return form(error: "The session could not be stored; try again.", request: r, status: 503)
        }
        return WebUI.redirect(
            returnPath(r) ?? "/ui/projects",
            headers: [
                ("Set-Cookie", WebSessions.setCookie(WebSessions.cookieName, s.id, secure: ui.isSecure(r), maxAge: Int(WebSessions.lifetime)))
            ])
    }
}
