// Where CFI ends: one caller from the frame-pointer chain, or from a stack word that is a return
// address. Both read only captured stack memory and move strictly up the stack.

enum FallbackUnwind {
    /// What the walker knows of the code at an address, for telling a return address from any
    /// other word: the executable ranges and code bytes (`ModuleCode`), and whether a module file's
    /// CFI describes the address as inside a function.
    struct Evidence {
        var code: ModuleCode
        var memory: MinidumpMemory
        var insideFunction: (UInt64) -> Bool
    }

    /// How much a candidate must prove to be taken as a return address.
    enum Proof {
        /// A stack word found by scanning: it follows a call instruction, or — where the code
        /// bytes are in neither the dump nor a file the server holds (a debug file has none) — a
        /// module's CFI places it inside a function.
        case scanned
        /// A word the frame-pointer chain points at: the chain is the evidence, so code whose
        /// bytes are unknown is taken, code whose bytes end otherwise than with a call is not.
        case chained
    }

    /// The one rule every recovered frame passes. The call's last byte (`word - 1`) must lie in
    /// an executable range of the same module, so a module's base (the auxiliary vector on every
    /// stack holds the program's, the loader's and the vdso's) or an address of its headers never
    /// qualifies.
    static func isReturnAddress(_ word: UInt64, _ proof: Proof, _ evidence: Evidence) -> Bool {
        guard word >= 2, evidence.code.isCode(word - 1) else { return false }
        switch evidence.code.followsCall(word, memory: evidence.memory) {
        case true?: return true
        case false?: return false
        case nil: return proof == .chained || evidence.insideFunction(word - 1)
        }
    }

    /// A frame pointer further than this above the stack pointer is not this frame's.
    static let maxFrameSize: UInt64 = 1 << 20

    /// `[rbp]` is the caller's rbp, `[rbp + 8]` the return address, the caller's rsp is rbp + 16.
    static func framePointer(from r: UnwindRegisters, evidence: Evidence) -> UnwindRegisters? {
        let memory = evidence.memory
        guard let fp = r.fp, fp != 0, fp % 8 == 0, fp <= UInt64.max - 16 else { return nil }
        if let sp = r.sp, fp < sp || fp - sp > maxFrameSize { return nil }
        guard let returnAddress = memory.readWord(fp + 8), let callerFP = memory.readWord(fp) else { return nil }
        guard isReturnAddress(returnAddress, .chained, evidence) else { return nil }
        // A caller's frame lies above this one; anything else is not a saved rbp (the caller may
        // not keep a frame pointer), so the next step scans instead of following it.
        return UnwindRegisters(returnAddress: returnAddress, sp: fp + 16, fp: callerFP > fp ? callerFP : nil)
    }

    /// The interrupted function's caller when it keeps no frame at the fault (a leaf, or a
    /// shrink-wrapped prologue not yet run): the word at rsp, if it is a return address. Tried
    /// for the context frame only, before the frame pointer, which would otherwise skip this caller.
    static func leafReturn(from r: UnwindRegisters, evidence: Evidence) -> UnwindRegisters? {
        guard let sp = r.sp, sp <= UInt64.max - 8, let word = evidence.memory.readWord(sp) else { return nil }
        guard isReturnAddress(word, .scanned, evidence) else { return nil }
        return UnwindRegisters(returnAddress: word, sp: sp + 8, fp: r.fp)
    }

    /// The first of `words` stack words from rsp that is a return address.
    static func scan(from r: UnwindRegisters, evidence: Evidence, words: Int) -> UnwindRegisters? {
        guard let sp = r.sp else { return nil }
        var address = sp
        for _ in 0..<words {
            // A captured range may end at the top of the address space: nothing lies above it.
            guard address <= UInt64.max - 16, let word = evidence.memory.readWord(address) else { return nil }
            if isReturnAddress(word, .scanned, evidence) {
                return UnwindRegisters(returnAddress: word, sp: address + 8, fp: r.fp.flatMap { $0 > address ? $0 : nil })
            }
            address += 8
        }
        return nil
    }
}
