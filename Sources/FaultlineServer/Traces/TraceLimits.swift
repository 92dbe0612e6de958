// What one trace may hold and what one read of it returns. A trace id is the client's choice, so
// any number of transactions can name the same one: without a cap, one trace grows without end
// and every read of it holds all of it.
enum TraceLimits {
    /// Spans stored per trace; a transaction arriving at a full trace is kept, its spans beyond
    /// the cap are not.
    static let maxSpansPerTrace = 10_000
    /// Occurrences listed with one trace.
    static let maxOccurrencesPerTrace = 1_000
}
