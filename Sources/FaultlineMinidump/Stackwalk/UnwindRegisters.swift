// The registers a walk step starts from: always a pc, a stack and frame pointer when known.

/// What the walker knows of one frame's registers (x86_64).
struct UnwindRegisters {
    var pc: UInt64
    var sp: UInt64?
    var fp: UInt64?
    /// The full saved context, for a thread's first frame only.
    var all: [UInt64]?
    /// The pc is a return address: CFI must be looked up in the call instruction before it.
    var pcIsReturnAddress: Bool

    init(context c: AMD64Context) {
        pc = c.rip
        sp = c.hasControl ? c.rsp : nil
        fp = c.hasInteger ? c.rbp : nil
        all = c.hasControl && c.hasInteger ? c.dwarfRegisters : nil
        pcIsReturnAddress = false
    }

    init(returnAddress: UInt64, sp: UInt64, fp: UInt64?) {
        pc = returnAddress; self.sp = sp; self.fp = fp; all = nil; pcIsReturnAddress = true
    }
}
