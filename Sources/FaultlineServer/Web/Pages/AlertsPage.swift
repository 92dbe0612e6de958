// /ui/projects/<slug>/alerts: the project's alert rules (add, send a test, remove) and every
// delivery with its state and last error. POST …/alerts/{add,test,remove} change them (CSRF
// checked by WebUI); the server's dispatcher sends a test within its poll interval.
import Foundation
import FaultlineProtocol

struct AlertsPage {
    let ctx: WebContext
    let project: ProjectRecord
    var admin: AlertAdministration { AlertAdministration(store: ctx.store, database: ctx.database) }

    func render(notice: String? = nil) throws -> HTTPResponse {
        let slug = HTML.q(project.slug)
        var body = "<h1>Alerts</h1>"
        if let notice { body += "<p class=\"notice\">\(HTML.esc(notice))</p>" }
        let rules = try admin.rules(project: project)
        body += "<h2>Rules</h2>"
        if rules.isEmpty {
            body += "<p class=\"muted\">No rules yet: nobody is told about new issues or regressions.</p>"
        } else {
            body += "<table><thead><tr><th>Rule</th><th>Channel</th><th>Target</th><th>On</th><th>Only</th><th></th></tr></thead><tbody>"
            for r in rules {
                let only = [r.environment.map { "environment \($0)" }, r.level.map { "level \($0)" }, r.release.map { "release \($0)" }].compactMap { $0 }
                body += "<tr><td>\(r.id)</td><td>\(HTML.esc(r.channel.rawValue))</td><td><code>\(HTML.esc(HTML.clip(r.target, 80)))</code></td>"
                body +=
                    "<td>\(HTML.esc(r.triggers.map(\.spelling).joined(separator: ", ")))</td><td>\(HTML.esc(only.isEmpty ? "—" : only.joined(separator: ", ")))</td>"
                body +=
                    "<td><form method=\"post\" action=\"/ui/projects/\(slug)/alerts/test\">\(ctx.csrfField)<input type=\"hidden\" name=\"rule\" value=\"\(r.id)\"><button type=\"submit\">Send test</button></form>"
                body +=
                    "<form method=\"post\" action=\"/ui/projects/\(slug)/alerts/remove\">\(ctx.csrfField)<input type=\"hidden\" name=\"rule\" value=\"\(r.id)\"><button type=\"submit\">Remove</button></form></td></tr>"
            }
            body += "</tbody></table>"
        }
        body += """
            <h2>Add a rule</h2>
            <form class="filters" method="post" action="/ui/projects/\(slug)/alerts/add">\(ctx.csrfField)
            <label for="channel">Channel</label><select id="channel" name="channel"><option value="webhook">webhook (JSON)</option><option value="slack">Slack webhook</option><option value="email">email</option></select>
            <label for="target">URL or address</label><input id="target" name="target" size="40" required>
            <label for="on">On</label><input id="on" name="on" size="40" value="new-issue,regression">
            <label for="environment">Environment</label><input id="environment" name="environment" size="10">
            <label for="level">Level</label><input id="level" name="level" size="8">
            <label for="release">Release</label><input id="release" name="release" size="12">
            <button class="primary" type="submit">Add</button></form>
            <p class="muted">Triggers: new-issue, regression, frequency:N/M (N events in M minutes), crash-free:P/M (a release's crash-free sessions below P % over M minutes), symbolicated (a late debug file named an issue this rule alerted about).</p>
            """
        let deliveries = try admin.deliveries(project: project, limit: 100)
        body += "<h2>Deliveries</h2>"
        if deliveries.isEmpty {
            body += "<p class=\"muted\">Nothing sent yet.</p>"
        } else {
            body +=
                "<table><thead><tr><th>#</th><th>Rule</th><th>What</th><th>State</th><th>Attempts</th><th>Last error</th><th>Queued</th><th>Sent</th></tr></thead><tbody>"
            for d in deliveries {
                let what =
                    d.issueID.map { "<a href=\"/ui/issues/\($0)\">\(HTML.esc(HTML.clip(AlertMessage.headline(d.payload), 120)))</a>" }
                    ?? HTML.esc(AlertMessage.headline(d.payload))
                body +=
                    "<tr><td>\(d.id)</td><td>\(d.ruleID)</td><td>\(what)</td><td><span class=\"tag\">\(HTML.esc(d.state.rawValue))</span></td><td>\(d.attempts)</td>"
                body += "<td>\(HTML.esc(HTML.clip(d.lastError ?? "—", 160)))</td><td>\(HTML.time(d.created))</td><td>\(d.sent.map(HTML.time) ?? "—")</td></tr>"
            }
            body += "</tbody></table>"
        }
        return ctx.layout("Alerts · \(project.name)", body, project: project)
    }

    func act(_ action: String) throws -> HTTPResponse {
        let f = WebUI.form(ctx.request.body)
        func text(_ k: String) -> String? { f[k].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } }
        do {
            switch action {
            case "add":
                guard let channel = text("channel").flatMap(AlertChannel.init(rawValue:)) else { return try refuse("pick a channel") }
                _ = try admin.add(
                    project: project, channel: channel, target: text("target") ?? "", on: text("on") ?? "new-issue,regression",
                    environment: text("environment"), level: text("level"), release: text("release"))
            case "test", "remove":
                guard let id = text("rule").flatMap(Int64.init), let rule = try admin.rule(id: id), rule.projectID == project.id else {
                    return WebUI.notFound("no such rule")
                }
                if action == "test" { _ = try admin.test(ruleID: id) } else { _ = try admin.remove(ruleID: id) }
            default:
                return WebUI.notFound("no such action")
            }
        } catch let e as AlertRuleError {
            return try refuse(e.description)
        }
        return WebUI.redirect("/ui/projects/\(HTML.q(project.slug))/alerts")
    }

    private func refuse(_ why: String) throws -> HTTPResponse {
        var page = try render(notice: "Not added: \(why)")
        page.status = 400
        return page
    }
}
