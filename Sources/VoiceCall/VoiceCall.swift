// The call layer (Opus codec, RTP/RTCP, jitter buffer, session) lands here; see ../shared/DESIGN.md.
