// The user's address, filled in as Sentry's Relay fills it. Browser and mobile SDKs cannot know
// the address they are seen from, so they send `user.ip_address: "{{auto}}"` (and server SDKs
// `request.env.REMOTE_ADDR: "{{auto}}"`), asking the server to put the address the event came
// from there; stored as sent, the issue page showed the placeholder. Relay's rules, in its order:
// a `{{auto}}` becomes the client's address; a user without an address takes the request's
// `REMOTE_ADDR` when that is an address; else, for the platforms whose SDKs never set it
// (`javascript`, `cocoa`, `objc`) or when the SDK asks (`sdk.settings.infer_ip: "auto"`), the
// client's address. An SDK that says `infer_ip: "never"` (or anything Relay does not know) gets
// no address and its `{{auto}}` removed. The client's address is the one the
// per-address limits use (`HTTPRequest.clientAddress`: a trusted proxy's `X-Forwarded-For`); an
// IPv6 client behind a proxy is known only by its /64 there, and is not written into an event.
// The event is stored as sent (rewriting it would mean compressing it again on ingest's hot path,
// and browser SDKs ask on every event; docs/SERVER.md has the measurement): the address is kept
// with the occurrence, only when the event's rules use it, and filled in wherever the event is
// read (StoredEvent.decodeForReading).
import FaultlineProtocol
import Glibc

enum InferredIPAddress {
    static let placeholder = "{{auto}}"
    /// Platforms whose SDKs leave the address to the server (Relay's list).
    static let inferringPlatforms: Set<String> = ["javascript", "cocoa", "objc"]

    /// The client's address when the event's rules use it (`parsed`: ingest's partial parse, which
    /// keeps `user`, `platform`, `request.env.REMOTE_ADDR` and `sdk.settings.infer_ip`), else nil:
    /// an address the event did not ask for is not stored.
    static func addressToKeep(for parsed: JSONValue, clientAddress: String) -> String? {
        usesClientAddress(parsed) && isIPAddress(clientAddress) ? clientAddress : nil
    }

    /// Whether `filled` would write the client's address anywhere into `event`: the same rules,
    /// read without building the filled event (ingest would otherwise copy the event's top level
    /// twice and compare two whole events per event; docs/SERVER.md, "Measured").
    static func usesClientAddress(_ event: JSONValue) -> Bool {
        guard case .object(let top) = event, inference(top) != .never else { return false }
        let remote = top["request"]?["env"]?["REMOTE_ADDR"]
        let user = top["user"]
        if remote?.stringValue == placeholder || user?["ip_address"]?.stringValue == placeholder { return true }
        if let current = user?["ip_address"], current != .null { return false }
        // A user without an address takes an address-valued REMOTE_ADDR before the client's.
        if let http = remote?.stringValue, isIPAddress(http) { return false }
        guard inference(top) == .auto || (top["platform"]?.stringValue.map(inferringPlatforms.contains) ?? false) else { return false }
        switch user {
        case nil, .null?, .object?: return true
        default: return false  // a user that is not an object is left as sent
        }
    }

    /// What the SDK said of inferring the address (`sdk.settings.infer_ip`): none or `legacy`,
    /// Relay's older rules (by platform); `auto`; `never`. Anything else is taken as `never`.
    enum Inference { case legacy, auto, never }

    static func inference(_ top: JSONObject) -> Inference {
        switch top["sdk"]?["settings"]?["infer_ip"] {
        case nil, .null?, .string("legacy")?: .legacy
        case .string("auto")?: .auto
        default: .never
        }
    }

    /// The event with its addresses filled in, or nil when nothing changes.
    static func filled(_ event: JSONValue, client: String?) -> JSONValue? {
        guard case .object(var top) = event else { return nil }
        let inference = inference(top)
        var changed = false
        // `{{auto}}` becomes the client's address; without one (the SDK said never, the project
        // keeps no addresses, an IPv6 client behind a proxy, a row stored before addresses were
        // kept) the placeholder goes: it says nothing to whoever reads the event.
        let replacement: JSONValue? = inference == .never ? nil : client.map(JSONValue.string)
        if case .object(var request)? = top["request"], case .object(var env)? = request["env"],
            env["REMOTE_ADDR"]?.stringValue == placeholder
        {
            env["REMOTE_ADDR"] = replacement
            request["env"] = .object(env)
            top["request"] = .object(request)
            changed = true
        }
        if case .object(var user)? = top["user"], user["ip_address"]?.stringValue == placeholder {
            user["ip_address"] = replacement
            top["user"] = .object(user)
            changed = true
        }
        guard inference != .never else { return changed ? .object(top) : nil }
        let current = top["user"]?["ip_address"]
        if current == nil || current == .null {
            var address: String?
            if let http = top["request"]?["env"]?["REMOTE_ADDR"]?.stringValue, isIPAddress(http) {
                address = http
            } else if let client, inference == .auto || (top["platform"]?.stringValue.map(inferringPlatforms.contains) ?? false) {
                address = client
            }
            if let address {
                switch top["user"] {
                case nil, .null?:
                    top["user"] = ["ip_address": .string(address)]
                    changed = true
                case .object(var user)?:
                    user["ip_address"] = .string(address)
                    top["user"] = .object(user)
                    changed = true
                default: break  // a user that is not an object is left as sent
                }
            }
        }
        return changed ? .object(top) : nil
    }

    /// An IPv4 or IPv6 address as text (not a network, not a host name).
    static func isIPAddress(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 45 else { return false }
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
