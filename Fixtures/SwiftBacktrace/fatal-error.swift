// fatalError three calls deep, while a second thread sleeps. Built with -Onone -g.
import Foundation

func swiftLogFixtureCheck(_ depth: Int) -> Int {
    if depth > 2 { fatalError("fixture depth \(depth)") }
    return swiftLogFixtureCheck(depth + 1)
}

let sleeper = Thread { while true { sleep(100) } }
sleeper.name = "fixture-sleeper"
sleeper.start()
usleep(100_000)
print(swiftLogFixtureCheck(0))
