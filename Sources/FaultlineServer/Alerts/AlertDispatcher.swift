// Sends what the evaluator enqueued: takes due deliveries with a lease (so with several nodes each
// goes out once, and one whose sender died is taken again), sends each through its channel off
// every request thread, and records the outcome: sent, or retried with back-off until it gives up.
// A per-rule rate limit postpones what is over it; nothing is dropped.
import FaultlineProtocol
import FaultlineThreads
import Foundation

final class AlertDispatcher: @unchecked Sendable {
    let database: any SQLDatabase
    let smtp: SMTPSettings?
    /// Adds what is known at send time (the current title, its top in-app frames).
    let enrich: @Sendable (JSONValue) -> JSONValue
    /// At most this many alerts per rule per minute; more wait for the next minute.
    let perRulePerMinute: Int64
    /// Seconds one send may take (connect and transfer) before it counts as failed.
    let sendTimeout: Int
    /// Attempts before a delivery is given up (recorded as failed, with its last error).
    let maxAttempts: Int64 = 12
    private let worker = WorkerThread(name: "faultline-alert-sender", state: false)
    private let holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):alerts"
    private let interval: Double

    init(
        database: any SQLDatabase, smtp: SMTPSettings?, perRulePerMinute: Int64, sendTimeout: Int, interval: Double = 1,
        enrich: @escaping @Sendable (JSONValue) -> JSONValue
    ) {
        self.database = database; self.smtp = smtp; self.perRulePerMinute = perRulePerMinute; self.sendTimeout = sendTimeout
        self.interval = interval; self.enrich = enrich
    }

    func start() {
        var due = Date()
        worker.start { [unowned self] woken, stopping in
            if stopping { return .exit }
            if !woken && Date() < due { return .wait(until: due) }
            woken = false
            due = Date().addingTimeInterval(interval)
            return .run { [unowned self] in sendDue() }
        }
    }

    func wake() { worker.update { $0 = true } }

    func stop() { _ = worker.stop() }

    /// Back-off after the n-th failed attempt: 5 s, 10 s, 20 s … at most an hour.
    static func backoff(attempts: Int64) -> Double { min(3600, 5 * pow(2, Double(max(0, attempts - 1)))) }

    func sendDue() {
        while !worker.isStopping {
            let now = Date().timeIntervalSince1970
            // One at a time: its lease (a send's whole timeout, twice over) never runs out while
            // it waits behind others, so no other node takes it meanwhile.
            let lease = Double(sendTimeout) * 2 + 60
            guard let batch = try? database.writing({ [holder] c in try AlertRows.lease(c, holder: holder, now: now, lease: lease, limit: 1) }),
                !batch.isEmpty
            else { return }
            for d in batch { send(d) }
        }
    }

    private func send(_ d: AlertDelivery) {
        let now = Date().timeIntervalSince1970
        do {
            guard let rule = try database.reading({ try AlertRows.rule($0, id: d.ruleID) }) else {
                try database.writing { c in try AlertRows.markFailed(c, id: d.id, error: "rule removed", retryAt: nil) }
                return
            }
            if d.kind != .test {
                let recent = try database.reading { try AlertRows.sentRecently($0, ruleID: rule.id, since: now - 60) }
                if recent >= perRulePerMinute {
                    try database.writing { c in try AlertRows.postpone(c, id: d.id, until: now + 60) }
                    return
                }
            }
            try deliver(enrich(d.payload), rule: rule, deliveryID: d.id)
            try database.writing { c in try AlertRows.markSent(c, id: d.id, now: Date().timeIntervalSince1970) }
        } catch {
            let attempts = d.attempts + 1
            let retry: Double? = attempts >= maxAttempts ? nil : now + Self.backoff(attempts: attempts)
            _ = try? database.writing { c in try AlertRows.markFailed(c, id: d.id, error: "\(error)", retryAt: retry) }
        }
    }

    /// One send through the rule's channel; throws why it failed.
    func deliver(_ payload: JSONValue, rule: AlertRule, deliveryID: Int64) throws {
        switch rule.channel {
        case .webhook:
            try CurlTransfer.postJSON(url: rule.target, body: Data(payload.jsonString.utf8), timeout: sendTimeout)
        case .slack:
            try CurlTransfer.postJSON(url: rule.target, body: Data(AlertMessage.slack(payload).jsonString.utf8), timeout: sendTimeout)
        case .email:
            guard let smtp else { throw CurlTransfer.Failure(description: "no SMTP relay configured (faultline serve --smtp smtp://HOST:PORT)") }
            let message = AlertMessage.email(
                payload, from: smtp.from, to: rule.target, now: Date().timeIntervalSince1970,
                messageID: "alert-\(deliveryID)-\(UUID().uuidString.lowercased())@faultline")
            try CurlTransfer.mail(smtp, to: rule.target, message: message, timeout: sendTimeout)
        }
    }
}
