// Small inline SVG charts (no script, no external files): the issues list's per-day sparkline
// and release health's crash-free bars. Inputs are numbers only, so nothing here needs escaping.
import Foundation

enum SVGChart {
    /// Bars for per-day counts, oldest first.
    static func sparkline(_ counts: [Int64], width: Int = 112, height: Int = 24) -> String {
        guard !counts.isEmpty else { return "" }
        let maxV = max(counts.max() ?? 1, 1)
        let bw = Double(width) / Double(counts.count)
        var s =
            "<svg class=\"spark\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"occurrences per day\">"
        for (i, c) in counts.enumerated() {
            let h = c == 0 ? 1.0 : max(2.0, Double(height) * Double(c) / Double(maxV))
            s += String(format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", Double(i) * bw + 0.5, Double(height) - h, max(1, bw - 1), h)
            s += (c == 0 ? " class=\"zero\"" : "") + "><title>\(c)</title></rect>"
        }
        return s + "</svg>"
    }

    /// Horizontal bars for rates in 0…1 (crash-free sessions), one per row label index.
    static func rateBars(_ rates: [Double], width: Int = 240, barHeight: Int = 14) -> String {
        let height = max(1, rates.count) * (barHeight + 4)
        var s = "<svg class=\"rates\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"crash-free rate\">"
        for (i, r) in rates.enumerated() {
            let w = max(1, Double(width) * min(max(r, 0), 1))
            let cls = r >= 0.99 ? "good" : (r >= 0.95 ? "warn" : "bad")
            s += "<rect class=\"\(cls)\" x=\"0\" y=\"\(i * (barHeight + 4))\" " + String(format: "width=\"%.1f\"", w)
            s += " height=\"\(barHeight)\"><title>" + String(format: "%.2f", r * 100) + " %</title></rect>"
        }
        return s + "</svg>"
    }

    /// One horizontal bar for a share (0…1) of an issue's occurrences (the tag breakdown).
    static func shareBar(_ share: Double, width: Int = 160, height: Int = 10) -> String {
        let w = max(1, Double(width) * min(max(share, 0), 1))
        return "<svg class=\"share\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"share\">"
            + String(format: "<rect x=\"0\" y=\"0\" width=\"%.1f\" height=\"\(height)\"></rect>", w) + "</svg>"
    }
}
