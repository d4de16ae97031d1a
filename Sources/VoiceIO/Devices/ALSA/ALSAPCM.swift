import CALSA
import Glibc

/// One opened ALSA PCM (`snd_pcm_t`), owned once: opened non-blocking by name in `init`, closed in `deinit`.
///
/// `configure` negotiates hardware and software parameters (not real-time safe). The transfer, state and poll
/// methods are thin wrappers meant for the I/O thread: they return alsa-lib's result (negative errno on failure)
/// rather than throwing, and allocate nothing themselves (plugins may still do so while recovering).
public final class ALSAPCM: @unchecked Sendable {
    public let name: String
    public let direction: ALSADirection
    let handle: OpaquePointer

    /// Opens the PCM `name` (`default`, `hw:X,Y`, `plughw:X,Y`, or any PCM the configuration defines) for
    /// `direction`. With `config`, the name is looked up in that tree only; otherwise in the global configuration.
    public init(name: String, direction: ALSADirection, config: ALSAConfig? = nil) throws(ALSAError) {
        var pcm: OpaquePointer?
        let result = if let config {
            snd_pcm_open_lconf(&pcm, name, direction.stream, SND_PCM_NONBLOCK, config.handle)
        } else {
            snd_pcm_open(&pcm, name, direction.stream, SND_PCM_NONBLOCK)
        }
        try alsaCheck(result, "open \(direction.rawValue) PCM", deviceName: name)
        guard let pcm else { throw ALSAError("open \(direction.rawValue) PCM", deviceName: name, code: -2) }
        self.name = name
        self.direction = direction
        handle = pcm
    }

    deinit { snd_pcm_close(handle) }

