// Whether the bytes before an address end with an x86_64 call: the stack scan's test that a
// stack word is a return address and not a pointer that merely lands in code.

enum CallInstruction {
    /// True when `code` (the bytes just before the candidate return address, at most 7) ends with
    /// `call rel32` (E8) or `call r/m64` (FF /2 in any addressing form, with or without REX).
    static func endsWithCall(_ code: ArraySlice<UInt8>) -> Bool {
        let b = Array(code)
        if b.count >= 5, b[b.count - 5] == 0xE8 { return true }
        for length in 2...7 where length <= b.count {
            let start = b.count - length
            guard b[start] == 0xFF else { continue }
            let modrm = b[start + 1]
            guard (modrm >> 3) & 7 == 2 else { continue }
            if length == encodedLength(modrm: modrm, sib: start + 2 < b.count ? b[start + 2] : nil) { return true }
        }
        return false
    }

    /// Length of FF /2 with this ModRM (opcode, ModRM, SIB, displacement).
    private static func encodedLength(modrm: UInt8, sib: UInt8?) -> Int {
        let mod = modrm >> 6, rm = modrm & 7
        var n = 2
        if mod == 3 { return n }
        if rm == 4 {
            n += 1
            if mod == 0, let sib, sib & 7 == 5 { n += 4 }
        }
        switch mod {
        case 0: if rm == 5 { n += 4 }
        case 1: n += 1
        default: n += 4
        }
        return n
    }
}
