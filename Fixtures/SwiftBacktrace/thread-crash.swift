// An array index out of range on a secondary thread while the main thread waits. Built with -Onone -g.
import Foundation

func swiftLogFixtureWorker() {
    let empty: [Int] = []
    print(empty[3])
}

let worker = Thread { swiftLogFixtureWorker() }
worker.name = "fixture-worker"
worker.start()
// A loop, not one sleep(30): the backtracer's signals to the other threads interrupt a sleep,
// and a main thread that then returned would end the process with status 0 mid-report.
while true { sleep(1) }
