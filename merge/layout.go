package merge

// gEventSize is the size of a GEvent: two cache lines. Every event is
// copied several times on its way (a rank's batch, the windowed merge,
// each AsyncSink's or SharedAsync's batch) and, with thousands of ranks, read where it
// is cold. In an array that starts on a cache line (Go places the
// arrays of these sizes at multiples of 64 bytes) each event then takes
// exactly two lines, the two prefetchEvent asks for; at 136 bytes it
// took three, and the third was a miss.
const gEventSize = 128
