// The few string operations Foundation's NSString gave us, written on the standard library so
// that `faultline` links FoundationEssentials only (full Foundation's start-up, CoreFoundation and
// ICU, is a large share of a one-address run's memory: docs/SYMBOLICATION.md). Same results as NSString for the
// inputs we pass (paths, log levels, command names, numbers); ProtocolTests' TextTests check them.

extension StringProtocol {
    /// Without leading and trailing white space and line breaks, as CoreFoundation's
    /// `CharacterSet.whitespacesAndNewlines`: the blanks below and U+000A–U+000D, U+0085, U+2028, U+2029.
    package func trimmingWhitespaceAndNewlines() -> String {
        trimmingScalars { isBlank($0) || (0x0A...0x0D).contains($0.value) || [0x85, 0x2028, 0x2029].contains($0.value) }
    }

    /// Without leading and trailing blanks, as CoreFoundation's `CharacterSet.whitespaces`: tab,
    /// Unicode Zs and U+200B (zero width space).
    package func trimmingBlanks() -> String {
        trimmingScalars(isBlank)
    }

    private func isBlank(_ u: Unicode.Scalar) -> Bool {
        u == "\t" || u.value == 0x200B || u.properties.generalCategory == .spaceSeparator
    }

    private func trimmingScalars(_ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !drop($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// Cut or padded with spaces to `length` characters, as NSString's `padding(toLength:withPad:" ",startingAt:0)`.
    package func paddedOrCut(toLength length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }

    /// Padded on the left with zeros to at least `length` characters (`%0Nllu`, `%0Nllx`).
    package func zeroPadded(toLength length: Int) -> String {
        count >= length ? String(self) : String(repeating: "0", count: length - count) + self
    }
}

/// Path names as NSString's path methods treat them: `/` separates, trailing slashes are ignored.
package enum PathName {
    /// The last component: `/a/b/` → `b`, `/` → `/`, `b` → `b`, `` → ``.
    package static func last(_ path: String) -> String {
        if let ascii = lastOfASCII(path) { return ascii }
        let p = withoutTrailingSlashes(Substring(path))
        if p == "/" { return "/" }
        guard let slash = p.lastIndex(of: "/") else { return String(p) }
        return String(p[p.index(after: slash)...])
    }

    /// Everything before the last component: `/a/b` → `/a`, `/a` → `/`, `b` → ``, `/` → `/`.
    package static func directory(_ path: String) -> String {
        let p = withoutTrailingSlashes(Substring(path))
        if p == "/" { return "/" }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        let dir = withoutTrailingSlashes(p[..<slash])
        return dir.isEmpty ? "/" : String(dir)
    }

    /// `last` over the bytes of an ASCII path (every module path grouping reads, once per frame:
    /// walking Characters backwards was a twentieth of an ingest's CPU); nil for any other path.
    /// In ASCII a Character is one byte (CR LF aside, which holds no slash), so the answer is the same.
    private static func lastOfASCII(_ path: String) -> String? {
        withLastOfASCII(path) { String(decoding: $0, as: UTF8.self) }
    }

    /// `body` over the bytes of an ASCII path's last component (as `last` names it); nil for any
    /// other path, whose Characters `last` reads instead.
    package static func withLastOfASCII<T>(_ path: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T? {
        var path = path
        return path.withUTF8 { b -> T? in
            for c in b where c >= 0x80 { return nil }
            let slash = UInt8(ascii: "/")
            var end = b.count
            while end > 1 && b[end - 1] == slash { end -= 1 }
            var start = end
            while start > 0 && b[start - 1] != slash { start -= 1 }
            if start == end && end == 1 { start = 0 }  // the root alone is its own last component
            return body(UnsafeBufferPointer(rebasing: b[start..<end]))
        }
    }

    private static func withoutTrailingSlashes(_ p: Substring) -> Substring {
        var p = p
        // `!dropLast().isEmpty` is `count > 1` without counting every Character of the path.
        while p.hasSuffix("/"), !p.dropLast().isEmpty { p = p.dropLast() }
        return p
    }
}

extension String {
    /// Whether the text holds `part` (lowercase ASCII) in any ASCII case, read as UTF-8 bytes.
    /// Foundation's `contains` and `range(of:options: .caseInsensitive)` go through NSString and
    /// CFStringFind, which ingest's hot path (a secret-naming tag key on every tag) cannot afford
    /// (docs/SERVER.md, "Measured"). Text that is not ASCII is lowered by Unicode's rules first, as
    /// `lowercased()` would (the Kelvin sign lowers to `k`).
    package func containsASCIICaseInsensitive(_ part: String) -> Bool {
        if utf8.contains(where: { $0 >= 0x80 }) { return lowercased().utf8.containsLowercaseASCII(part.utf8) }
        return utf8.containsLowercaseASCII(part.utf8)
    }
}

extension String.UTF8View {
    /// Whether these bytes, with ASCII capitals lowered, hold `part` (given in lowercase ASCII).
    /// Searched in the strings' contiguous bytes (a native string's always are; anything else is
    /// copied first), not by stepping String indices, which ingest's hot path notices
    /// (docs/SERVER.md, "Measured").
    fileprivate func containsLowercaseASCII(_ part: String.UTF8View) -> Bool {
        assert(part.allSatisfy { $0 < 0x80 && !(0x41...0x5A).contains($0) }, "the part is lowercase ASCII")
        func inText(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
            part.withContiguousStorageIfAvailable { Self.search(text, for: $0) }
                ?? Array(part).withUnsafeBufferPointer { Self.search(text, for: $0) }
        }
        return withContiguousStorageIfAvailable(inText) ?? Array(self).withUnsafeBufferPointer(inText)
    }

    private static func search(_ text: UnsafeBufferPointer<UInt8>, for part: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = part.count
        guard n > 0 else { return true }
        guard n <= text.count else { return false }
        let first = part[0]
        for start in 0...(text.count - n) where lowered(text[start]) == first {
            var i = 1
            while i < n, lowered(text[start + i]) == part[i] { i += 1 }
            if i == n { return true }
        }
        return false
    }

    private static func lowered(_ b: UInt8) -> UInt8 { b &- 0x41 < 26 ? b | 0x20 : b }
}
