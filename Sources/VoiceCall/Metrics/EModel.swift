#if canImport(Glibc)
import Glibc
#endif

/// The ITU-T G.107 E-model (06/2015): the transmission rating factor R of a connection, and the conversational
/// MOS it predicts, from its one-way delay, packet loss and codec, every other parameter at G.107's defaults
/// (Table 3: SLR 8, RLR 2, STMR 15, LSTR 18, Ds = Dr = 3, TELR 65 dB, WEPL 110 dB, Nc -70 dBm0p, Ps = Pr = 35,
/// qdu 1, A 0), which give R = 93.2. The delays follow G.107's planning simplification for a connection with
/// echo control: mean one-way delay T = absolute delay Ta = the measured mouth-to-ear delay, round trip Tr = 2T.
/// As PJSIP's RTCP-XR VoIP metrics block reports R and MOS-CQ, the call's report gives both.
///
/// Codec: `Codec.opus` uses Ie = 0 and Bpl = 25.1. Our assumption, not an ITU value: G.113 lists no Ie/Bpl for
/// Opus on the narrowband scale, Opus at the bit rates we use (≥ 16 kbit/s, wideband) is at least as good as
/// G.711 (Ie 0), and its loss concealment is taken to be as robust as G.711 with PLC (G.113 Appendix I: Bpl 25.1).
public struct EModel: Sendable, Hashable, Codable {
    /// The equipment impairment factor Ie and packet-loss robustness factor Bpl of a codec.
    public struct Codec: Sendable, Hashable, Codable {
        public var equipmentImpairment: Double
        public var packetLossRobustness: Double

        public init(equipmentImpairment: Double, packetLossRobustness: Double) {
            self.equipmentImpairment = equipmentImpairment
            self.packetLossRobustness = packetLossRobustness
        }

        /// G.711 with packet loss concealment (G.113 Appendix I: Ie 0, Bpl 25.1).
        public static let g711WithPLC = Codec(equipmentImpairment: 0, packetLossRobustness: 25.1)
        /// G.711 without concealment (G.113 Appendix I: Ie 0, Bpl 4.3; G.107's default Bpl).
        public static let g711 = Codec(equipmentImpairment: 0, packetLossRobustness: 4.3)
        /// Opus: our assumption (see `EModel`).
        public static let opus = Codec(equipmentImpairment: 0, packetLossRobustness: 25.1)
    }

    /// Mouth-to-ear delay, in milliseconds.
    public var oneWayDelayMilliseconds: Double
    /// Packets lost (after concealment's chance, before it), in percent.
    public var packetLossPercent: Double
    /// Burst ratio (G.107 BurstR): 1 for random loss, above 1 for bursty loss.
    public var burstRatio: Double
    public var codec: Codec

    public init(oneWayDelayMilliseconds: Double, packetLossPercent: Double = 0, burstRatio: Double = 1,
                codec: Codec = .opus) {
        self.oneWayDelayMilliseconds = oneWayDelayMilliseconds
        self.packetLossPercent = packetLossPercent
        self.burstRatio = burstRatio
        self.codec = codec
    }

    /// The transmission rating factor R (0 ... about 93; G.107 default 93.2).
    public var rFactor: Double {
        let (slr, rlr, stmr, lstr, ds, telr, wepl) = (8.0, 2.0, 15.0, 18.0, 3.0, 65.0, 110.0)
        let (nc, ps, pr, nfor, qdu, advantage) = (-70.0, 35.0, 35.0, -64.0, 1.0, 0.0)
        let t = max(oneWayDelayMilliseconds, 0), ta = t, tr = 2 * t
        let olr = slr + rlr
        // Basic signal-to-noise ratio Ro.
        let nos = ps - slr - ds - 100 + 0.004 * pow(ps - olr - ds - 14, 2)
        let pre = pr + 10 * log10(1 + pow(10, (10 - lstr) / 10))
        let nor = rlr - 121 + pre + 0.008 * pow(pre - 35, 2)
        let nfo = nfor + rlr
        let no = 10 * log10(pow(10, nc / 10) + pow(10, nos / 10) + pow(10, nor / 10) + pow(10, nfo / 10))
        let ro = 15 - 1.5 * (slr + no)
        // Simultaneous impairments Is.
        let xolr = olr + 0.2 * (64 + no - rlr)
        let iolr = 20 * (pow(1 + pow(xolr / 8, 8), 1.0 / 8) - xolr / 8)
        let stmro = -10 * log10(pow(10, -stmr / 10) + exp(-t / 4) * pow(10, -telr / 10))
        let ist = 12 * pow(1 + pow((stmro - 13) / 6, 8), 1.0 / 8) - 28 * pow(1 + pow((stmro + 1) / 19.4, 35), 1.0 / 35)
            - 13 * pow(1 + pow((stmro - 3) / 33, 13), 1.0 / 13) + 29
        let q = 37 - 15 * log10(qdu)
        let g = 1.07 + 0.258 * q + 0.0602 * q * q
        let iq = 15 * log10(1 + pow(10, (ro - 100) / 15 + 46 / 8.4 - g / 9) + pow(10, 46.0 / 30 - g / 40))
        let simultaneous = iolr + ist + iq
        // Delay impairments Id: talker echo, listener echo, absolute delay.
        let terv = telr - 40 * log10((1 + t / 10) / (1 + t / 150)) + 6 * exp(-0.3 * t * t)
        let roe = -1.5 * (no - rlr)
        let re = 80 + 2.5 * (terv - 14)
        let idte = ((roe - re) / 2 + ((roe - re) * (roe - re) / 4 + 100).squareRoot() - 1) * (1 - exp(-t))
        let rle = 10.5 * (wepl + 7) * pow(tr + 1, -0.25)
        let idle = (ro - rle) / 2 + ((ro - rle) * (ro - rle) / 4 + 169).squareRoot()
        var idd = 0.0
        if ta > 100 {
            let x = log10(ta / 100) / log10(2)
            idd = 25 * (pow(1 + pow(x, 6), 1.0 / 6) - 3 * pow(1 + pow(x / 3, 6), 1.0 / 6) + 2)
        }
        // Effective equipment impairment with packet loss.
        let ppl = min(max(packetLossPercent, 0), 100)
        let ie = codec.equipmentImpairment
        let ieEffective = ie + (95 - ie) * ppl / (ppl / max(burstRatio, 1e-9) + codec.packetLossRobustness)
        return ro - simultaneous - (idte + idle + idd) - ieEffective + advantage
    }

    /// The conversational MOS (1 ... 4.5) G.107 Annex B derives from `rFactor`.
    public var meanOpinionScore: Double { Self.meanOpinionScore(rFactor: rFactor) }

    public static func meanOpinionScore(rFactor r: Double) -> Double {
        if r <= 0 { return 1 }
        if r >= 100 { return 4.5 }
        return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6
    }
}