    /// Negotiates interleaved access, sample type, channels, rate, period and buffer, then sets the software
    /// parameters so the stream starts only on an explicit `start`. Returns what the PCM gave. Not real-time safe.
    public func configure(_ request: ALSAHardwareRequest) throws(ALSAError) -> ALSAStreamSettings {
        guard UInt32(exactly: request.sampleRate) != nil, request.periodFrames >= 0, request.bufferFrames >= 0 else {
            throw ALSAError("ask for \(request.sampleRate) Hz, \(request.periodFrames)-frame periods", deviceName: name,
                            code: -22)
        }
        var hwParams: OpaquePointer?
        try check(snd_pcm_hw_params_malloc(&hwParams), "allocate hardware parameters")
        guard let hw = hwParams else { throw ALSAError("allocate hardware parameters", deviceName: name, code: -12) }
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(handle, hw), "read the hardware configuration space")
        try check(snd_pcm_hw_params_set_access(handle, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "use interleaved access")
        guard let sampleType = request.sampleTypes.first(where: { snd_pcm_hw_params_test_format(handle, hw, $0.alsaFormat) == 0 })
        else {
            let names = request.sampleTypes.map { String(cString: snd_pcm_format_name($0.alsaFormat)) }
            throw ALSAError("use sample format \(names.joined(separator: " or "))", deviceName: name, code: -22)
        }
        try check(snd_pcm_hw_params_set_format(handle, hw, sampleType.alsaFormat), "set the sample format")
        guard let channels = request.channelCounts.first(where: { snd_pcm_hw_params_test_channels(handle, hw, UInt32($0)) == 0 })
        else {
            let counts = request.channelCounts.map(String.init).joined(separator: " or ")
            throw ALSAError("use \(counts) channel(s)", deviceName: name, code: -22)
        }
        try check(snd_pcm_hw_params_set_channels(handle, hw, UInt32(channels)), "set \(channels) channel(s)")
        var rate = UInt32(request.sampleRate)
        if request.requiresExactRate {
            try check(snd_pcm_hw_params_set_rate(handle, hw, rate, 0), "run at \(rate) Hz like the other direction")
        } else {
            var rateDirection: Int32 = 0
            try check(snd_pcm_hw_params_set_rate_near(handle, hw, &rate, &rateDirection), "set a rate near \(rate) Hz")
        }
        var period = snd_pcm_uframes_t(request.periodFrames)
        var periodDirection: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(handle, hw, &period, &periodDirection),
                  "set a period near \(request.periodFrames) frames")
        var buffer = snd_pcm_uframes_t(max(request.bufferFrames, Int(period) * 2))
        try check(snd_pcm_hw_params_set_buffer_size_near(handle, hw, &buffer),
                  "set a buffer near \(request.bufferFrames) frames")
        try check(snd_pcm_hw_params(handle, hw), "apply the hardware parameters")
        try check(snd_pcm_hw_params_get_period_size(hw, &period, &periodDirection), "read the period size")
        try check(snd_pcm_hw_params_get_buffer_size(hw, &buffer), "read the buffer size")
        try applySoftwareParameters(periodFrames: period)
        let format: StreamFormat
        do {
            format = try StreamFormat(sampleRate: Int(rate), channelCount: channels, sampleType: sampleType)
        } catch {
            throw ALSAError("accept the rate \(rate) Hz", deviceName: name, code: -22)
        }
        return ALSAStreamSettings(deviceName: name, direction: direction, format: format,
                                  periodFrames: Int(period), bufferFrames: Int(buffer))
    }

    /// Start only on `start()` (threshold at the boundary), wake when a period is ready, stop on xrun.
    private func applySoftwareParameters(periodFrames: snd_pcm_uframes_t) throws(ALSAError) {
        var swParams: OpaquePointer?
        try check(snd_pcm_sw_params_malloc(&swParams), "allocate software parameters")
        guard let sw = swParams else { throw ALSAError("allocate software parameters", deviceName: name, code: -12) }
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(handle, sw), "read the software parameters")
        var boundary: snd_pcm_uframes_t = 0
        try check(snd_pcm_sw_params_get_boundary(sw, &boundary), "read the boundary")
        try check(snd_pcm_sw_params_set_start_threshold(handle, sw, boundary), "set the start threshold")
        try check(snd_pcm_sw_params_set_avail_min(handle, sw, periodFrames), "set the wake-up threshold")
        try check(snd_pcm_sw_params(handle, sw), "apply the software parameters")
    }

    private func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(ALSAError) {
        try alsaCheck(result, operation(), deviceName: name)
    }

    // MARK: Real-time wrappers (return alsa-lib's result; negative is -errno)

    /// Links this PCM's start/stop/prepare to `other`'s; false when the plugins cannot. Not real-time safe.
    func link(to other: ALSAPCM) -> Bool { snd_pcm_link(handle, other.handle) == 0 }
    /// Undoes `link`. Not real-time safe.
    func unlink() { _ = snd_pcm_unlink(handle) }

    @inline(__always) func prepare() -> Int32 { snd_pcm_prepare(handle) }
    @inline(__always) func start() -> Int32 { snd_pcm_start(handle) }
    @inline(__always) func drop() -> Int32 { snd_pcm_drop(handle) }
    @inline(__always) func state() -> snd_pcm_state_t { snd_pcm_state(handle) }
    /// Frames ready to read (capture) or room to write (playback), or a negative error (e.g. -EPIPE on xrun).
    @inline(__always) func availableFrames() -> Int { snd_pcm_avail_update(handle) }
    /// Recovers from -EPIPE (xrun), -ESTRPIPE (suspend) or -EINTR; returns 0 or the unrecoverable error.
    @inline(__always) func recover(from error: Int32) -> Int32 { snd_pcm_recover(handle, error, 1) }

    /// Reads up to `frameCount` interleaved frames; returns frames read or a negative error.
    @inline(__always) func read(into buffer: UnsafeMutableRawPointer, frameCount: Int) -> Int {
        snd_pcm_readi(handle, buffer, snd_pcm_uframes_t(frameCount))
    }

    /// Writes up to `frameCount` interleaved frames; returns frames written or a negative error.
    @inline(__always) func write(_ buffer: UnsafeRawPointer, frameCount: Int) -> Int {
        snd_pcm_writei(handle, buffer, snd_pcm_uframes_t(frameCount))
    }

    /// Frames between the application pointer and the hardware (playback: queued; capture: not yet read).
    @inline(__always) func delayFrames() -> Int? {
        var delay: snd_pcm_sframes_t = 0
        return snd_pcm_delay(handle, &delay) == 0 ? delay : nil
    }

    /// How many poll descriptors this PCM needs. Not real-time safe (call before starting).
    func pollDescriptorCount() -> Int { Int(max(snd_pcm_poll_descriptors_count(handle), 0)) }

    /// Fills `descriptors` with this PCM's poll descriptors; returns how many.
    func fillPollDescriptors(_ descriptors: UnsafeMutableBufferPointer<pollfd>) -> Int {
        Int(max(snd_pcm_poll_descriptors(handle, descriptors.baseAddress, UInt32(descriptors.count)), 0))
    }

    /// Translates the raw poll results of this PCM's descriptors into POLLIN/POLLOUT/POLLERR.
    @inline(__always) func pollEvents(_ descriptors: UnsafeMutableBufferPointer<pollfd>) -> UInt16 {
        var events: UInt16 = 0
        return snd_pcm_poll_descriptors_revents(handle, descriptors.baseAddress, UInt32(descriptors.count), &events) < 0
            ? UInt16(POLLERR) : events
    }
}
