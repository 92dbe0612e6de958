// Force-unwrapping nil. Built with -O -g: the trap carries the compiler's
// "Swift runtime failure: Unexpectedly found nil…" frame, which the log's description repeats.
@inline(never)
func swiftLogFixtureUnwrap(_ text: String) -> Int {
    let value: Int? = Int(text)
    return value!
}
print(swiftLogFixtureUnwrap(CommandLine.arguments.count > 5 ? "1" : "not a number"))
