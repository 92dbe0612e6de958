// A write through an UnsafeMutablePointer to address 8 (SIGSEGV). Built with -Onone -g.
func swiftLogFixturePoke(_ address: Int) {
    let p = UnsafeMutablePointer<Int>(bitPattern: address)!
    p.pointee = 42
}
swiftLogFixturePoke(8)
