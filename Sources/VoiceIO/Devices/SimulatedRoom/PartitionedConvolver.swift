/// Convolves a stream with a long impulse response by uniformly partitioned overlap-save in the frequency
/// domain: the response is cut into blocks of `partitionFrames`, each block's spectrum multiplies the spectrum
/// of the matching past input block. Cost per frame grows with the response length over the partition size
/// instead of the response length itself (a 500 ms tail at 48 kHz costs about 1 % of a direct FIR).
///
/// Adds exactly `partitionFrames` of latency. `process` is real-time safe; one thread.
final class PartitionedConvolver {
    let partitionFrames: Int
    let partitionCount: Int
    private let fftSize: Int
    private let fft: FFT
    /// Spectra of the response partitions, bins 0...fftSize/2, partition-major.
    private let responseRe: UnsafeMutablePointer<Float>
    private let responseIm: UnsafeMutablePointer<Float>
    /// Spectra of the last `partitionCount` input blocks (a ring, newest at `newestSlot`).
    private let historyRe: UnsafeMutablePointer<Float>
    private let historyIm: UnsafeMutablePointer<Float>
    private var newestSlot = 0
    private let workRe: UnsafeMutablePointer<Float>
    private let workIm: UnsafeMutablePointer<Float>
    /// The last two input blocks, time domain.
    private let window: UnsafeMutablePointer<Float>
    private var windowFill = 0
    private let outputQueue: SPSCRing<Float>
    private let binCount: Int

    /// Not real-time safe.
    init(impulseResponse: [Float], partitionFrames: Int = 256) {
        self.partitionFrames = partitionFrames
        fftSize = 2 * partitionFrames
        binCount = partitionFrames + 1
        partitionCount = max((impulseResponse.count + partitionFrames - 1) / partitionFrames, 1)
        fft = FFT(size: fftSize)
        responseRe = .allocate(capacity: partitionCount * binCount)
        responseIm = .allocate(capacity: partitionCount * binCount)
        historyRe = .allocate(capacity: partitionCount * binCount)
        historyIm = .allocate(capacity: partitionCount * binCount)
        historyRe.initialize(repeating: 0, count: partitionCount * binCount)
        historyIm.initialize(repeating: 0, count: partitionCount * binCount)
        workRe = .allocate(capacity: fftSize)
        workIm = .allocate(capacity: fftSize)
        window = .allocate(capacity: fftSize)
        window.initialize(repeating: 0, count: fftSize)
        outputQueue = SPSCRing(minimumCapacity: 8 * partitionFrames + 8192, filledWith: 0)
        for partition in 0..<partitionCount {
            workRe.initialize(repeating: 0, count: fftSize)
            workIm.initialize(repeating: 0, count: fftSize)
            for index in 0..<partitionFrames {
                let source = partition * partitionFrames + index
                if source < impulseResponse.count { workRe[index] = impulseResponse[source] }
            }
            fft.forward(real: workRe, imaginary: workIm)
            (responseRe + partition * binCount).initialize(from: workRe, count: binCount)
            (responseIm + partition * binCount).initialize(from: workIm, count: binCount)
        }
        let silence = [Float](repeating: 0, count: partitionFrames)
        silence.withUnsafeBufferPointer { _ = outputQueue.write($0) }
    }

    deinit {
        for pointer in [responseRe, responseIm, historyRe, historyIm, workRe, workIm, window] { pointer.deallocate() }
    }

    /// Convolves `input` into `output` (same count, at most a few thousand frames per call). Real-time safe.
    func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) {
        for sample in input {
            window[partitionFrames + windowFill] = sample
            windowFill += 1
            if windowFill == partitionFrames {
                processBlock()
                windowFill = 0
            }
        }
        let read = outputQueue.read(into: output)
        if read < output.count { output.baseAddress!.advanced(by: read).update(repeating: 0, count: output.count - read) }
    }

    private func processBlock() {
        workRe.update(from: window, count: fftSize)
        workIm.update(repeating: 0, count: fftSize)
        fft.forward(real: workRe, imaginary: workIm)
        newestSlot = (newestSlot + 1) % partitionCount
        (historyRe + newestSlot * binCount).update(from: workRe, count: binCount)
        (historyIm + newestSlot * binCount).update(from: workIm, count: binCount)
        workRe.update(repeating: 0, count: fftSize)
        workIm.update(repeating: 0, count: fftSize)
        for partition in 0..<partitionCount {
            let slot = (newestSlot - partition + partitionCount) % partitionCount
            let hRe = responseRe + partition * binCount, hIm = responseIm + partition * binCount
            let xRe = historyRe + slot * binCount, xIm = historyIm + slot * binCount
            for bin in 0..<binCount {
                workRe[bin] += xRe[bin] * hRe[bin] - xIm[bin] * hIm[bin]
                workIm[bin] += xRe[bin] * hIm[bin] + xIm[bin] * hRe[bin]
            }
        }
        // Real input and response: the upper half is the mirror image.
        for bin in 1..<partitionFrames {
            workRe[fftSize - bin] = workRe[bin]
            workIm[fftSize - bin] = -workIm[bin]
        }
        fft.inverse(real: workRe, imaginary: workIm)
        outputQueue.write(UnsafeBufferPointer(start: workRe + partitionFrames, count: partitionFrames))
        window.update(from: window + partitionFrames, count: partitionFrames)
    }
}
