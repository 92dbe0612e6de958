// A value each thread keeps for itself: state that hot paths on many threads read and change
// without a lock, so they never contend (a lock shared by every HTTP connection thread sleeps in
// the kernel whenever two of them meet).
import Foundation

/// One instance of `Value` per thread, made by `make` on the thread's first `value` and released
/// when the thread ends (a pthread key's destructor).
///
/// Contract: each thread sees only its own instance, so `Value` needs no lock of its own. `make`
/// must not read this `PerThread`'s `value` (it has none yet: it would make another). The key is
/// never deleted: a `PerThread` is meant to live as long as the process (a `static let`); one that
/// is released leaks its key, not the threads' values.
public final class PerThread<Value: AnyObject>: @unchecked Sendable {
    private var key = pthread_key_t()
    private let make: @Sendable () -> Value

    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        let created = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        // Only the process's key limit (1,024) can refuse: a program that reaches it is broken.
        precondition(created == 0, "pthread_key_create failed (\(created))")
    }

    /// This thread's instance.
    public var value: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let fresh = make()
        // A class instance's pointer is the same as `Value` and as `AnyObject`: the destructor,
        // which cannot know `Value`, releases it as the latter.
        let kept = Unmanaged.passRetained(fresh)
        // Refused only without memory for the thread's key table: the instance then serves this
        // call alone.
        if pthread_setspecific(key, kept.toOpaque()) != 0 { kept.release() }
        return fresh
    }
}
