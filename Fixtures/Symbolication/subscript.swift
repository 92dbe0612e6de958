// Fixture: a Swift function whose array subscript is inlined at -O (its bounds check traps in
// an inlined `Swift runtime failure: Index out of range` frame).
@inline(never)
func element(_ values: [Int], at index: Int) -> Int { // LINE:swift_decl
    return values[index] // LINE:swift_subscript
}

@inline(never)
func total(_ values: [Int]) -> Int {
    var sum = 0
    for v in values { sum &+= v }
    return sum
}

let values = Array(0..<Int(CommandLine.arguments.count + 3))
print(element(values, at: CommandLine.arguments.count), total(values))
