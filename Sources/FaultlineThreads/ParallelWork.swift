// Work split over a fixed number of threads that the caller waits for (a backfill batch's
// fingerprints, the archives `logs top` reads): the one parallel map, beside the one worker loop.
// On pthreads, joined before returning, so the work may borrow the caller's values; the caller's
// thread is worker 0, so one worker never starts a thread.
import Glibc

public enum ParallelWork {
    /// Runs `body(w)` once for each w in 0..<workers — 0 on the calling thread, the rest on threads
    /// of their own — and returns when every call has. A thread that cannot be made (EAGAIN under
    /// load) is not an error: its share runs on the calling thread after worker 0's.
    public static func onWorkers(_ workers: Int, _ body: (Int) -> Void) {
        let workers = max(1, workers)
        if workers == 1 { return body(0) }
        withoutActuallyEscaping(body) { body in
            final class Share {
                let body: (Int) -> Void
                let worker: Int
                init(_ body: @escaping (Int) -> Void, _ worker: Int) { (self.body, self.worker) = (body, worker) }
            }
            var started: [pthread_t] = []
            var leftOver: [Int] = []
            for w in 1..<workers {
                let share = Unmanaged.passRetained(Share(body, w)).toOpaque()
                var thread = pthread_t()
                let rc = pthread_create(
                    &thread, nil,
                    { arg in
                        let share = Unmanaged<Share>.fromOpaque(arg!).takeRetainedValue()
                        share.body(share.worker)
                        return nil
                    }, share)
                if rc == 0 {
                    started.append(thread)
                } else {
                    Unmanaged<Share>.fromOpaque(share).release()
                    leftOver.append(w)
                }
            }
            body(0)
            for w in leftOver { body(w) }
            for thread in started { pthread_join(thread, nil) }
        }
    }

    /// `transform` of every element, in `items`' order, on up to `workers` threads (each takes one
    /// contiguous share). `transform` must be safe to call from several threads at once.
    public static func map<T, U>(_ items: [T], workers: Int, _ transform: (T) -> U) -> [U] {
        let workers = max(1, min(workers, items.count))
        if workers == 1 { return items.map(transform) }
        let share = (items.count + workers - 1) / workers
        return [U](unsafeUninitializedCapacity: items.count) { buffer, initialized in
            let base = buffer.baseAddress!
            onWorkers(workers) { w in
                for i in min(items.count, w * share)..<min(items.count, (w + 1) * share) {
                    (base + i).initialize(to: transform(items[i]))
                }
            }
            initialized = items.count
        }
    }
}
