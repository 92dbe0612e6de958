// An array index out of range on a secondary thread while the main thread waits. Built with -Onone -g.
import Foundation

func swiftLogFixtureWorker() {
    let empty: [Int] = []
    print(empty[3])
}

let worker = Thread { swiftLogFixtureWorker() }
worker.name = "fixture-worker"
worker.start()
sleep(30)
