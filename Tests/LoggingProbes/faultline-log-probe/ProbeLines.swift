// The lines the probe writes: sizes from 1 to ~3000 bytes so trims cut lines of every length.
enum ProbeLines {
    static func body(_ tag: String, _ t: Int, _ i: Int) -> String {
        let pad = String(repeating: "x", count: (i * 7919) % 3000)
        return "\(tag) t\(t) #\(i) \(pad)"
    }
}
