import CAllocCounter
import VoiceIO

/// Runs an `EchoPipeline` over whole recordings block by block and counts what its `process` calls allocate and lock,
/// for the tests that prove one of its paths real-time safe.
enum PipelineRealTimeSupport {
    /// Processes `microphone` against `reference` (the same length) in the pipeline's blocks, counting from the block
    /// that starts at `countingFrom` to the end; `beforeCounting` is called once just before the counters start.
    /// Returns the allocations and the lock operations counted (no locks are counted while lock counting is off, as
    /// under the sanitizers: see `LockCounting`).
    static func count(_ pipeline: EchoPipeline, microphone: [Float], reference: [Float], countingFrom: Int,
                      beforeCounting: (EchoPipeline) -> Void = { _ in }) -> (allocations: UInt64, locks: UInt64) {
        let block = pipeline.blockFrameCount
        var output = [Float](repeating: 0, count: block)
        var counted = (allocations: UInt64(0), locks: UInt64(0))
        microphone.withUnsafeBufferPointer { microphone in
            reference.withUnsafeBufferPointer { reference in
                output.withUnsafeMutableBufferPointer { output in
                    for start in stride(from: 0, through: microphone.count - block, by: block) {
                        let frames = start..<(start + block)
                        if start == countingFrom {
                            beforeCounting(pipeline)
                            alloc_counter_start()
                            lock_counter_start()
                        }
                        _ = pipeline.process(microphone: UnsafeBufferPointer(rebasing: microphone[frames]),
                                             reference: UnsafeBufferPointer(rebasing: reference[frames]), output: output)
                    }
                    counted.locks = lock_counter_stop()
                    counted.allocations = alloc_counter_stop()
                }
            }
        }
        return counted
    }
}
