import Foundation
print("crasher")
