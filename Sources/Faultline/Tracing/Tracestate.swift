// The W3C tracestate header: Sentry's entry kept, others passed on.
import Foundation

/// `tracestate`, kept only as far as the spec requires of a vendor that adds no entry: passed on
/// unchanged when it is a valid list of at most 32 members, dropped otherwise.
enum Tracestate {
    static func validated(_ raw: String?) -> String? {
        guard let raw else { return nil }
        let members = raw.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: [" ", "\t"]) }.filter { !$0.isEmpty }
        guard !members.isEmpty, members.count <= 32 else { return nil }
        for m in members {
            guard let eq = m.firstIndex(of: "="), eq != m.startIndex else { return nil }
            let key = m[..<eq], value = m[m.index(after: eq)...]
            guard key.utf8.count <= 256, key.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || "_-*/@".utf8.contains($0) }),
                let first = key.utf8.first, (0x61...0x7A).contains(first) || (0x30...0x39).contains(first),
                !value.isEmpty, value.utf8.count <= 256, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x2C && $0 != 0x3D }),
                value.utf8.last != 0x20
            else { return nil }
        }
        return members.joined(separator: ",")
    }
}
