// A release named by a semantic version (`app@1.10.2`, `2.0.0-rc.1+build.7`), compared as Sentry
// compares releases that follow semver: by numbers, a pre-release before its release, build
// metadata ignored. Releases that are not semver (dates, commit hashes) are ordered by when the
// server first heard of them (ReleaseOrder).
struct SemanticVersion: Comparable {
    /// What comes before `@` (`app` in `app@1.2.3`); both sides of a comparison must share it.
    let package: String
    /// MAJOR.MINOR.PATCH and any further numbers (`1.2.3.4`), at least two.
    let numbers: [UInt64]
    /// The pre-release identifiers (`rc`, `1` for `-rc.1`); empty for a release.
    let preRelease: [Substring]

    init?(_ release: String) {
        let at = release.lastIndex(of: "@")
        package = at.map { String(release[..<$0]) } ?? ""
        var version = at.map { release[release.index(after: $0)...] } ?? Substring(release)
        if let plus = version.firstIndex(of: "+") { version = version[..<plus] }
        var pre: Substring = ""
        if let dash = version.firstIndex(of: "-") {
            pre = version[version.index(after: dash)...]
            version = version[..<dash]
            guard !pre.isEmpty else { return nil }
        }
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        guard (2...4).contains(parts.count) else { return nil }
        var numbers: [UInt64] = []
        for p in parts {
            guard !p.isEmpty, p.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = UInt64(p) else { return nil }
            numbers.append(n)
        }
        self.numbers = numbers
        preRelease = pre.isEmpty ? [] : pre.split(separator: ".", omittingEmptySubsequences: false)
    }

    /// Whether the two can be compared at all: the same package.
    func isComparable(with other: SemanticVersion) -> Bool { package == other.package }

    static func < (a: SemanticVersion, b: SemanticVersion) -> Bool {
        let width = max(a.numbers.count, b.numbers.count)
        for i in 0..<width {
            let (x, y) = (i < a.numbers.count ? a.numbers[i] : 0, i < b.numbers.count ? b.numbers[i] : 0)
            if x != y { return x < y }
        }
        // 1.0.0-rc.1 < 1.0.0; then identifiers in turn, numbers below words, fewer below more.
        if a.preRelease.isEmpty || b.preRelease.isEmpty { return !a.preRelease.isEmpty && b.preRelease.isEmpty }
        for (x, y) in zip(a.preRelease, b.preRelease) where x != y {
            switch (UInt64(x), UInt64(y)) {
            case let (m?, n?): return m < n
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return x < y
            }
        }
        return a.preRelease.count < b.preRelease.count
    }

    static func == (a: SemanticVersion, b: SemanticVersion) -> Bool { !(a < b) && !(b < a) }
}
