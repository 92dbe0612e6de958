// Where CFI ends: one caller from the frame-pointer chain, or from a stack word that is a return
// address. Both read only captured stack memory and move strictly up the stack.

enum FallbackUnwind {
    /// A frame pointer further than this above the stack pointer is not this frame's.
    static let maxFrameSize: UInt64 = 1 << 20

    /// `[rbp]` is the caller's rbp, `[rbp + 8]` the return address, the caller's rsp is rbp + 16.
    static func framePointer(from r: UnwindRegisters, memory: MinidumpMemory, code: ModuleCode) -> UnwindRegisters? {
        guard let fp = r.fp, fp != 0, fp % 8 == 0, fp <= UInt64.max - 16 else { return nil }
        if let sp = r.sp, fp < sp || fp - sp > maxFrameSize { return nil }
        guard let returnAddress = memory.readWord(fp + 8), let callerFP = memory.readWord(fp) else { return nil }
        guard code.isCode(returnAddress), code.followsCall(returnAddress, memory: memory) != false else { return nil }
        // A caller's frame lies above this one; anything else is not a saved rbp (the caller may
        // not keep a frame pointer), so the next step scans instead of following it.
        return UnwindRegisters(returnAddress: returnAddress, sp: fp + 16, fp: callerFP > fp ? callerFP : nil)
    }

    /// The interrupted function's caller when it keeps no frame at the fault (a leaf, or a
    /// shrink-wrapped prologue not yet run): the word at rsp, only if it follows a call in code
    /// whose bytes are known. Tried for the context frame only, before the frame pointer, which
    /// would otherwise skip this caller.
    static func leafReturn(from r: UnwindRegisters, memory: MinidumpMemory, code: ModuleCode) -> UnwindRegisters? {
        guard let sp = r.sp, sp <= UInt64.max - 8, let word = memory.readWord(sp) else { return nil }
        guard code.isCode(word), code.followsCall(word, memory: memory) == true else { return nil }
        return UnwindRegisters(returnAddress: word, sp: sp + 8, fp: r.fp)
    }

    /// The first of `words` stack words from rsp that points into code just after a call.
    static func scan(from r: UnwindRegisters, memory: MinidumpMemory, code: ModuleCode, words: Int) -> UnwindRegisters? {
        guard let sp = r.sp else { return nil }
        var address = sp
        for _ in 0..<words {
            // A captured range may end at the top of the address space: nothing lies above it.
            guard address <= UInt64.max - 16, let word = memory.readWord(address) else { return nil }
            if code.isCode(word), code.followsCall(word, memory: memory) != false {
                return UnwindRegisters(returnAddress: word, sp: address + 8, fp: r.fp.flatMap { $0 > address ? $0 : nil })
            }
            address += 8
        }
        return nil
    }
}
