// A loss in Sentry's client-report terms: why (Sentry's discard reason) and what (a data category),
// so a server counting outcomes sees what the app lost — a log envelope is its lines and bytes, an
// attachment its bytes, a transaction one transaction and its spans — and not "1 default".
import FaultlineProtocol

public struct Loss: Hashable, Sendable {
    /// Sentry's discard reason (`queue_overflow`, `send_error`, …).
    public var reason: String
    /// Sentry's data category (`error`, `log_item`, …).
    public var category: String

    public init(reason: String, category: String) {
        self.reason = reason
        self.category = category
    }

    /// Each category an envelope's items fall in, with its quantity.
    static func quantities(of envelope: Envelope) -> [(category: String, quantity: Int)] {
        envelope.items.flatMap(quantities(of:))
    }

    static func quantities(of item: Envelope.Item) -> [(category: String, quantity: Int)] {
        let category = DataCategory.of(itemType: item.type)
        switch item.type {
        case "transaction":
            let spans = (try? JSONValue.parse(item.payload))?["spans"]?.arrayValue?.count ?? 0
            return [(category, 1), ("span", spans + 1)]  // the transaction is its root span
        case "log":
            let stated = item.header["item_count"]?.int64Value.map { Int(clamping: $0) }
            let lines = stated ?? (try? JSONValue.parse(item.payload))?["items"]?.arrayValue?.count ?? 1
            return [(category, max(lines, 1)), ("log_byte", item.payload.count)]
        case "attachment": return [(category, max(item.payload.count, 1))]
        case "client_report": return []  // a report of losses is not itself reported
        default: return [(category, 1)]
        }
    }
}

extension DropReason {
    /// The reason Sentry's client reports name for this loss.
    public var sentryReason: String {
        switch self {
        case .queueOverflow: return "queue_overflow"
        case .diskWriteFailed, .corrupt: return "internal_sdk_error"
        case .rejectedByServer: return "send_error"
        case .logArchiveEvicted: return "cache_overflow"
        }
    }
}
