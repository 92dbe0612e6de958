// Sends what the evaluator enqueued: takes due deliveries with a lease (so with several nodes each
// goes out once, and one whose sender died is taken again), sends each through its channel off
// every request thread, and records the outcome: sent, or retried with back-off until it gives up.
// A per-rule rate limit postpones what is over it; nothing is dropped. Each rule is a lane of its
// own: one send in flight per rule (on this node), up to `maxConcurrentSends` rules at once, so a
// receiver that hangs until the timeout delays only its own rule's alerts, never another channel's.
import FaultlineProtocol
import FaultlineThreads
import Foundation
import Synchronization

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
    /// Rules with a send in flight.
    private let busyRules = Mutex<Set<Int64>>([])
    private let sends = DispatchGroup()
    /// Held for a whole leasing round (`startDue`).
    private let leasing = Mutex<Void>(())
    private let sendQueue = DispatchQueue(label: "faultline-alert-send", attributes: .concurrent)
    /// Rules sent to at once at most.
    static let maxConcurrentSends = 8
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
            return .run { [unowned self] in startDue() }
        }
    }

    func wake() { worker.update { $0 = true } }

    /// Stops taking deliveries, then waits (a send's timeout at most) for those in flight.
    func stop() {
        _ = worker.stop()
        _ = sends.wait(timeout: .now() + .seconds(sendTimeout + 5))
    }

    /// Back-off after the n-th failed attempt: 5 s, 10 s, 20 s … at most an hour.
    static func backoff(attempts: Int64) -> Double { min(3600, 5 * pow(2, Double(max(0, attempts - 1)))) }

    /// Sends every due delivery and returns when they are all done, those due again meanwhile
    /// (the next of a rule's deliveries) included: for whoever must know they went out (tests).
    func sendDue() {
        while true {
            let started = startDue()
            let wereInFlight = !busyRules.withLock { $0.isEmpty }
            sends.wait()
            // Nothing started and nothing was in flight (whose rule's next delivery is due now).
            if started == 0 && !wereInFlight { return }
        }
    }

    /// Starts sending what is due in every free lane and returns at once (the worker's round);
    /// how many sends it started.
    @discardableResult
    func startDue() -> Int {
        // One round at a time (the worker's, or a caller's `sendDue`): a rule is leased and marked
        // busy together, so two rounds never send for one rule at once.
        leasing.withLock { _ in leaseAndStart() }
    }

    private func leaseAndStart() -> Int {
        var started = 0
        while !worker.isStopping {
            let now = Date().timeIntervalSince1970
            let busy = busyRules.withLock { $0 }
            let free = Self.maxConcurrentSends - busy.count
            guard free > 0 else { return started }  // a finishing send wakes the worker
            // Leased as it starts: its lease (a send's whole timeout, twice over) never runs out
            // while it is sent, so no other node takes it meanwhile.
            let lease = Double(sendTimeout) * 2 + 60
            guard
                let batch = try? database.writing({ [holder] c in
                    try AlertRows.lease(c, holder: holder, now: now, lease: lease, limit: free, excludingRules: busy)
                }),
                !batch.isEmpty
            else { return started }
            started += batch.count
            for d in batch {
                busyRules.withLock { _ = $0.insert(d.ruleID) }
                sendQueue.async(group: sends) { [self] in
                    send(d)
                    busyRules.withLock { _ = $0.remove(d.ruleID) }
                    wake()
                }
            }
        }
        return started
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
            // Delivery is at least once (a receiver that answers after the timeout is sent the
            // alert again): the id lets it recognise a repeat.
            try CurlTransfer.postJSON(
                url: rule.target, body: Data(payload.jsonString.utf8), timeout: sendTimeout, extraHeaders: ["\(HeaderName.alertDelivery): \(deliveryID)"])
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
