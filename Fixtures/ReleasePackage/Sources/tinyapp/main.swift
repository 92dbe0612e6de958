// `tinyapp N` prints element N of [1, 2, 3]; N ≥ 3 traps (index out of range → SIGILL), which is
// the crash ReleaseRecipeTests symbolicate from a split debug file.
@inline(never) func tinyLookup(_ values: [Int], _ index: Int) -> Int { values[index] }

let arguments = CommandLine.arguments
print(tinyLookup([1, 2, 3], arguments.count > 1 ? Int(arguments[1]) ?? 0 : 0))
