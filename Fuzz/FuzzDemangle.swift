// libFuzzer target: the demangling the symbolicator does itself, on names from uploaded debug
// files and events — Rust v0 names (`RustDemangler`) and the rewrite of a C++ name's text into
// llvm-symbolizer's spelling (`ItaniumLLVMDialect`, over any text: what libstdc++ prints is not
// driven here). Checks the output bound holds and that a rewrite never grows the text beyond a
// few bytes per byte.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDemangle(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for name in [text, "_R" + text] {
        if let demangled = RustDemangler.demangle(name) {
            // The text, then at most a vendor suffix the name itself carries, in parentheses.
            precondition(demangled.utf8.count <= RustDemangler.maxOutputBytes + name.utf8.count + 3, "output bound")
        }
    }
    let rewritten = ItaniumLLVMDialect.rewrite(text)
    precondition(rewritten.utf8.count <= 2 * text.utf8.count + 64, "a rewrite grew the text")
    _ = ItaniumLLVMDialect.inheritingConstructor(text)
    return 0
}
