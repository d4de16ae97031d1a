import CAllocCounter
import Foundation
import Synchronization
import Testing
import VoiceIO
import VoiceIOSimulation

/// Setting the unit's properties from its own real-time thread (a render callback) takes no lock and allocates
/// nothing, while listeners still hear every property on their own queue.
@Suite("Real-time safe properties")
struct RealTimePropertyTests {
    /// A render callback that changes every property each period; on request it also takes a lock and
    /// allocates (the positive control).
    final class PropertyToggler: @unchecked Sendable {
        unowned let unit: VoiceProcessingIO
        private(set) var periods = 0
        var misbehaves = false
        private let lock = NSLock()
        /// The control's last allocation, kept so that an optimised build cannot drop a malloc freed at once.
        private var controlBlock: UnsafeMutableRawPointer?

        init(unit: VoiceProcessingIO) { self.unit = unit }
        deinit { free(controlBlock) }

        func render(_ frames: VoiceFrames) {
            periods += 1
            let on = periods % 2 == 0
            unit.bypassVoiceProcessing = on
            unit.enableAGC = !on
            unit.duckOthers = on
            unit.duckingLevelDB = on ? -30 : -12
            unit.duckingMode = on ? .voiceActivity : .always
            unit.muteOutput = on
            if misbehaves {
                lock.lock()
                lock.unlock()
                free(controlBlock)
                controlBlock = malloc(64)
            }
        }
    }

    final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var properties: Set<VoiceProcessingProperty> = []
        private var threads: Set<pthread_t> = []
        func note(_ property: VoiceProcessingProperty) {
            lock.withLock {
                properties.insert(property)
                threads.insert(pthread_self())
            }
        }
        var values: (properties: Set<VoiceProcessingProperty>, threads: Set<pthread_t>) {
            lock.withLock { (properties, threads) }
        }
    }

    @Test("a render callback sets every property: no lock, no allocation; listeners hear them elsewhere")
    func propertiesFromTheRealTimeThread() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .virtual
        let room = try SimulatedRoom(configuration: configuration)
        let unit = try VoiceProcessingIO(device: room, voiceFormat: try .voice(sampleRate: 16000))
        let toggler = PropertyToggler(unit: unit)
        unit.setRenderCallback { toggler.render($0) }
        let heard = Heard()
        unit.addListener { heard.note($0) }
        try unit.start()
        defer { unit.stop() }
        try room.run(periods: 20)
        unit.waitForListeners()

        alloc_counter_start()
        lock_counter_start()
        try room.run(periods: 100)
        let locks = lock_counter_stop()
        let allocations = alloc_counter_stop()
        unit.waitForListeners()

        toggler.misbehaves = true
        alloc_counter_start()
        lock_counter_start()
        try room.run(periods: 10)
        let controlLocks = lock_counter_stop()
        let controlAllocations = alloc_counter_stop()

        #expect(toggler.periods == 130)
        #expect(allocations == 0, "allocations in 100 periods setting properties: \(allocations)")
        #expect(controlAllocations >= 10, "the control's malloc in 10 periods must be counted")
        if LockCounting.isActive {
            #expect(locks == 0, "lock operations in 100 periods setting properties: \(locks)")
            #expect(controlLocks >= 10, "the control's NSLock in 10 periods must be counted")
        }
        let (properties, threads) = heard.values
        #expect(properties == [.bypassVoiceProcessing, .enableAGC, .duckOthers, .duckingLevel, .duckingMode,
                               .muteOutput])
        #expect(!threads.contains(pthread_self()), "listeners run on their own queue, not the device thread")
    }

    /// Where locks are not counted (under the sanitizers) there is nothing to see: the test returns at once, named for
    /// `scripts/test`'s uninstrumented run (`LockCounting`).
    @Test("the lock counter sees a contended Synchronization.Mutex (its futex) and a pthread mutex")
    func lockCounterCountsMutexes() throws {
        guard LockCounting.isActive else { return }
        let mutex = Mutex<Int>(0)
        let held = DispatchSemaphore(value: 0)
        let holder = Thread {
            mutex.withLock { value in
                held.signal()
                usleep(50_000)
                value += 1
            }
        }
        holder.start()
        held.wait()
        lock_counter_start()
        mutex.withLock { $0 += 1 }
        let contended = lock_counter_stop()
        #expect(contended >= 1, "a contended Mutex waits in a futex")

        var plain = pthread_mutex_t()
        pthread_mutex_init(&plain, nil)
        lock_counter_start()
        pthread_mutex_lock(&plain)
        pthread_mutex_unlock(&plain)
        let pthreadLocks = lock_counter_stop()
        pthread_mutex_destroy(&plain)
        #expect(pthreadLocks == 1)
        #expect(mutex.withLock { $0 } == 2)
    }
}
