// The calling thread's active span, published to the crash core so a crash report names it.
import CFaultlineCrash
import Foundation
import Synchronization

/// The calling thread's entry in the crash core's per-thread table (trace_slots.c).
enum ThreadSpanSlot {
    static func set(_ c: SpanContext?) {
        if let c { faultline_trace_slot_set(c.traceID.high, c.traceID.low, c.spanID.value) } else { faultline_trace_slot_clear() }
    }
}
