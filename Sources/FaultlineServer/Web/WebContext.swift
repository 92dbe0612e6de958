// What every page handler gets: the UI, the logged-in session, the request.
import FaultlineThreads
import Foundation
import FaultlineProtocol

/// What every page handler gets: the UI, the logged-in session, the request.
struct WebContext {
    let ui: WebUI
    let session: WebSession
    let request: HTTPRequest
    var store: any Store { ui.store }
    var stores: Stores { ui.stores }
    var database: any SQLDatabase { ui.database }
    var queries: WebQueries { ui.queries }
    func q(_ name: String) -> String { request.query[name] ?? "" }
    /// A hidden input carrying the CSRF token; every POST form includes it.
    var csrfField: String { "<input type=\"hidden\" name=\"_csrf\" value=\"\(HTML.esc(session.csrf))\">" }
    /// The page in the shared chrome. Pages of no project (projects, debug files) link the first
    /// project's sections, so the navigation after login shows every section, not only "Debug files".
    func layout(_ title: String, _ body: String, project: ProjectRecord? = nil) -> HTTPResponse {
        let shown = project ?? (try? store.projects().first) ?? nil
        return WebUI.page(WebLayout.page(title: title, body: body, user: session.principal, csrfField: csrfField, project: shown))
    }
}
