// libdwfl's thread callbacks (Dwfl_Thread_Callbacks) over what we read ourselves: the threads and
// their registers from the notes, memory from `CoreMemory`. libdwfl does the unwinding (CFI,
// its frame-pointer fallback); only where it reads state from is ours.
import FoundationEssentials
import CDw

final class CoreThreadSource {
    /// One thread's registers in DWARF's x86_64 numbering (0 rax … 16 the return address column).
    final class ThreadState {
        let tid: Int32
        var dwarfRegisters: [Dwarf_Word]
        let programCounter: Dwarf_Word
        init(_ t: CoreNotes.ThreadStatus) {
            tid = Int32(truncatingIfNeeded: t.tid)
            let byName = Dictionary(t.registers.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
            dwarfRegisters = CoreThreadSource.dwarfOrder.map { byName[$0] ?? 0 }
            programCounter = byName["rip"] ?? 0
        }
    }

    static let dwarfOrder = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"]

    let memory: CoreMemory
    let threads: [ThreadState]

    init(notes: CoreNotes, memory: CoreMemory) {
        self.memory = memory
        threads = notes.threads.map(ThreadState.init)
    }

    /// The callbacks; libdwfl keeps the pointer for the Dwfl's life (the caller owns it).
    static func callbacks() -> Dwfl_Thread_Callbacks {
        Dwfl_Thread_Callbacks(
            next_thread: { _, arg, threadArg in
                // *threadArg: the previous thread's state (nil on the first call).
                let source = Unmanaged<CoreThreadSource>.fromOpaque(arg!).takeUnretainedValue()
                let next: Int
                if let previous = threadArg!.pointee {
                    let state = Unmanaged<ThreadState>.fromOpaque(previous).takeUnretainedValue()
                    next = (source.threads.firstIndex { $0 === state } ?? source.threads.count) + 1
                } else {
                    next = 0
                }
                guard next < source.threads.count else { return 0 }
                threadArg!.pointee = Unmanaged.passUnretained(source.threads[next]).toOpaque()
                return source.threads[next].tid
            },
            get_thread: nil,
            memory_read: { _, address, result, arg in
                let source = Unmanaged<CoreThreadSource>.fromOpaque(arg!).takeUnretainedValue()
                guard let word = source.memory.word(at: address) else { return false }
                result!.pointee = word
                return true
            },
            set_initial_registers: { thread, threadArg in
                guard let thread else { return false }
                let state = Unmanaged<ThreadState>.fromOpaque(threadArg!).takeUnretainedValue()
                let count = state.dwarfRegisters.count
                let ok = state.dwarfRegisters.withUnsafeBufferPointer { dwfl_thread_state_registers(thread, 0, UInt32(count), $0.baseAddress!) }
                guard ok else { return false }
                dwfl_thread_state_register_pc(thread, state.programCounter)
                return true
            },
            detach: nil, thread_detach: nil)
    }
}
