// A browser script's file as grouping rules 3 read it. Browser SDKs send a frame's `filename` as
// the URL the script was loaded from (`https://cdn.example/assets/app.3f9a1c.js?v=12`), and every
// deploy changes it: a content hash in the name, a cache-busting query, another CDN host. Grouped
// by that URL, each deploy restarted every browser issue and no issue could regress. Sentry leaves
// a URL out of grouping altogether; Faultline keeps the part that names the code: the file's name
// without host, path, query, fragment and content-hash parts (`app.js`).
import FaultlineProtocol

enum ScriptURLName {
    /// The stable name of a script at `file` when `file` is a URL (`scheme://…`); nil otherwise
    /// (a path or a module name is grouped as it is).
    static func of(_ file: String) -> String? {
        guard let schemeEnd = file.range(of: "://"), schemeEnd.lowerBound > file.startIndex,
            file[..<schemeEnd.lowerBound].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        else { return nil }
        var path = file[schemeEnd.upperBound...]
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        // The host (empty in `app:///…`) is not part of the file's name.
        guard let pathStart = path.firstIndex(of: "/") else { return nil }
        path = path[pathStart...]
        guard let base = path.split(separator: "/").last, !base.isEmpty else { return nil }
        // "main.3f9a1c.js" → "main.js", "chunk-vendors-4b2e9d11.min.js" → "chunk-vendors.min.js":
        // the first part and the extension stay, hash-like parts between go.
        var dotted = base.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if dotted.count > 2 { dotted = [dotted[0]] + dotted[1..<(dotted.count - 1)].filter { !isHashLike($0) } + [dotted[dotted.count - 1]] }
        var dashed = dotted[0].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        if dashed.count > 1 { dashed = [dashed[0]] + dashed.dropFirst().filter { !isHashLike($0) } }
        dotted[0] = dashed.joined(separator: "-")
        return dotted.joined(separator: ".").lowercased()
    }

    /// A bundler's content hash or a build number: six or more hex digits, at least one a digit.
    static func isHashLike(_ part: String) -> Bool {
        part.utf8.count >= 6 && part.utf8.allSatisfy { HexBytes.nibble($0) != nil } && part.utf8.contains { $0 >= 48 && $0 <= 57 }
    }
}
