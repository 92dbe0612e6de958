// Shared helpers for tests: temporary directories, spawning built executables.
import Foundation
