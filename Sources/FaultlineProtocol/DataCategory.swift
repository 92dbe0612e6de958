// Sentry's data category of an envelope item type: what `X-Sentry-Rate-Limits` and client reports
// name. The one mapping the SDK's rate limits, its loss reports and the server's caps share.
public enum DataCategory {
    public static func of(itemType: String) -> String {
        switch itemType {
        case "event": return "error"
        case "transaction": return "transaction"
        case "log": return "log_item"
        case "session", "sessions": return "session"
        case "attachment": return "attachment"
        case "user_report", "feedback": return "user_report_v2"
        case "client_report": return "internal"
        default: return "default"
        }
    }
}
