// The page chrome shared by every page: doctype, stylesheet link, navigation, logout form.
import Foundation

enum WebLayout {
    static func page(title: String, body: String, user: String?, csrfField: String, project: ProjectRecord? = nil) -> String {
        var nav = "<a class=\"brand\" href=\"/ui/projects\">Faultline</a>"
        if let p = project {
            let slug = HTML.q(p.slug)
            nav +=
                "<a href=\"/ui/projects/\(slug)/issues\">Issues</a><a href=\"/ui/projects/\(slug)/health\">Release health</a><a href=\"/ui/projects/\(slug)/logs\">Logs</a><a href=\"/ui/projects/\(slug)/traces\">Traces</a><a href=\"/ui/projects/\(slug)/alerts\">Alerts</a>"
        }
        nav += "<a href=\"/ui/debug-files\">Debug files</a>"
        if let user {
            nav +=
                "<span class=\"who\">\(HTML.esc(user))</span><form class=\"logout\" method=\"post\" action=\"/ui/logout\">\(csrfField)<button type=\"submit\">Log out</button></form>"
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTML.esc(title)) · Faultline</title><link rel="stylesheet" href="/ui/static/app.css"></head>
            <body><header><nav>\(nav)</nav></header><main>
            \(body)
            </main></body></html>
            """
    }

    static func errorPage(_ title: String, _ detail: String) -> String {
        page(title: title, body: "<h1>\(HTML.esc(title))</h1><p class=\"muted\">\(HTML.esc(detail))</p>", user: nil, csrfField: "")
    }
}
