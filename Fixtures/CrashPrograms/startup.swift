// Traps at once (or after 100 ms with a trailing "late"), always from the same call site.
import Glibc

@inline(never) func readConfiguration(_ arguments: [String]) -> Int {
    let slots = [1, 2]
    return slots[arguments.count + 5]
}

if CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "late" { usleep(100_000) }
print(readConfiguration(CommandLine.arguments))
