// A `logentry` sent with its template and `params` but no `formatted` text (SDKs that leave the
// formatting to the server): the text the template makes with its params, for the title and the
// message shown. Placeholders as the SDKs' languages write them: printf/Python (`%s`, `%d`, `%r`,
// … in order; `%%` a percent sign) and positional braces (`{}` in order, `{0}` by index, as
// .NET, Java's SLF4J and Python's str.format do). A placeholder without a param stays as written.
import FaultlineProtocol

enum LogEntryText {
    static func formatted(_ template: String, params: [JSONValue]) -> String {
        func text(_ v: JSONValue) -> String { v.stringValue ?? v.jsonString }
        var out = ""
        var next = 0
        var i = template.startIndex
        while i < template.endIndex {
            let c = template[i]
            let after = template.index(after: i)
            if c == "%", after < template.endIndex {
                let spec = template[after]
                if spec == "%" {
                    out.append("%")
                    i = template.index(after: after)
                    continue
                }
                if "sdifrxXeEgGcu".contains(spec), next < params.count {
                    out += text(params[next])
                    next += 1
                    i = template.index(after: after)
                    continue
                }
            }
            if c == "{", let close = template[after...].firstIndex(of: "}") {
                let inside = template[after..<close]
                if inside.isEmpty, next < params.count {
                    out += text(params[next])
                    next += 1
                    i = template.index(after: close)
                    continue
                }
                if let n = Int(inside), n >= 0, n < params.count {
                    out += text(params[n])
                    i = template.index(after: close)
                    continue
                }
            }
            out.append(c)
            i = after
        }
        return out
    }
}
