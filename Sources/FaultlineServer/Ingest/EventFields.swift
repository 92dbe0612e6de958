// Fields ingest reads from an event: timestamps, release, install and app ids.
import Foundation
import FaultlineProtocol

enum EventFields {
    /// Sentry timestamps are seconds since the epoch (number) or RFC 3339 strings.
    static func timestamp(_ v: JSONValue?) -> Double? {
        guard let v else { return nil }
        if let d = v.doubleValue { return d }
        guard let s = v.stringValue else { return nil }
        return rfc3339(s)
    }

    /// `YYYY-MM-DDTHH:MM:SS[.frac][Z|±hh:mm]`; nil when it does not match.
    static func rfc3339(_ s: String) -> Double? {
        let u = Array(s.utf8)
        func num(_ a: Int, _ n: Int) -> Int? {
            guard a + n <= u.count else { return nil }
            var v = 0
            for i in a..<(a + n) { guard u[i] >= 48 && u[i] <= 57 else { return nil }; v = v * 10 + Int(u[i] - 48) }
            return v
        }
        guard u.count >= 19, let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
              let h = num(11, 2), let mi = num(14, 2), let se = num(17, 2) else { return nil }
        var t = tm()
        t.tm_year = Int32(y - 1900); t.tm_mon = Int32(mo - 1); t.tm_mday = Int32(d)
        t.tm_hour = Int32(h); t.tm_min = Int32(mi); t.tm_sec = Int32(se)
        var value = Double(timegm(&t))
        var i = 19
        if i < u.count && u[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            while i < u.count, u[i] >= 48, u[i] <= 57 { value += Double(u[i] - 48) * scale; scale /= 10; i += 1 }
        }
        if i < u.count && (u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-")), let oh = num(i + 1, 2), let om = num(i + 4, 2) {
            let off = Double(oh * 3600 + om * 60)
            value += u[i] == UInt8(ascii: "+") ? -off : off
        }
        return value
    }

    static func installID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let h = request.header("x-faultline-install-id"), !h.isEmpty { return h }
        if let t = event?["tags"]?["install_id"]?.stringValue { return t }
        if let u = event?["user"]?["id"]?.stringValue { return u }
        if let d = event?["contexts"]?["device"]?["device_unique_identifier"]?.stringValue { return d }
        return nil
    }

    /// Without an event: the `did` (distinct id) of a `session` item, which SDKs set to the install.
    static func installID(items: [Envelope.Item]) -> String? {
        for item in items where item.type == "session" {
            if let v = try? FastJSON.parse(item.payload), let d = v["did"]?.stringValue, !d.isEmpty { return d }
        }
        return nil
    }

    static func appID(event: JSONValue?, request: HTTPRequest) -> String? {
        if let a = event?["contexts"]?["app"]?["app_identifier"]?.stringValue { return a }
        if let h = request.header("x-faultline-app-id"), !h.isEmpty { return h }
        return nil
    }
}
