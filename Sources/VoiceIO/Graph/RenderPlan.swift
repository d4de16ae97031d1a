import Synchronization

/// A graph's connections frozen for the real-time thread: nodes in rendering order (sources first) and, for each,
/// where its input buses read from. Built and freed off the real-time thread; immutable once built.
final class RenderPlan {
    struct Step {
        let node: AudioNode
        /// This node's input pointers: `inputTable[inputStart ..< inputStart + node.inputBusCount]`.
        let inputStart: Int
    }

    /// Unsafe storage, not an array: iterating an array goes through a coroutine that allocates unoptimised.
    let steps: UnsafeMutableBufferPointer<Step>
    /// Every step's input pointers, one after another; nil is a silent bus.
    let inputTable: UnsafeMutableBufferPointer<UnsafePointer<Float>?>
    /// What reaches the sink (interleaved, `sinkFormat.channelCount` samples a frame); nil when unconnected.
    let sinkInput: UnsafePointer<Float>?
    let sinkFormat: StreamFormat

    /// `order`: nodes reachable from the sink, sources first. `sourceOf` gives each (node, bus)'s source.
    init(order: [AudioNode], sink: AudioNode, sourceOf: (AudioNode, Int) -> AudioNode?) {
        let inputCount = order.reduce(0) { $0 + $1.inputBusCount }
        inputTable = .allocate(capacity: max(inputCount, 1))
        inputTable.initialize(repeating: nil)
        var steps: [Step] = []
        var start = 0
        for node in order {
            for bus in 0..<node.inputBusCount {
                inputTable[start + bus] = sourceOf(node, bus).map { UnsafePointer($0.output.baseAddress!) }
            }
            steps.append(Step(node: node, inputStart: start))
            start += node.inputBusCount
        }
        self.steps = .allocate(capacity: steps.count)
        _ = self.steps.initialize(from: steps)
        sinkInput = sourceOf(sink, 0).map { UnsafePointer($0.output.baseAddress!) }
        sinkFormat = sink.inputFormat(bus: 0)
    }

    deinit {
        inputTable.deallocate()
        steps.deinitialize()
        steps.deallocate()
    }

    /// Renders every node for one slice. Real-time safe.
    func render(frameCount: Int, sampleTime: Int) {
        for index in 0..<steps.count {
            let step = steps[index]
            let inputs = UnsafeBufferPointer(rebasing: inputTable[step.inputStart..<(step.inputStart + step.node.inputBusCount)])
            step.node.render(inputs: inputs, frameCount: frameCount, sampleTime: sampleTime)
        }
    }
}

/// Hands render plans from the controlling thread to the real-time thread without a lock or an allocation there:
/// the control side publishes a retained plan through an atomic; the real-time side adopts it at the start of a
/// slice (a period boundary) and hands the plan it replaced back through a ring, which the control side releases.
final class PlanExchange: @unchecked Sendable {
    /// An `Unmanaged<RenderPlan>` bit pattern (retained), or 0.
    private let pending = Atomic<UInt>(0)
    /// Plans the real-time thread stopped using (retained bit patterns).
    private let retired = SPSCRing<UInt>(minimumCapacity: 16, filledWith: 0)
    /// Real-time side only (or the control side while nothing renders): the plan in use, retained, or 0.
    private var current: UInt = 0

    deinit {
        reclaim()
        release(pending.exchange(0, ordering: .acquiringAndReleasing))
        release(current)
    }

    /// Queues `plan` for the next slice; a plan queued earlier and never adopted is dropped. Releases plans the
    /// real-time thread retired. Not real-time safe.
    func publish(_ plan: RenderPlan) {
        reclaim()
        let bits = UInt(bitPattern: Unmanaged.passRetained(plan).toOpaque())
        release(pending.exchange(bits, ordering: .acquiringAndReleasing))
    }

    /// Releases the plans the real-time thread has finished with. Not real-time safe.
    func reclaim() {
        var bits: UInt = 0
        while withUnsafeMutablePointer(to: &bits, { retired.read(into: UnsafeMutableBufferPointer(start: $0, count: 1)) }) == 1 {
            release(bits)
        }
    }

    /// Adopts a pending plan, if any, and returns the plan to render with (nil when there is none). Real-time
    /// safe: no closure, so nothing is boxed even unoptimised.
    @inline(__always)
    func adoptPlan() -> RenderPlan? {
        let next = pending.exchange(0, ordering: .acquiringAndReleasing)
        if next != 0 {
            if current != 0 {
                var old = current
                // The ring holds 16; the control side drains it before every publish, so it never fills.
                _ = withUnsafePointer(to: &old) { retired.write(UnsafeBufferPointer(start: $0, count: 1)) }
            }
            current = next
        }
        guard current != 0 else { return nil }
        return Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).takeUnretainedValue()
    }

    private func release(_ bits: UInt) {
        guard bits != 0 else { return }
        Unmanaged<RenderPlan>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
    }
}
